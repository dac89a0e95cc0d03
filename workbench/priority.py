"""CPU priority of batch work: imports and report jobs run behind the web server's requests.

On a machine that also serves assessors, an import or a report computed at the priority of the
server's workers takes its share of every core, and each judgement waits for a CPU (on 2 cores
a 1 GB document import gave judgements a median latency of 150-260 ms). Batch work therefore
lowers its own priority by BATCH_NICE (Unix `nice`: the scheduler runs it when the requests
leave a core idle). A process cannot raise its priority again without privileges, so only
processes that do nothing else (the report-job child, `workbench import`) call this.
"""

from __future__ import annotations

import contextlib
import os

BATCH_NICE = 10
"""How much lower than the web server batch work runs (the nice increment)."""


def run_as_batch() -> None:
    """Add BATCH_NICE to this process's nice value; where the system has no `nice` or refuses
    it, the priority stays as it was."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(BATCH_NICE)
