"""Gold documents meeting the practice set: a practice item shows the assessor its expected
grade, so a document cannot be both (gold accuracy would be measured on answers shown)."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.services import calibration, gold
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign, GoldDocument, QrelsEntry, QrelsSet


def test_a_practice_document_cannot_be_marked_gold(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        calibration.set_items(s, c, calibration.parse_items("T1\tD4\t2\tsteps\n"))
        with pytest.raises(ServiceError, match="practice set"):
            gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        labels = QrelsSet(campaign_id=c.id, name="ref", source="test")
        s.add(labels)
        s.flush()
        s.add_all(QrelsEntry(qrels_set_id=labels.id, qid="T1", docno=d, iteration="0", rel=r)
                  for d, r in (("D4", 2), ("D5", 0)))  # fmt: skip
        result = gold.mark_from(s, c, "qrels", qrels_name="ref")
        assert (result.marked, result.in_practice) == (1, 1)
        assert "1 in the practice set" in result.left_out()
        assert {g.docno for g in s.query(GoldDocument)} == {"D5"}


def test_a_gold_document_cannot_be_a_practice_item(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        with pytest.raises(ServiceError, match="gold document"):
            calibration.set_items(s, c, calibration.parse_items("T1\tD4\t2\tsteps\n"))
        assert calibration.items(s, c.id) == []


def test_gold_in_a_primary_and_secondary_pool_matches_the_progress_pages(
    app: Flask, world: World
) -> None:
    """A pool routed primary + secondary, with gold documents (pooled ones among them): each
    queue holds its own places and gold documents that are not its own, and the progress
    pages count that same queue."""
    from sqlalchemy import select

    from workbench.services import judging, pools, progress, routing, users
    from workbench.store.models import Assignment, RoutingSlot

    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.set_quality(s, c, gold_share=0.3)
        gold.mark(s, c, [gold.GoldItem("T1", d, 1) for d in ("D1", "D4", "D5", "D6")])
        pool = pools.build_pool(s, c, strategy="depth", depth=3, seed=9)
        routing.apply_policy(
            s,
            pool,
            "primary",
            {"secondary_share": 0.5},
            assessors=[users.get_user(s, "carol"), users.get_user(s, "bob")],
        )
        routed = s.scalars(select(Assignment).where(Assignment.pool_id == pool.id)).all()
        assert len({a.user_id for a in routed}) == 2
        counted = progress.assignment_progress(s, list(routed))
        for a in routed:
            queue = judging.document_sequence(s, a)
            own = set(s.scalars(select(RoutingSlot.docno).where(
                RoutingSlot.assignment_id == a.id)))  # fmt: skip
            extra = [d for d in queue if d not in own]
            assert own <= set(queue) and len(queue) == len(set(queue))
            assert set(extra) <= {"D1", "D4", "D5", "D6"}
            assert counted[a.id].total == len(queue), a.qid


def test_the_practice_set_comes_first_whichever_pool_the_first_topic_is_in(
    app: Flask, as_user, world: World
) -> None:
    """carol, who has judged nothing, is assigned topics of two pools: either judging page
    sends her to the practice set, and once she has answered it both open."""
    from workbench.services import assignments, pools, users

    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        calibration.set_items(s, c, calibration.parse_items("T1\tD2\t1\twhy\nT2\tD5\t0\t\n"))
        second = pools.build_pool(s, c, strategy="depth", depth=2, seed=2)
        carol = users.get_user(s, "carol")
        mine = [assignments.assign(s, s.get(type(second), world.pool_id), "T1", carol).id,
                assignments.assign(s, second, "T2", carol).id]  # fmt: skip
        items = [i.id for i in calibration.items(s, c.id)]
    client = as_user("carol")
    for aid in mine:
        response = client.get(f"/assess/{aid}")
        assert response.status_code == 302 and "/practice" in response.location, aid
    for item in items:
        answered = client.post(f"/assess/campaigns/{world.campaign_id}/practice/{item}",
                               data={"grade": "1"})  # fmt: skip
        assert answered.status_code == 303
    for aid in mine:
        assert client.get(f"/assess/{aid}").status_code == 200, aid
