"""The request CPU of admin pages on a store `run_scale.py` filled: each page loaded through
Flask's test client until its figures are current (no "figures-status" note; at most 180 s),
then 5 times; the median CPU time of a load is printed. CPU time, not wall time, so that a
shared machine's load matters less than in `run_scale.py`'s first-byte figures.

    python benchmarks/scale/page_cpu.py copy.sqlite /admin/campaigns/1 /admin/campaigns/1/progress
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
            "DATABASE_URL": f"sqlite:///{store}",
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
        cpu = []
        for _ in range(5):
            started = time.process_time()
            client.get(path)
            cpu.append(time.process_time() - started)
        print(f"{path}: {statistics.median(cpu):.3f} s CPU (median of 5)", flush=True)


if __name__ == "__main__":  # the report jobs' fork server imports this module again
    main(sys.argv[1:])
