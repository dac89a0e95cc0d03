"""Adaptive pools meeting the other features: gold documents mixed into the primary judge's
queue, a primary judge whose topic is reassigned (the remainder's advice for adaptive pools),
and a reserved sample whose documents are gold."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench import routing
from workbench.services import (
    adaptive_pools,
    assignments,
    gold,
    judging,
    remainder,
    users,
)
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry

LABELS = {"D1": 0, "D2": 1, "D3": 0, "D4": 1, "D5": 0, "D6": 1, "D7": 1, "D8": 0}


def _adaptive(app: Flask, world: World, **settings):  # type: ignore[no-untyped-def]
    """Pool 2, adaptive over T1's depth-6 pool (D1..D8): alice first (the primary judge),
    then bob (the other judge, who sees half the revealed documents)."""
    store = get_store_of(app)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            s, campaign, method="mm", budget=settings.pop("budget", 6), depth=6, batch=2,
            secondary_share=0.5, seed=11, **settings,
        )  # fmt: skip
        made = {
            name: assignments.assign(s, pool, "T1", users.get_user(s, name), order="random").id
            for name in ("alice", "bob")
        }
        return store, pool.id, made


def _queue(store, assignment_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    with store.read_session() as s:
        return judging.document_sequence(s, s.get(Assignment, assignment_id))


def _judge(store, assignment_id: int, user_id: int, docnos) -> None:  # type: ignore[no-untyped-def]
    for docno in docnos:
        with store.connection() as connection:
            judging.record_judgement(
                connection, assignment_id, user_id, judging.JudgementInput(docno, LABELS[docno])
            )


def _revealed(store, pool_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    with store.read_session() as s:
        return sorted(
            s.scalars(
                select(PoolEntry.docno).where(
                    PoolEntry.pool_id == pool_id, PoolEntry.qid == "T1", PoolEntry.sampled.is_(True)
                )
            )
        )


def test_reassigning_the_primary_judges_topic_keeps_the_new_judge_primary(
    app: Flask, world: World
) -> None:
    """The remainder of an adaptive pool is reassigned whole (its note says so): the new judge
    takes the primary's place, sees every revealed document and gets the next batches; the
    other judge keeps their sample."""
    store, pool_id, made = _adaptive(app, world)
    alice, bob, carol = (world.users[n] for n in ("alice", "bob", "carol"))
    first = adaptive_pools.advance(store, made["alice"], alice)
    assert len(first) == 2 and sorted(_queue(store, made["alice"])) == sorted(first)
    bobs = _queue(store, made["bob"])
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        plan = remainder.remainder_plan(s, campaign, "alice")
        assert any("adaptive pool" in note for note in plan.notes)
        moved = assignments.reassign(s, s.get(Assignment, made["alice"]),
                                     users.get_user(s, "carol")).id  # fmt: skip
    assert sorted(_queue(store, moved)) == sorted(first)  # carol sees all that is revealed
    assert _queue(store, made["bob"]) == bobs  # bob keeps his sample
    assert adaptive_pools.advance(store, made["bob"], bob) == []  # bob is not primary
    _judge(store, moved, carol, first)
    second = adaptive_pools.advance(store, moved, carol)
    assert len(second) == 2 and set(second).isdisjoint(first)
    with store.read_session() as s:
        (status,) = [t for t in adaptive_pools.topic_statuses(s, s.get(Pool, pool_id))
                     if t.qid == "T1"]  # fmt: skip
    assert status.primary == "carol" and status.judged == 2


def test_gold_documents_in_an_adaptive_queue_do_not_hold_up_the_next_batch(
    app: Flask, world: World
) -> None:
    """Gold documents (here pooled ones the strategy has not revealed) are mixed into the
    primary judge's queue; judging the revealed documents is what reveals the next batch, a
    judged gold document is no label the strategy reads until it chooses it, and the topic's
    status counts revealed documents only."""
    store, pool_id, made = _adaptive(app, world, budget=4)
    alice = world.users["alice"]
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.set_quality(s, c, gold_share=0.5)
        gold.mark(s, c, [gold.GoldItem("T1", d, LABELS[d]) for d in ("D4", "D5", "D7")])
    first = adaptive_pools.advance(store, made["alice"], alice)
    queue = _queue(store, made["alice"])
    golden = [d for d in queue if d not in first]
    assert len(golden) == routing.gold_count(2, 0.5) and set(golden) <= {"D4", "D5", "D7"}
    _judge(store, made["alice"], alice, queue)  # the gold document too
    second = adaptive_pools.advance(store, made["alice"], alice)
    assert len(second) == 2
    assert _revealed(store, pool_id) == sorted(first + second)
    with store.read_session() as s:
        (status,) = [t for t in adaptive_pools.topic_statuses(s, s.get(Pool, pool_id))
                     if t.qid == "T1"]  # fmt: skip
    assert status.revealed == 4 and status.judged == len(set(first + second) & set(queue))
    rest = [d for d in _queue(store, made["alice"]) if d not in queue]
    _judge(store, made["alice"], alice, rest)
    assert adaptive_pools.advance(store, made["alice"], alice) == []  # budget 4 used


def test_after_a_remainder_is_reassigned_the_assessor_has_nothing_left_to_judge(
    app: Flask, world: World
) -> None:
    """alice judged part of T1 (with gold documents mixed in) and left: her unjudged documents
    go to carol, and what stays in alice's queue is judged (no gold document she has not seen
    appears in it)."""
    store = get_store_of(app)
    alice = world.users["alice"]
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.set_quality(s, c, gold_share=0.3)
        gold.mark(s, c, [gold.GoldItem("T1", d, LABELS[d]) for d in ("D2", "D4", "D5", "D7")])
        assignments.unassign(s, s.get(Assignment, world.assignment["bob", "T1"]))
    aid = world.assignment["alice", "T1"]
    queue = _queue(store, aid)
    judged = queue[:3]
    _judge(store, aid, alice, judged)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        plan = remainder.reassign_remainder(s, c, "alice", to=["carol"])
        assert plan.documents > 0
    left = [d for d in _queue(store, aid) if d not in judged]
    assert left == [], left
    with store.read_session() as s:  # the progress pages count the same queue
        from workbench.services import progress

        done = progress.assignment_progress(s, [s.get(Assignment, aid)])[aid]
    assert (done.judged, done.total) == (3, 3)
    with store.read_session() as s:  # the dashboard reads the kept places as any other
        from workbench.services import assessor_dashboard

        board = assessor_dashboard.assessor_dashboard(s, world.campaign_id).to_dict()
    assert "alice" in str(board) and "carol" in str(board)


def test_an_archived_adaptive_pool_or_campaign_reveals_nothing(
    app: Flask, as_user, world: World
) -> None:
    """The judging page and the API advance an adaptive topic when they are read; an archived
    pool or campaign is read-only, so reading it reveals nothing."""
    from workbench.services import archive

    store, pool_id, made = _adaptive(app, world)
    alice = world.users["alice"]
    first = adaptive_pools.advance(store, made["alice"], alice)
    _judge(store, made["alice"], alice, first)
    for kind in ("pool", "campaign"):
        with store.session() as s:
            target = s.get(Pool, pool_id) if kind == "pool" else s.get(Campaign, world.campaign_id)
            archive.set_archived(s, target, True)
        client = as_user("alice")
        for url in (f"/api/v1/assignments/{made['alice']}", f"/assess/{made['alice']}",
                    f"/api/v1/assignments/{made['alice']}/next"):  # fmt: skip
            client.get(url)
        assert adaptive_pools.advance(store, made["alice"], alice) == []
        assert _revealed(store, pool_id) == sorted(first), kind
        with store.session() as s:
            target = s.get(Pool, pool_id) if kind == "pool" else s.get(Campaign, world.campaign_id)
            archive.set_archived(s, target, False)
    assert len(adaptive_pools.advance(store, made["alice"], alice)) == 2  # restored: it goes on
