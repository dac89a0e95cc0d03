"""Judging and assignment services below the web layer."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of, login
from workbench.services import assignments, judging, users
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import Assignment, Pool, PoolEntry, User

T1_POOL = {"D1", "D2", "D3", "D6", "D7", "D8"}


def test_random_order_is_per_assessor_and_stable(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        orders = {}
        for name in ("alice", "bob"):
            a = s.get(Assignment, world.assignment[name, "T1"])
            a.order = "random"
            orders[name] = judging.document_sequence(s, a)
            assert judging.document_sequence(s, a) == orders[name]  # same every time
            assert set(orders[name]) == T1_POOL
        assert orders["alice"] != orders["bob"]


def test_priority_order_puts_more_runs_first(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        a = s.get(Assignment, world.assignment["alice", "T1"])
        a.order = "priority"
        sequence = judging.document_sequence(s, a)
    # Within depth 3 runA gives D1, D2, D3 and runB D8, D7, D6: one run each, so the priority
    # n_runs + 1 / (1 + rank) puts the rank-1 documents first, then the rank-2 ones.
    assert set(sequence[:2]) == {"D1", "D8"}
    assert set(sequence[2:4]) == {"D2", "D7"}


def test_record_judgement_rules(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        a = s.get(Assignment, world.assignment["alice", "T1"])
        row, created = judging.record_judgement(
            s, a, judging.JudgementInput("D2", 1, comment=" ok ")
        )
        assert created and (row.grade, row.comment, row.position) == (1, "ok", 1)
        with pytest.raises(NotFound):
            judging.record_judgement(s, a, judging.JudgementInput("D5", 1))
        with pytest.raises(ServiceError, match="not on the scale"):
            judging.record_judgement(s, a, judging.JudgementInput("D2", 9))
        with pytest.raises(ServiceError, match="comment longer"):
            judging.record_judgement(s, a, judging.JudgementInput("D2", 1, comment="x" * 10_001))
        a.active = False
        with pytest.raises(ServiceError, match="withdrawn"):
            judging.record_judgement(s, a, judging.JudgementInput("D2", 1))


def test_assign_refuses_unknown_topics_and_orders(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        pool = s.get(Pool, world.pool_id)
        carol = s.scalar(select(User).where(User.username == "carol"))
        with pytest.raises(NotFound, match="T9"):
            assignments.assign(s, pool, "T9", carol)
        with pytest.raises(ServiceError, match="unknown order"):
            assignments.assign(s, pool, "T1", carol, order="shuffled")
        first = assignments.assign(s, pool, "T1", carol)
        assignments.unassign(s, first)
        again = assignments.assign(s, pool, "T1", carol, order="docno")
        assert again.id == first.id and again.active and again.order == "docno"
        with pytest.raises(ServiceError, match="already assigned"):
            assignments.reassign(s, again, carol)
        with pytest.raises(ServiceError, match="at least 1"):
            assignments.auto_assign(s, pool, judges_per_topic=0, assessors=[carol])


def test_sequence_follows_pool_extension(app: Flask, world: World) -> None:
    """The cached order is refreshed when the pool gains a document in a new build."""
    with get_store_of(app).session() as s:
        a = s.get(Assignment, world.assignment["alice", "T1"])
        before = judging.document_sequence(s, a)
        s.add(PoolEntry(pool_id=a.pool_id, qid="T1", docno="D5", build=1, best_rank=9, n_runs=1))
        s.flush()
        after = judging.document_sequence(s, a)
        assert after == [*before, "D5"]  # a later build comes after what was seen
        row, created = judging.record_judgement(s, a, judging.JudgementInput("D5", 1))
        assert created and row.position == len(before)


def test_token_cache_is_cleared_by_user_changes(app: Flask, world: World) -> None:
    """API tokens are cached for a few seconds; a change through the admin pages clears them."""
    with get_store_of(app).session() as s:
        token = users.new_api_token(s, s.get(User, world.users["alice"]))
    headers = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    assert client.get("/api/v1/me", headers=headers).json["username"] == "alice"
    with get_store_of(app).session() as s:  # a change outside the app: seen after the TTL
        s.get(User, world.users["alice"]).active = False
    assert client.get("/api/v1/me", headers=headers).status_code == 200
    admin = app.test_client()
    login(admin, "admin")
    admin.post(f"/admin/users/{world.users['alice']}", data={"action": "active", "active": "0"})
    assert client.get("/api/v1/me", headers=headers).status_code == 401
