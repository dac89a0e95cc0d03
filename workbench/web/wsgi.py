"""The WSGI entry point for production servers: `workbench.web.wsgi:app`.

Each worker process builds the app from the environment: the store at
$WORKBENCH_DATABASE_URL (default: SQLite in the instance folder) and the instance folder
$WORKBENCH_INSTANCE_PATH (default: ./instance), which holds the generated secret key unless
$WORKBENCH_SECRET_KEY is set. `workbench serve` sets both before it starts the workers. What
the worker does around the app's build: `workbench.web.worker_process`.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.web import INSTANCE_ENV, create_app
from workbench.web.worker_process import before_app, freeze_startup_objects

before_app()
app = create_app({"INSTANCE_PATH": os.environ.get(INSTANCE_ENV) or str(Path.cwd() / "instance")})
freeze_startup_objects()
