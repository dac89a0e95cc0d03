"""Judging and assignment services below the web layer."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import event, select

from tests.web.conftest import World, get_store_of
from workbench.services import assignments, judging, pools, run_imports, users
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import Assignment, Campaign, Judgement, Pool, PoolEntry, User

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

        def record(data: judging.JudgementInput, user_id: int = a.user_id):  # type: ignore[no-untyped-def]
            return judging.record_judgement(s.connection(), a.id, user_id, data)

        row, created = record(judging.JudgementInput("D2", 1, comment=" ok ", client_id="c1"))
        assert created and (row.grade, row.comment, row.position) == (1, "ok", 1)
        stored = s.get(Judgement, row.id)
        assert (stored.docno, stored.grade, stored.comment, stored.position) == ("D2", 1, "ok", 1)
        again, created = record(judging.JudgementInput("D2", 2, client_id="c1"))
        assert not created and again == row  # a retry returns the stored row as it was
        with pytest.raises(ServiceError, match="another document"):
            record(judging.JudgementInput("D3", 1, client_id="c1"))
        with pytest.raises(NotFound):
            record(judging.JudgementInput("D5", 1))
        with pytest.raises(NotFound, match="not one of yours"):
            record(judging.JudgementInput("D2", 1), user_id=world.users["bob"])
        with pytest.raises(ServiceError, match="not on the scale: expected one of 0, 1, 2"):
            record(judging.JudgementInput("D2", 9))
        with pytest.raises(ServiceError, match="reason"):
            record(judging.JudgementInput("D2", None, cannot_judge=" "))
        with pytest.raises(ServiceError, match="comment longer"):
            record(judging.JudgementInput("D2", 1, comment="x" * 10_001))
        a.active = False
        s.flush()
        with pytest.raises(ServiceError, match="withdrawn"):
            record(judging.JudgementInput("D2", 1))


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


def test_a_topic_is_assignable_exactly_when_it_has_documents_to_judge(
    app: Flask, world: World
) -> None:
    """`has_topic` (one index probe) answers as `topic_sizes` (a count over the pool) does,
    also for a topic whose entries were all left out of the sample."""
    with get_store_of(app).session() as s:
        pool = s.get(Pool, world.pool_id)
        carol = s.scalar(select(User).where(User.username == "carol"))
        for entry in s.scalars(select(PoolEntry).where(PoolEntry.qid == "T2")):
            entry.sampled = False
        s.flush()
        sizes = assignments.topic_sizes(s, pool)
        assert "T1" in sizes and "T2" not in sizes
        for qid in ("T1", "T2", "T9"):
            assert assignments.has_topic(s, pool, qid) == (qid in sizes)
        with pytest.raises(NotFound, match="T2"):
            assignments.assign(s, pool, "T2", carol)


def test_sequence_follows_pool_extension(app: Flask, world: World, tmp_path: Path) -> None:
    """The cached order is refreshed when the pool is extended by a new run (a new build)."""
    late = tmp_path / "late.run"
    late.write_text("T1 Q0 D5 1 9.0 late\n")
    with get_store_of(app).session() as s:
        a = s.get(Assignment, world.assignment["alice", "T1"])
        before = judging.document_sequence(s, a)
        campaign = s.get(Campaign, world.campaign_id)
        run_imports.import_runs(s, campaign, [late])
        pools.extend_pool(s, s.get(Pool, world.pool_id), ["late"])
        after = judging.document_sequence(s, a)
        assert after == [*before, "D5"]  # a later build comes after what was seen
        row, created = judging.record_judgement(
            s.connection(), a.id, a.user_id, judging.JudgementInput("D5", 1)
        )
        assert created and row.position == len(before)


def test_token_changes_made_anywhere_count_at_the_next_request(app: Flask, world: World) -> None:
    """Tokens are read at each request: a change made outside this app (another worker, the
    CLI) is seen at once: a deactivation, a reactivation, a role change, a new token."""
    with get_store_of(app).session() as s:
        token = users.new_api_token(s, s.get(User, world.users["alice"]))
    headers = {"Authorization": f"Bearer {token}"}
    client = app.test_client()
    assert client.get("/api/v1/me", headers=headers).json["username"] == "alice"
    with get_store_of(app).session() as s:
        users.set_active(s, s.get(User, world.users["alice"]), False)
    assert client.get("/api/v1/me", headers=headers).status_code == 401
    with get_store_of(app).session() as s:
        users.set_active(s, s.get(User, world.users["alice"]), True)
        users.set_role(s, s.get(User, world.users["alice"]), "admin")
    assert client.get("/api/v1/me", headers=headers).json["role"] == "admin"
    with get_store_of(app).session() as s:
        newer = users.new_api_token(s, s.get(User, world.users["alice"]))
    assert client.get("/api/v1/me", headers=headers).status_code == 401
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {newer}"}).status_code == 200


def test_submit_is_one_statement_while_what_it_knows_holds(app: Flask, world: World) -> None:
    """After a first submit, the next one of the assignment is a single checked INSERT with
    the campaign's change count (`services.changes`: on PostgreSQL in the same statement, on
    SQLite the next one of the transaction); when the assignment changed (here its order mode)
    that statement appends nothing and the submit checks one by one, with the position in the
    new order."""
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):  # type: ignore[no-untyped-def]
        statements.append(statement.split(None, 1)[0].upper())

    store = get_store_of(app)
    event.listen(store.engine, "before_cursor_execute", count)
    try:
        with store.session() as s:
            a = s.get(Assignment, world.assignment["alice", "T1"])

            def record(docno: str):  # type: ignore[no-untyped-def]
                statements.clear()
                data = judging.JudgementInput(docno, 1)
                return judging.record_judgement(s.connection(), a.id, a.user_id, data)[0]

            postgresql = store.engine.dialect.name == "postgresql"
            append = ["WITH"] if postgresql else ["INSERT"]
            counted = append if postgresql else ["INSERT", "INSERT"]
            record("D1")
            assert record("D2").position == 1 and statements == counted
            a.order = "random"
            s.flush()
            order = judging.document_sequence(s, a)
            row = record("D3")
            assert statements[:2] == [*append, "SELECT"] and statements[-1:] == append
            assert row.position == order.index("D3")
            assert record("D6").position == order.index("D6")
            assert statements == counted
    finally:
        event.remove(store.engine, "before_cursor_execute", count)


def test_found_returns_the_row_or_raises_not_found_with_the_message():
    from workbench.services.errors import NotFound, found

    assert found(0, "unused") == 0
    with pytest.raises(NotFound, match="no campaign 'x'"):
        found(None, "no campaign 'x'")
