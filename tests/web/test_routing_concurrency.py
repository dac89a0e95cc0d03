"""Assessors asking for work at the same moment, on SQLite and (in the PostgreSQL pass) on
PostgreSQL: real concurrent HTTP requests to a threaded server, and threads calling the
service. Every document disagreed on wants exactly one judge more (adaptive policy, at most 3
judges): all of them must be taken, none twice, none by an assessor who holds it already."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.web.conftest import FAST_HASH, PASSWORD, get_store_of, make_app, serve_in_thread
from workbench.services import judging
from workbench.services import routing as routing_service
from workbench.services import users as user_service
from workbench.store.models import Assignment, Pool, RoutingSlot, User

ASKERS = ["carol", "x1", "x2", "x3", "x4", "x5", "x6"]


@pytest.fixture
def disagreed(world_url, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The world routed adaptively over alice and bob (every document to both), who disagree
    on all 12 documents; seven more assessors with API tokens. Yields (app, tokens)."""
    app = make_app(world_url[0], tmp_path)
    store = get_store_of(app)
    tokens = {}
    with store.session() as s:
        for a in s.scalars(select(Assignment)):
            s.delete(a)
        for name in ASKERS[1:]:
            user_service.create_user(s, name, PASSWORD, role="assessor", hash_method=FAST_HASH)
        for name in ASKERS:
            tokens[name] = user_service.new_api_token(s, user_service.get_user(s, name))
        pool = s.scalar(select(Pool))
        two = [user_service.get_user(s, n) for n in ("alice", "bob")]
        routing_service.apply_policy(s, pool, "adaptive", {"chunk": 6}, assessors=two)
        # the seven join the campaign's policy: nothing is missing, so nothing moves
        everyone = user_service.list_users(s, role="assessor")
        joined = routing_service.apply_policy(s, pool, "adaptive", {"chunk": 6}, assessors=everyone)
        assert joined.documents == 0 and set(ASKERS) <= set(pool.params["routing"]["assessors"])
    with store.read_session() as s:
        rows = [
            (a.id, a.user_id, judging.document_sequence(s, a))
            for a in s.scalars(select(Assignment))
        ]
        grades = {u.id: (0 if u.username == "alice" else 2) for u in s.scalars(select(User))}
    for assignment_id, user_id, docnos in rows:
        for docno in docnos:
            judging.submit_judgement(
                store, assignment_id, user_id, judging.JudgementInput(docno, grades[user_id])
            )
    yield app, tokens
    store.dispose()


def _check_places(app) -> Counter:  # type: ignore[no-untyped-def]
    """Every document has three judges, three distinct places, no assessor twice."""
    with get_store_of(app).read_session() as s:
        rows = s.execute(
            select(RoutingSlot.qid, RoutingSlot.docno, RoutingSlot.slot, RoutingSlot.user_id)
            .join(Assignment, Assignment.id == RoutingSlot.assignment_id)
            .where(Assignment.active.is_(True))
        ).all()
        names = dict(s.execute(select(User.id, User.username)).all())
    per_document: dict[tuple[str, str], list] = {}
    for qid, docno, slot, user_id in rows:
        per_document.setdefault((qid, docno), []).append((slot, names[user_id]))
    assert len(per_document) == 12
    for places in per_document.values():
        assert len(places) == 3
        assert sorted(slot for slot, _ in places) == [0, 1, 2]
        assert len({name for _, name in places}) == 3
    return Counter(name for places in per_document.values() for _, name in places)


def _at_once(work, count: int) -> list:  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = work(i)
        except Exception as error:  # reported below, with the thread's error
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return results


def test_concurrent_http_requests_for_work_never_take_a_place_twice(disagreed) -> None:
    app, tokens = disagreed

    with serve_in_thread(app) as base:

        def ask(i: int) -> list:
            request = urllib.request.Request(
                f"{base}/api/v1/work",
                data=b"{}",
                method="POST",
                headers={
                    "Authorization": f"Bearer {tokens[ASKERS[i]]}",
                    "Content-Type": "application/json",
                },
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200
                return json.loads(response.read())["added"]

        answers = _at_once(ask, len(ASKERS))
        again = _at_once(ask, len(ASKERS))
    taken = [(a["qid"], a["docno"]) for added in answers for a in added]
    assert len(taken) == len(set(taken)) == 12  # each wanted place once, all of them
    assert all(len(added) <= routing_service.WORK_BATCH for added in answers)
    assert all(added == [] for added in again)
    counts = _check_places(app)
    assert counts["alice"] == counts["bob"] == 12
    assert sum(counts[n] for n in ASKERS) == 12


def test_concurrent_service_calls_never_exceed_the_maximum(disagreed) -> None:
    app, _ = disagreed
    store = get_store_of(app)
    with store.read_session() as s:
        ids = {u.username: u.id for u in s.scalars(select(User))}

    def ask(i: int) -> int:
        return len(routing_service.ask_for_work(store, ids[ASKERS[i % len(ASKERS)]], limit=3))

    claimed = _at_once(ask, 2 * len(ASKERS))  # each assessor twice at once
    assert sum(claimed) == 12
    _check_places(app)
