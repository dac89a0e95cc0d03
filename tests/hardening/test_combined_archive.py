"""Archiving and deleting what the machine judges, routing, gold documents, practice sets and
adaptive pools depend on: the delete page lists every dependent, a delete never fails on a
foreign key and leaves no orphan (rows keyed by a topic's qid included), and an archived
campaign stays read-only on the new pages and the API."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import func, select

from tests.hardening.conftest import row_counts
from tests.web.conftest import World, get_store_of
from workbench.services import calibration, gold, machine_judges, routing, users
from workbench.store.models import (
    CalibrationAnswer,
    CalibrationItem,
    Campaign,
    GoldDocument,
    MachineJob,
    MachineJudge,
    MachineJudgement,
    Pool,
    RoutingSlot,
    Topic,
    User,
)


def _machine_labels(s, campaign: Campaign, keys) -> int:  # type: ignore[no-untyped-def]
    """A machine judge of the campaign with a label on each (qid, docno) and a finished job
    over pool 1 (as `machine run` leaves them); returns the judge's id."""
    judge = machine_judges.add_judge(s, campaign, model="m", base_url="http://127.0.0.1:9/v1")
    pool = s.scalar(select(Pool).where(Pool.campaign_id == campaign.id, Pool.number == 1))
    job = MachineJob(campaign_id=campaign.id, judge_id=judge.id, status="done",
                     scope={"pool": pool.id, "pool_number": 1, "topics": None,
                            "only_unjudged": False}, total=len(keys), done=len(keys))  # fmt: skip
    s.add(job)
    s.flush()
    for qid, docno in keys:
        s.add(MachineJudgement(judge_id=judge.id, campaign_id=campaign.id, qid=qid, docno=docno,
                               grade=1, cache_key=f"k{qid}{docno}", template_hash="h",
                               job_id=job.id))  # fmt: skip
    s.flush()
    return judge.id


def _everything(app: Flask, world: World) -> None:
    """Campaign c1 with every new dependent: machine labels and a job, gold documents, a
    practice set answered by carol, a primary+secondary routed pool (pool 2), and quality
    settings; nothing judged by a human."""
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        _machine_labels(s, c, [("T1", "D1"), ("T2", "D3")])
        gold.set_quality(s, c, gold_share=0.2)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2, "why"), gold.GoldItem("T2", "D5", 0)])
        calibration.set_items(s, c, calibration.parse_items("T1\tD2\t1\tpartly\n"))
        item = s.scalar(select(CalibrationItem.id).where(CalibrationItem.campaign_id == c.id))
        s.add(CalibrationAnswer(item_id=item, user_id=world.users["carol"], grade=1))
        from workbench.services import pools as pool_service

        pool = pool_service.build_pool(s, c, strategy="depth", depth=2, seed=3)
        routing.apply_policy(s, pool, "primary", {"secondary_share": 0.5},
                             assessors=[users.get_user(s, n)
                                        for n in ("carol", "bob")])  # fmt: skip


def test_deleting_a_campaign_lists_and_removes_every_new_dependent(
    app: Flask, as_user, world: World
) -> None:
    _everything(app, world)
    admin = as_user("admin")
    page = admin.get(f"/admin/delete/campaign/{world.campaign_id}").text
    for shown in ("1 machine judge,", "2 machine labels", "1 machine job", "2 gold documents",
                  "1 practice item", "1 practice answer", "routing slots"):  # fmt: skip
        assert shown in page, (shown, page)
    assert 'id="delete-form"' in page
    done = admin.post(f"/admin/delete/campaign/{world.campaign_id}", follow_redirects=True)
    assert done.status_code == 200 and "Campaign &#39;c1&#39; deleted." in done.text
    with get_store_of(app).read_session() as s:
        counts = row_counts(s)
    for table in ("machine_judges", "machine_judgements", "machine_jobs", "gold_documents",
                  "calibration_items", "calibration_answers", "routing_slots",
                  "quality_settings", "pools", "assignments", "topics"):  # fmt: skip
        assert counts[table] == 0, (table, counts[table])


def test_deleting_a_user_lists_their_routing_slots_and_practice_answers(
    app: Flask, as_user, world: World
) -> None:
    _everything(app, world)
    with get_store_of(app).read_session() as s:
        slots_held = s.scalar(
            select(func.count())
            .select_from(RoutingSlot)
            .where(RoutingSlot.user_id == world.users["carol"])
        )
    assert slots_held
    page = as_user("admin").get(f"/admin/delete/user/{world.users['carol']}").text
    assert f"{slots_held} routing slot" in page and "1 practice answer" in page, page
    done = as_user("admin").post(f"/admin/delete/user/{world.users['carol']}",
                                 follow_redirects=True)  # fmt: skip
    assert "User &#39;carol&#39; deleted." in done.text
    with get_store_of(app).read_session() as s:
        assert s.get(User, world.users["carol"]) is None
        counts = row_counts(s)
    assert counts["calibration_answers"] == 0


def test_deleting_a_topic_leaves_no_gold_practice_or_machine_rows_keyed_by_its_qid(
    app: Flask, as_user, world: World
) -> None:
    """A topic with no judgement and no pooled document can be deleted: its gold documents,
    practice items and machine labels (keyed by qid, without a foreign key) go with it, and
    the page says so first."""
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        extra = Topic(campaign_id=c.id, qid="T3", title="extra")
        s.add(extra)
        s.flush()
        topic_id = extra.id
        _machine_labels(s, c, [("T3", "D1")])
        gold.mark(s, c, [gold.GoldItem("T3", "D4", 2)])
        calibration.set_items(s, c, calibration.parse_items("T3\tD2\t1\tpartly\n"))
        item = s.scalar(select(CalibrationItem.id).where(CalibrationItem.qid == "T3"))
        s.add(CalibrationAnswer(item_id=item, user_id=world.users["carol"], grade=0))
    admin = as_user("admin")
    page = admin.get(f"/admin/delete/topic/{topic_id}").text
    for shown in ("1 gold document", "1 practice item", "1 machine label", "1 practice answer"):
        assert shown in page, (shown, page)
    done = admin.post(f"/admin/delete/topic/{topic_id}", follow_redirects=True)
    assert "Topic &#39;T3&#39; deleted." in done.text
    with get_store_of(app).read_session() as s:
        for model in (GoldDocument, CalibrationItem, MachineJudgement):
            left = s.scalar(select(func.count()).select_from(model).where(model.qid == "T3"))
            assert left == 0, model.__name__
        # the practice page of an assessor still opens (no item points at a missing topic)
    assert as_user("alice").get(f"/assess/campaigns/{world.campaign_id}/practice").status_code in (
        200,
        302,
        404,
    )


def test_deleting_a_pool_lists_its_routing_slots_and_machine_jobs(
    app: Flask, as_user, world: World
) -> None:
    _everything(app, world)
    with get_store_of(app).read_session() as s:
        pool2 = s.scalar(select(Pool.id).where(Pool.number == 2))
        pool1 = s.scalar(select(Pool.id).where(Pool.number == 1))
    page = as_user("admin").get(f"/admin/delete/pool/{pool2}").text
    assert "routing slots" in page, page
    page = as_user("admin").get(f"/admin/delete/pool/{pool1}").text
    assert "1 machine job" in page, page
    done = as_user("admin").post(f"/admin/delete/pool/{pool1}", follow_redirects=True)
    assert "Pool 1 deleted." in done.text
    with get_store_of(app).read_session() as s:
        # the job over the deleted pool goes; the labels (the judge's, by topic and document)
        # stay with their judge
        assert s.scalar(select(func.count()).select_from(MachineJob)) == 0
        assert s.scalar(select(func.count()).select_from(MachineJudgement)) == 2
        assert s.scalar(select(func.count()).select_from(MachineJudge)) == 1
