"""Time the admin pages on a copy of a scale store (`run_scale.py`; admin `scale-admin`).

    python benchmarks/scale/time_pages.py LABEL STORE.sqlite

For the campaign, progress and assignments pages: the first load (CPU of this process, the
request's, and wall), the wall time until the judging figures are current (their report job
runs in the report jobs' child process), the median of five loads after that, and one load
right after a judgement is recorded, not waiting for the update (the kept figures shown "as of
judgement N"). The store is copied next to it first and never written.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PATHS = ("/admin/campaigns/1", "/admin/campaigns/1/progress", "/admin/campaigns/1/assignments")
STALE = 'id="figures-status"'
TIMEOUT_S = 600.0


def main(label: str, store: str) -> None:
    from flask.testing import FlaskClient

    from workbench.web import create_app

    folder = Path(tempfile.mkdtemp(dir=Path(store).parent))
    copy = folder / "store.sqlite"
    shutil.copy(store, copy)
    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{copy}",
            "SECRET_KEY": "x" * 32,
            "WTF_CSRF_ENABLED": False,
            "INSTANCE_PATH": str(folder / "instance"),
        }
    )
    client: FlaskClient = app.test_client()
    login = {"username": "scale-admin", "password": "scale-password-1"}
    assert client.post("/login", data=login).status_code == 302

    def load(path: str) -> tuple[float, float, bool]:
        cpu, wall = time.process_time(), time.perf_counter()
        page = client.get(path)
        assert page.status_code == 200, path
        return time.process_time() - cpu, time.perf_counter() - wall, STALE not in page.text

    out: dict[str, dict[str, Any]] = {}
    for path in PATHS:
        first = load(path)
        start = time.perf_counter()
        while not load(path)[2]:
            assert time.perf_counter() - start < TIMEOUT_S, f"{path}: figures never current"
            time.sleep(0.5)
        current = time.perf_counter() - start
        loads = [load(path) for _ in range(5)]
        assert all(fresh for _, _, fresh in loads)
        out[path] = {
            "first cpu": round(first[0], 3),
            "first wall": round(first[1], 3),
            "job wall": round(current, 1),
            "cpu": round(statistics.median(cpu for cpu, _, _ in loads), 3),
            "wall": round(statistics.median(wall for _, wall, _ in loads), 3),
        }
    _judge_once(app)
    for path in PATHS:
        cpu, wall, fresh = load(path)
        out[path].update({"stale cpu": round(cpu, 3), "stale wall": round(wall, 3)})
        out[path]["stale view said so"] = not fresh
    print(label)
    for path, figures in out.items():
        print(" ", path, figures)
    shutil.rmtree(folder)


def _judge_once(app: Any) -> None:
    """Record one judgement (the first document of the first active assignment)."""
    from sqlalchemy import select

    from workbench.services import judging
    from workbench.services.assignments import documents_to_judge
    from workbench.store.models import Assignment
    from workbench.web.db import get_store

    with app.app_context():
        store = get_store()
        with store.read_session() as s:
            first = s.scalars(select(Assignment).where(Assignment.active.is_(True))).first()
            assert first is not None
            docno = min(documents_to_judge(s, [first])[first.id].shown)
            assignment, user = first.id, first.user_id
        with store.connection() as connection:
            judging.record_judgement(
                connection, assignment, user, judging.JudgementInput(docno, 1, None)
            )


if __name__ == "__main__":  # the report jobs' fork server imports this module again
    main(sys.argv[1], sys.argv[2])
