"""CPU priority of batch work: imports and report jobs run behind the web server's requests.

On a machine that also serves assessors, an import or a report computed at the priority of the
server's workers takes its share of every core, and each judgement waits for a CPU (on 2 cores
a 1 GB document import gave judgements a median latency of 150-260 ms). Batch work therefore
lowers its own priority by BATCH_NICE (Unix `nice`: the scheduler runs it when the requests
leave a core idle). A process cannot raise its priority again without privileges, so only
processes that do nothing else (the report-job child, `workbench import`) lower theirs, and a
thread that does nothing else (the store's WAL checkpointer) its own.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

BATCH_NICE = 10
"""How much lower than the web server batch work runs (the nice increment)."""


def run_as_batch() -> None:
    """Add BATCH_NICE to this process's nice value; where the system has no `nice` or refuses
    it, the priority stays as it was."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(BATCH_NICE)


def run_thread_as_batch() -> None:
    """Add BATCH_NICE to the calling thread's nice value alone, where threads are scheduled on
    their own (Linux: each thread is a task with its own nice value); elsewhere nothing, as
    lowering the whole process would slow the requests it serves."""
    if not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):
        now = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(now + BATCH_NICE, 19))
