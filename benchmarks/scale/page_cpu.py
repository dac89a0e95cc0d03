"""The request CPU of admin pages on a store `run_scale.py` filled: each page loaded through
Flask's test client until its figures are current (no "figures-status" note; at most 180 s),
then 5 times; the median CPU time of a load is printed (and its median wall time, which on
PostgreSQL includes the server's work). CPU time, so that a shared machine's load matters
less than in `run_scale.py`'s first-byte figures. STORE is a SQLite file or a database URL.

    python benchmarks/scale/page_cpu.py copy.sqlite /admin/campaigns/1 /admin/campaigns/1/progress
    python benchmarks/scale/page_cpu.py postgresql+psycopg://postgres@HOST/scale /admin/users
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scale import PASSWORD


def main(argv: list[str]) -> None:
    from workbench.web import create_app

    store, paths = argv[0], argv[1:]
    app = create_app(
        {
            "DATABASE_URL": store if "://" in store else f"sqlite:///{store}",
            "SECRET_KEY": "page-cpu" * 4,
            "WTF_CSRF_ENABLED": False,
            "INSTANCE_PATH": tempfile.mkdtemp(),
        }
    )
    client = app.test_client()
    login = {"username": "scale-admin", "password": PASSWORD}
    assert client.post("/login", data=login).status_code == 302
    for path in paths:
        client.get(path)
        for _ in range(90):
            if b'id="figures-status"' not in client.get(path).data:
                break
            time.sleep(2)
        cpu, wall = [], []
        for _ in range(5):
            started, began = time.process_time(), time.perf_counter()
            client.get(path)
            cpu.append(time.process_time() - started)
            wall.append(time.perf_counter() - began)
        print(
            f"{path}: {statistics.median(cpu):.3f} s CPU, {statistics.median(wall):.3f} s wall"
            " (medians of 5)",
            flush=True,
        )


if __name__ == "__main__":  # the report jobs' fork server imports this module again
    main(sys.argv[1:])
