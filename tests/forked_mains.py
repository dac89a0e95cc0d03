"""Mains of children forked by `workbench.services.forked.fork` in the tests: a module that
imports nothing beyond the standard library, so that a child importing it (the fork server
started earlier without it) adds few objects of its own."""

from __future__ import annotations

import gc
import json


def report_collector() -> None:
    """Print what the collector walks in this child and what it leaves frozen."""
    print(json.dumps({"frozen": gc.get_freeze_count(), "walked": len(gc.get_objects())}))
