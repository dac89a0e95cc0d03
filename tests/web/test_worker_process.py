"""A production worker's start (`workbench.web.wsgi`, `web.worker_process`): the objects it
made are frozen out of the garbage collector's walks, so a full collection during a request
walks only what requests made since."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workbench.store.db import ENV_VAR
from workbench.web import INSTANCE_ENV

WORKER = """
import gc, json, time
import workbench.web.wsgi as wsgi
tracked = {id(o) for o in gc.get_objects()}
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "tracked": len(tracked),
    "app_tracked": id(wsgi.app) in tracked,
    "app_extensions_tracked": id(wsgi.app.extensions) in tracked,
}))
"""


def test_a_workers_start_is_frozen_out_of_the_collectors_walks(
    database_url: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        ENV_VAR: database_url,
        INSTANCE_ENV: str(tmp_path / "instance"),
        "WORKBENCH_SECRET_KEY": "worker-process-test-" * 3,
    }
    done = subprocess.run(
        [sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # the modules, the app and matplotlib: over a hundred thousand objects, frozen
    assert seen["frozen"] > 100_000, seen
    # what a full collection still walks is a small part of it
    assert seen["tracked"] < seen["frozen"] / 10, seen
    assert not seen["app_tracked"] and not seen["app_extensions_tracked"], seen
