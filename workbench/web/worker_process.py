"""What a production server's worker process does at its start, before and after it builds
the app (`workbench.web.wsgi`): follow its parent's death, give threads the interpreter lock
in short turns, import the plotting library, and keep the objects of its start out of the
garbage collector's walks."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time

PARENT_CHECK_S = 0.5
EXIT_GRACE_S = 5.0
SWITCH_INTERVAL_S = 0.0001
"""How long a thread that computes keeps the interpreter lock while another waits for it.
Python's default, 5 ms, is paid again after every database call or socket read of a
judgement that shares its worker with a long request (an admin's page or download): with the
default, judgements had a median latency of 58 ms while an admin page was open, 9 ms with
0.1 ms (benchmarks/load, 300 judgements/s), at no loss of throughput."""


def exit_with_parent(parent: int) -> None:
    """Watch the process that started this worker; when it dies (even by SIGKILL, which it
    cannot forward) the worker is re-parented, and it then stops itself: SIGTERM, and after
    EXIT_GRACE_S an immediate exit. Committed judgements are durable either way."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(EXIT_GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def before_app() -> None:
    """The worker's start, before the app: exit with the parent, short lock turns, and
    matplotlib imported now rather than inside the first admin page that draws a plot (0.5 s
    of CPU in the process that also answers the assessors' judgements)."""
    exit_with_parent(os.getppid())
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401


def freeze_startup_objects() -> None:
    """After the app is built: one collection, then the objects of the worker's start
    (modules, the app, matplotlib: about 230,000) out of the garbage collector's reach
    (`gc.freeze`). Unfrozen, every full collection walked all of them, 0.2-0.3 s with the
    interpreter lock held on the 2-core machine, paid by whichever request's allocations set
    it off while the worker's other threads waited. At TREC size the state requests of
    2,650-document topics set them off: the slowest of ten judges' first states 305-310 ms,
    94 ms frozen (benchmarks/scale/judging_cost.py, --no-freeze against the default); the
    crowd's p99 over the measured minute 603 and 779 ms before, 247 and 305 ms after on
    SQLite, 416 against 260 ms on PostgreSQL (benchmarks/scale/run_scale.py, alternating
    runs). Frozen objects are still freed when nothing refers to them; only cycles among them
    stay, and a worker keeps the objects of its start until it exits. (`gc.freeze` as
    Python's documentation describes it; the pauses as in "Dismissing Python Garbage
    Collection at Instagram", Instagram Engineering, 2017.)"""
    gc.collect()
    gc.freeze()
