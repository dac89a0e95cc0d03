"""A forked child leaves the objects it inherited out of the garbage collector's walks
(`services.forked`): its collections walk its own objects only."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from workbench.services import forked


def test_a_child_is_named_as_module_and_function():
    with pytest.raises(ValueError, match="expected 'module:function'"):
        forked.fork("tests.forked_mains.report_collector", os.environ)


def test_a_child_of_the_fork_server_walks_only_its_own_objects():
    child = forked.fork("tests.forked_mains:report_collector", os.environ)
    try:
        assert child.stdout is not None
        found = json.loads(child.stdout.readline())
    finally:
        assert child.wait(60) == 0
    assert found["frozen"] > 10_000, found  # the fork server's imports, at least
    assert found["walked"] < 5_000, found


APART = """
import gc, json
import workbench.reports.pipeline  # a report's process, before it forks its sections
from workbench.services import forked
print(json.dumps([len(gc.get_objects()),
                  forked.compute_apart(lambda: (gc.get_freeze_count(),
                                                len(gc.get_objects()))).result()]))
"""


def test_a_child_computing_apart_walks_only_its_own_objects():
    done = subprocess.run(
        [sys.executable, "-c", APART], capture_output=True, text=True, check=True, timeout=120
    )
    here, (frozen, walked) = json.loads(done.stdout)
    assert frozen >= here > 50_000
    assert walked < 5_000
