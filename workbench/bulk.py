"""Python's cyclic garbage collector paused while bulk work builds many small objects.

Building a pool creates a tuple per pooled document (274,000 for W-adhoc's depth-100 pool),
and every 700 new container objects start a collection that walks the young ones, and
in time the whole heap: 0.7 s of the 2.9 s of CPU of W-adhoc's pool
(benchmarks/bench_import_pool.py). Such work creates no reference cycles, so the
collector finds nothing; memory is still freed by reference counting as usual. Paused
collections resume at the end: a cycle made meanwhile (by this thread or another) is
collected then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_guard = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; nested and concurrent blocks (threads) share
    one pause, which ends with the last of them (and only if it was on before the first)."""
    global _holders, _was_enabled
    with _guard:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _guard:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()


def skip_exit_collections() -> None:
    """Before a command's process ends: every object out of the collector's reach
    (`gc.freeze`), so that the interpreter's final collections (at exit, Python collects
    while it tears its modules down) have nothing to walk. They walked everything the
    imported libraries hold, 80,000 objects and more: 0.4-0.6 s of every `workbench`
    command on the 2-core machine, after its work was done. Objects are still freed by
    reference counting; cycles among them are left to the operating system, so call it only
    once the command has released what it opened (its store is disposed when its click
    context closes, `cli.common.get_store`). (Skipping the exit collections as in
    "Dismissing Python Garbage Collection at Instagram", Instagram Engineering, 2017.)"""
    gc.freeze()
