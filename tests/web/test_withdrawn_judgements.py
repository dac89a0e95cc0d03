"""Judgements of withdrawn assignments: shown as withdrawn in Progress, and counted in
agreement, adjudication and qrels only when the campaign says so."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.services import assignments as assignment_service
from workbench.services import judging
from workbench.services.adjudication import judged_documents
from workbench.services.agreement import load_ratings
from workbench.services.errors import ServiceError
from workbench.services.qrels import qrels_labels
from workbench.store.models import Assignment, Campaign


def _judge(app: Flask, world: World, user: str, grades: dict[str, int]) -> None:
    with get_store_of(app).session() as s:
        a = s.get(Assignment, world.assignment[user, "T1"])
        for docno, grade in grades.items():
            judging.record_judgement(
                s.connection(), a.id, a.user_id, judging.JudgementInput(docno, grade)
            )


def test_withdrawn_judgements_count_only_when_chosen(app: Flask, as_user, world: World) -> None:
    _judge(app, world, "alice", {"D1": 2, "D2": 0})
    _judge(app, world, "bob", {"D1": 1})
    with get_store_of(app).session() as s:
        assignment_service.unassign(s, s.get(Assignment, world.assignment["bob", "T1"]))
        campaign = s.get(Campaign, world.campaign_id)
        assert campaign.count_withdrawn  # the default: behaviour as before
        with pytest.raises(ServiceError, match="more than one judge"):
            qrels_labels(s, campaign)  # bob's withdrawn grade makes D1 doubly judged
        assert load_ratings(s, campaign).assessors == ["alice", "bob"]
        assert {d.docno: d.grades for d in judged_documents(s, campaign)}["D1"] == {
            world.users["alice"]: 2,
            world.users["bob"]: 1,
        }
    admin = as_user("admin")
    progress = admin.get(f"/admin/campaigns/{world.campaign_id}/progress").text
    withdrawn = progress.split('id="withdrawn"')[1]
    assert "<strong>count</strong>" in withdrawn
    assert 'bob <span class="tag">withdrawn</span>' in withdrawn and "1 / " in withdrawn
    page = admin.post(
        f"/admin/campaigns/{world.campaign_id}/withdrawn",
        data={"count_withdrawn": "0"},
        follow_redirects=True,
    ).text
    assert "Judgements of withdrawn assignments no longer count." in page
    with get_store_of(app).session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        assert not campaign.count_withdrawn
        assert load_ratings(s, campaign).assessors == ["alice"]
        assert {d.docno: d.grades for d in judged_documents(s, campaign)}["D1"] == {
            world.users["alice"]: 2
        }
        # one judge left per document: the qrels are alice's grades
        labels = qrels_labels(s, campaign)[0]
        assert labels == {("T1", "D1"): 2, ("T1", "D2"): 0}
    progress = admin.get(f"/admin/campaigns/{world.campaign_id}/progress").text
    assert "<strong>do not count</strong>" in progress.split('id="withdrawn"')[1]


def test_agreement_and_adjudication_pages_say_what_was_withdrawn(
    app: Flask, as_user, world: World
) -> None:
    app.config["REPORT_JOB_WAIT_SECONDS"] = 60
    _judge(app, world, "alice", {"D1": 2})
    _judge(app, world, "bob", {"D1": 0, "D2": 1})
    with get_store_of(app).session() as s:
        assignment_service.unassign(s, s.get(Assignment, world.assignment["bob", "T1"]))
    admin = as_user("admin")
    expected = "2 judgements were made under withdrawn assignments (topic(s) T1); as the campaign"
    for page in ("agreement", "adjudication"):
        text = admin.get(f"/reports/{world.campaign_id}/{page}").text
        assert expected + " is set, they count here." in text, page
    admin.post(f"/admin/campaigns/{world.campaign_id}/withdrawn", data={"count_withdrawn": "0"})
    text = admin.get(f"/reports/{world.campaign_id}/adjudication").text
    assert expected + " is set, they do not count here." in text
