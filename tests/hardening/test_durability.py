"""Durability: a server killed with SIGKILL mid-load keeps every acknowledged judgement.

The server is `workbench serve` in a subprocess over the test's store (SQLite, or PostgreSQL
in the suite's second pass); simulated assessors post judgements through the JSON API and
retry an unanswered one with the same client_id until it is acknowledged.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.hardening.conftest import load_generator
from workbench.store import open_store
from workbench.store.models import Judgement

run_load = load_generator()
pytestmark = pytest.mark.slow  # starts `workbench serve` in a subprocess


def test_sigkill_mid_load_loses_no_acknowledged_judgement(
    database_url: str, tmp_path: Path
) -> None:
    store = open_store(database_url, upgrade=True)
    load = run_load.build_campaign(store, 4, docs_per_topic=20)
    server = run_load.Server(database_url, tmp_path / "server", threads=4).start()
    results = [run_load.AssessorResult() for _ in load.assessors]
    stop = threading.Event()
    loader = threading.Thread(
        target=run_load.run_assessors,
        args=(load, server.port, 120.0),
        kwargs={"results": results, "stop": stop},
    )
    loader.start()

    def acknowledged() -> int:
        return sum(len(r.acknowledged) for r in results)

    try:
        _wait_until(lambda: acknowledged() >= 20, "judgements acknowledged before the kill")
        server.kill()
        acknowledged_before_kill = acknowledged()
        _wait_until(
            lambda: sum(r.connection_errors for r in results) > 0, "a request hit the dead server"
        )
        server = run_load.Server(
            database_url, tmp_path / "server", port=server.port, threads=4
        ).start()
        _wait_until(lambda: acknowledged() >= acknowledged_before_kill + 20, "the load to resume")
    finally:
        stop.set()
        loader.join()
        server.stop()
    check = run_load.check_store(store, load, results)
    store.dispose()

    assert acknowledged_before_kill > 0
    assert check.acknowledged > acknowledged_before_kill, "the load did not resume"
    assert sum(r.connection_errors for r in results) > 0, "the kill hit no request"
    assert not any(r.refused for r in results)
    assert check.lost == []
    assert check.doubled == []
    assert check.unexpected == []
    assert check.acknowledged <= check.stored <= check.acknowledged + len(load.assessors)


def _post(port: int, token: str, path: str, payload: dict) -> tuple[int, dict]:
    connection = http.client.HTTPConnection(run_load.HOST, port, timeout=10)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connection.request("POST", path, json.dumps(payload), headers)
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    return response.status, body


def _get(port: int, token: str, path: str) -> dict:
    connection = http.client.HTTPConnection(run_load.HOST, port, timeout=10)
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    assert response.status == 200
    body = json.loads(response.read())
    connection.close()
    return body


def test_two_tabs_revising_one_document_keep_both_and_the_later_wins(
    database_url: str, tmp_path: Path
) -> None:
    store = open_store(database_url, upgrade=True)
    load = run_load.build_campaign(store, 1, docs_per_topic=5)
    (assessor,) = load.assessors
    docno = assessor.docnos[2]
    judgements = f"/api/v1/assignments/{assessor.assignment_id}/judgements"
    server = run_load.Server(database_url, tmp_path / "server", threads=2).start()
    try:
        tab_a = _get(server.port, assessor.token, f"/api/v1/assignments/{assessor.assignment_id}")
        tab_b = _get(server.port, assessor.token, f"/api/v1/assignments/{assessor.assignment_id}")
        assert tab_a["judgements"][2] is None and tab_b["judgements"][2] is None

        def submit(grade: int, client_id: str, comment: str):  # type: ignore[no-untyped-def]
            body = {"docno": docno, "grade": grade, "client_id": client_id, "comment": comment}
            return _post(server.port, assessor.token, judgements, body)

        first = submit(2, "tab-a-1", "from tab A")
        second = submit(0, "tab-b-1", "from tab B")
        retried_first = submit(2, "tab-a-1", "from tab A")
        state = _get(server.port, assessor.token, f"/api/v1/assignments/{assessor.assignment_id}")
    finally:
        server.stop()
    with store.session() as session:
        log = session.execute(
            select(Judgement.client_id, Judgement.grade, Judgement.comment)
            .where(Judgement.campaign_id == load.campaign_id, Judgement.docno == docno)
            .order_by(Judgement.id)
        ).all()
    store.dispose()

    assert (first[0], second[0]) == (201, 201)
    assert retried_first[0] == 200 and retried_first[1]["created"] is False
    assert [tuple(row) for row in log] == [
        ("tab-a-1", 2, "from tab A"),
        ("tab-b-1", 0, "from tab B"),
    ]
    assert state["judgements"][2]["grade"] == 0
    assert state["judgements"][2]["comment"] == "from tab B"


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll `condition` every 20 ms until it holds; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
