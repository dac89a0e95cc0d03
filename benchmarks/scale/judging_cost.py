"""What each judging request costs on a store `run_scale.py` filled: for N of its judges (in
a new app, so the first judge's requests are a process's first), the login page, the login
(the password's check), the two static files, the judging page, the assignment's state, two
documents and a judgement, each timed as CPU and wall time, with
the number of statements and the time spent in them (the database's share); then the same
requests again, warm. STORE is a SQLite file or a database URL. Nothing is written but the
judgements (each a new event of a key the judge had judged: the figures stay the same kind).

    python benchmarks/scale/judging_cost.py STORE [--judges 5] [--no-submit] [--no-freeze]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scale import PASSWORD, filled


class Statements:
    """Counts the statements of an engine and the wall time spent executing them."""

    def __init__(self, engine: object) -> None:
        self.count = 0
        self.seconds = 0.0
        self.slowest: list[tuple[float, str]] = []
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:
        conn.info["judging_cost_started"] = time.perf_counter()

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:
        spent = time.perf_counter() - conn.info.pop("judging_cost_started")
        self.count += 1
        self.seconds += spent
        self.slowest.append((spent, " ".join(statement.split())[:160]))

    def reset(self) -> None:
        self.count, self.seconds, self.slowest = 0, 0.0, []


def main(argv: list[str] | None = None) -> None:
    from workbench.store import open_store
    from workbench.web import create_app
    from workbench.web.db import get_store
    from workbench.web.worker_process import freeze_startup_objects

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument("--judges", type=int, default=5)
    parser.add_argument("--no-submit", action="store_true")
    parser.add_argument(
        "--no-freeze", action="store_true", help="leave the start's objects to the collector"
    )
    parser.add_argument("--slowest", type=int, default=3, help="statements shown per request")
    args = parser.parse_args(argv)
    url = args.store if "://" in args.store else f"sqlite:///{args.store}"
    probe = open_store(url)
    campaign = filled(probe)
    probe.dispose()
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "judging-cost" * 4,
            "WTF_CSRF_ENABLED": False,
            "INSTANCE_PATH": tempfile.mkdtemp(),
            "RATE_JUDGE": (0, 0),
        }
    )
    if not args.no_freeze:  # as a server's worker does once its app is built
        freeze_startup_objects()
    with app.app_context():
        statements = Statements(get_store().engine)
    table: dict[str, list[dict[str, float]]] = defaultdict(list)

    def timed(label: str, client, method: str, path: str, **kwargs) -> None:
        statements.reset()
        cpu, wall = time.process_time(), time.perf_counter()
        answer = client.open(path, method=method, **kwargs)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        assert answer.status_code in (200, 201, 302), (path, answer.status_code, answer.data[:200])
        row = {
            "cpu_ms": 1000 * cpu,
            "wall_ms": 1000 * wall,
            "statements": statements.count,
            "db_ms": 1000 * statements.seconds,
        }
        table[label].append(row)
        slow = sorted(statements.slowest, reverse=True)[: args.slowest]
        print(
            f"  {label}: cpu {row['cpu_ms']:.1f} ms, wall {row['wall_ms']:.1f} ms, "
            f"{statements.count} statements {row['db_ms']:.1f} ms; slowest: "
            + "; ".join(f"{1000 * s:.1f} ms {text}" for s, text in slow),
            flush=True,
        )

    for rounds in ("first", "again"):
        print(f"{rounds}:", flush=True)
        for member in campaign.judges[: args.judges]:
            client = app.test_client()
            login = {"username": member.username, "password": PASSWORD}
            timed(f"{rounds} login page", client, "GET", "/login")
            timed(f"{rounds} login", client, "POST", "/login", data=login)
            for asset in ("/static/style.css", "/static/judge.js"):
                timed(f"{rounds} static", client, "GET", asset)
            api = f"/api/v1/assignments/{member.assignment_id}"
            timed(f"{rounds} judging page", client, "GET", f"/assess/{member.assignment_id}")
            timed(f"{rounds} state", client, "GET", api)
            state = json.loads(client.get(api).data)
            position = state["position"]
            for p in (position, position + 1):
                timed(f"{rounds} document", client, "GET", f"{api}/documents/{p % state['total']}")
            if not args.no_submit:
                body = {
                    "docno": member.docnos[position % len(member.docnos)],
                    "grade": state["judgements"][position]["grade"],
                    "client_id": f"judging-cost-{uuid.uuid4().hex[:12]}",
                }
                timed(f"{rounds} submit", client, "POST", f"{api}/judgements", json=body)
    print("medians:")
    for label, rows in table.items():
        medians = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
        shown = ", ".join(f"{k} {v:.1f}" for k, v in medians.items())
        print(f"  {label} (n {len(rows)}): {shown}")


if __name__ == "__main__":  # the report jobs' fork server imports this module again
    main()
