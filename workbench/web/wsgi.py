"""The WSGI entry point for production servers: `workbench.web.wsgi:app`.

Each worker process builds the app from the environment: the store at
$WORKBENCH_DATABASE_URL (default: SQLite in the instance folder) and the instance folder
$WORKBENCH_INSTANCE_PATH (default: ./instance), which holds the generated secret key unless
$WORKBENCH_SECRET_KEY is set. `workbench serve` sets both before it starts the workers.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

from workbench.web import INSTANCE_ENV, create_app

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


def preload_plotting() -> None:
    """Import matplotlib at the worker's start rather than inside the first admin page that
    draws a plot: 0.5 s of CPU in the process that also answers the assessors' judgements."""
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401


exit_with_parent(os.getppid())
sys.setswitchinterval(SWITCH_INTERVAL_S)
preload_plotting()
app = create_app({"INSTANCE_PATH": os.environ.get(INSTANCE_ENV) or str(Path.cwd() / "instance")})
