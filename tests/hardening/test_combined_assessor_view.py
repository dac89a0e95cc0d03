"""What an assessor sees in a campaign using every feature: their own queue (gold documents
looking like any other), never a machine label or reason, a gold grade or reason, nor another
assessor's label or comment, on any page or API answer they can reach."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select, update

from tests.web.conftest import World, get_store_of
from workbench.services import judging
from workbench.store.models import Assignment, GoldDocument, MachineJudgement


@pytest.fixture
def world_url(rich_world_url: tuple[str, World]) -> tuple[str, World]:
    """This module's tests run in a copy of the campaign using every feature (`rich`)."""
    return rich_world_url


SECRETS = ("MACHINE-REASON-7731", "GOLD-REASON-5521", "BOB-COMMENT-9043")


def test_an_assessor_never_sees_machine_labels_gold_marks_or_others_labels(
    app: Flask, as_user, world: World, rich
) -> None:
    store = get_store_of(app)
    with store.session() as s:
        s.execute(update(MachineJudgement).values(reason=SECRETS[0], raw_answer=SECRETS[0]))
        s.execute(update(GoldDocument).values(reason=SECRETS[1]))
        bobs = s.scalars(
            select(Assignment).where(
                Assignment.user_id == world.users["bob"], Assignment.active.is_(True)
            )
        ).all()
        queues = [(a.id, judging.document_sequence(s, a)) for a in bobs]
    with store.connection() as connection:
        for assignment_id, docs in queues:
            for docno in docs:
                judging.record_judgement(
                    connection,
                    assignment_id,
                    world.users["bob"],
                    judging.JudgementInput(docno, 2, comment=SECRETS[2]),
                )
    carol = as_user("carol")
    carol.post("/assess/work", data={})  # adaptive routing: a judge more where judges disagree
    mine = carol.get("/api/v1/assignments").json
    ids = [a["id"] for a in (mine if isinstance(mine, list) else mine["assignments"])]
    assert len(ids) >= 2
    pages = ["/assess/", "/assess/progress", "/api/v1/progress", "/api/v1/assignments",
             f"/assess/campaigns/{world.campaign_id}/practice"]  # fmt: skip
    for aid in ids:
        state = carol.get(f"/api/v1/assignments/{aid}").json
        pages += [f"/assess/{aid}", f"/api/v1/assignments/{aid}", f"/api/v1/assignments/{aid}/next"]
        pages += [f"/api/v1/assignments/{aid}/documents/{i}" for i in range(state["total"])]
    seen = 0
    for url in pages:
        response = carol.get(url, follow_redirects=True)
        assert response.status_code == 200, url
        for secret in SECRETS:
            assert secret not in response.text, (url, secret)
        assert "machine:" not in response.text, url
        seen += 1
    assert seen == len(pages)
