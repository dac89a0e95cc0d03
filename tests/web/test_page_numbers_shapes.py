"""The admin pages' numbers, read the fast way (kept pool statistics, SQL-side graded keys,
plain rows), equal the plain computation from the whole current judgements on a campaign of
every shape: several pools, one archived, an adaptive pool with a secondary judge, a
revision, an undo, 'cannot judge', a withdrawn assignment, a gold document left out, with
the withdrawn judgements counted and not."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench.services import (
    adaptive_pools,
    archive,
    assignments,
    gold,
    judging,
    pool_statistics,
    pools,
    progress,
    qrels,
    undo,
    users,
)
from workbench.services.current_judgements import (
    counted_judgements,
    current_judgements,
    left_out_gold,
)
from workbench.services.scope import pool_scope
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry


def _judge(store, assignment_id: int, user_id: int, docno: str, grade: int | None) -> None:  # type: ignore[no-untyped-def]
    reason = "unreadable" if grade is None else None
    with store.connection() as connection:
        judging.record_judgement(
            connection, assignment_id, user_id, judging.JudgementInput(docno, grade, reason)
        )


def _every_shape(app: Flask, world: World) -> Any:  # type: ignore[no-untyped-def]
    store = get_store_of(app)
    alice, bob, carol = (world.users[n] for n in ("alice", "bob", "carol"))
    a = world.assignment
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        second = pools.build_pool(s, campaign, strategy="depth", depth=6, seed=3)
        carols = assignments.assign(s, second, "T2", users.get_user(s, "carol")).id
        adaptive = adaptive_pools.build_adaptive_pool(
            s, campaign, method="mm", budget=6, depth=6, batch=2, secondary_share=0.5, seed=11
        )
        primary = assignments.assign(s, adaptive, "T1", users.get_user(s, "alice")).id
        secondary = assignments.assign(s, adaptive, "T1", users.get_user(s, "bob")).id
        gold.mark(s, campaign, [gold.GoldItem("T1", "D2", 1)])
    t1 = sorted(e for e in _sampled(store, world.pool_id, "T1"))
    _judge(store, a["alice", "T1"], alice, t1[0], 0)
    _judge(store, a["alice", "T1"], alice, t1[0], 2)  # a revision
    _judge(store, a["alice", "T1"], alice, t1[1], None)  # cannot judge
    _judge(store, a["bob", "T1"], bob, t1[0], 1)
    _judge(store, a["bob", "T1"], bob, t1[1], 1)
    with store.session() as s:
        undo.undo_last_judgement(s, a["bob", "T1"], bob)  # bob's t1[1] taken back
    _judge(store, a["bob", "T1"], bob, "D2", 2)  # the gold document
    for docno in sorted(_sampled(store, world.pool_id, "T2"))[:2]:
        _judge(store, a["alice", "T2"], alice, docno, 1)
    deeper = _sampled(store, second.id, "T2") - _sampled(store, world.pool_id, "T2")
    for docno in sorted(deeper)[:2]:  # carol's assignment is withdrawn below
        _judge(store, carols, carol, docno, 2)
    revealed = adaptive_pools.advance(store, primary, alice)
    for docno in revealed:  # a judgement is keyed by topic, not pool: keep t1's cannot judge
        if docno != t1[1]:
            _judge(store, primary, alice, docno, 1)
    with store.read_session() as s:
        shown = judging.document_sequence(s, s.get(Assignment, secondary))
    for docno in [d for d in shown if d not in (t1[0], "D2")][:1]:
        _judge(store, secondary, bob, docno, 0)
    with store.session() as s:
        assignments.unassign(s, s.get(Assignment, carols))
        archived = pools.build_pool(s, s.get(Campaign, world.campaign_id), depth=1, seed=5)
        archive.set_archived(s, archived, True)
    return store


def _sampled(store, pool_id: int, qid: str) -> set[str]:  # type: ignore[no-untyped-def]
    with store.read_session() as s:
        query = select(PoolEntry.docno).where(
            PoolEntry.pool_id == pool_id, PoolEntry.qid == qid, PoolEntry.sampled.is_(True)
        )
        return set(s.scalars(query))


def _expected_completeness(s, campaign: Campaign) -> tuple[int, tuple]:  # type: ignore[no-untyped-def]
    """`qrels_labels(final=True)`'s completeness, from the whole current rows: every sampled
    entry of a pool in scope (of a topic assigned in that pool, or any topic of a pool nobody
    was assigned) and every document with a counted grade, less the labelled ones."""
    scope = pool_scope(s, campaign)
    active = {
        (e.pool_id, e.qid) for e in s.scalars(select(Assignment).where(Assignment.active.is_(True)))
    }
    sampled = {
        (e.qid, e.docno)
        for e in s.scalars(select(PoolEntry).where(PoolEntry.pool_id.in_(scope.ids)))
        if e.sampled and ((e.pool_id, e.qid) in active or e.pool_id not in {p for p, _ in active})
    }
    graded = {(j.qid, j.docno) for j in counted_judgements(s, campaign) if j.grade is not None}
    labels = left_out_gold(s, campaign.id) & sampled  # the gold grade is their label
    expected = sampled | graded | labels
    missing = sorted(expected - labels, key=lambda k: (pools.qid_key(k[0]), k[1]))
    return len(expected), tuple(missing)


@pytest.mark.parametrize("count_withdrawn", [False, True])
def test_every_number_equals_the_plain_computation(
    app: Flask, world: World, count_withdrawn: bool
) -> None:
    store = _every_shape(app, world)
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        campaign.count_withdrawn = count_withdrawn
        s.flush()
        current = current_judgements(s, campaign.id)
        assert {j.cannot_judge for j in current} == {None, "unreadable"}

        completeness = qrels.qrels_labels(s, campaign, final=True)[1]
        assert (completeness.expected, completeness.missing) == _expected_completeness(s, campaign)
        assert completeness.expected > len(completeness.missing) > 0

        report = progress.campaign_progress(s, campaign.id)
        scope = pool_scope(s, campaign)
        active = list(
            s.scalars(
                select(Assignment).where(
                    Assignment.active.is_(True), Assignment.pool_id.in_(scope.ids)
                )
            )
        )
        to_judge = assignments.documents_to_judge(s, active)
        units: dict[tuple[str, int], set[str]] = {}  # a judge's topic over their assignments
        for a in active:
            units.setdefault((a.qid, a.user_id), set()).update(to_judge[a.id].shown)
        judged = sum(
            len(shown & {j.docno for j in current if (j.qid, j.user_id) == unit})
            for unit, shown in units.items()
        )
        unrevealed = sum(found.total - len(found.shown) for found in to_judge.values())
        assert report["overall"].judged == judged > 0
        assert report["overall"].total == sum(map(len, units.values())) + unrevealed
        withdrawn = report["withdrawn"]
        assert [(w["qid"], w["username"], w["progress"].judged) for w in withdrawn] == [
            ("T2", "carol", 2)
        ]

        for pool in s.scalars(select(Pool).where(Pool.campaign_id == campaign.id)):
            runs = pools.pool_runs(s, pool)
            signature = pool_statistics.pool_signature(s, pool, runs)
            fresh = pool_statistics._compute(s, pool, runs, signature)
            # every pool's builder kept its statistics: the page reads them
            assert pool_statistics.current_contributions(s, pool) == (fresh, True)
