"""Undo as a revision (z on the judging pages) and evidence passages, through the judging API:
what the log keeps, what counts as current, what is refused, what is exported and what the
adjudication page shows (issue 25)."""

from __future__ import annotations

import csv
import io
import json

from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench.services import adjudication, adjudication_queue, campaigns, progress
from workbench.services.current_judgements import current_judgements
from workbench.store.models import Campaign, Judgement

TEXT_1 = "Text 1 about solar panel recycling <script>alert(1)</script>"  # D1's text (60 chars)


def url(world: World, path: str = "", owner: str = "alice") -> str:
    return f"/api/v1/assignments/{world.assignment[owner, 'T1']}{path}"


def current(app: Flask, world: World, user: str = "alice") -> dict[str, tuple]:
    with get_store_of(app).read_session() as s:
        rows = current_judgements(s, world.campaign_id, qid="T1", user_id=world.users[user])
    return {r.docno: (r.grade, r.cannot_judge, r.comment, r.evidence) for r in rows}


def set_evidence(app: Flask, world: World, on: bool) -> None:
    with get_store_of(app).session() as s:
        campaigns.set_judging(s, s.get(Campaign, world.campaign_id), evidence=on)


def test_undo_walks_back_through_the_log_as_new_events(app: Flask, as_user, world: World) -> None:
    alice = as_user("alice")
    for body in (
        {"docno": "D1", "grade": 2, "comment": "first"},
        {"docno": "D1", "grade": 1, "comment": "second"},
        {"docno": "D2", "grade": None, "cannot_judge": "garbled"},
    ):
        assert alice.post(url(world, "/judgements"), json=body).status_code == 201
    undo = alice.post(url(world, "/undo"), json={"client_id": "u-1"})
    assert undo.status_code == 201
    assert undo.json["undone"] == {"docno": "D2", "position": 1, "judgement": None}
    assert current(app, world) == {"D1": (1, None, "second", None)}  # D2 not judged any more
    again = alice.post(url(world, "/undo"), json={"client_id": "u-1"})  # a retry: done once
    assert again.status_code == 200 and again.json["undone"]["docno"] == "D2"
    second = alice.post(url(world, "/undo"), json={"client_id": "u-2"}).json["undone"]
    assert (second["docno"], second["judgement"]["grade"]) == ("D1", 2)
    assert second["judgement"]["comment"] == "first"
    assert alice.post(url(world, "/undo"), json={}).json["undone"]["judgement"] is None
    nothing = alice.post(url(world, "/undo"), json={})
    assert nothing.status_code == 400
    assert nothing.json["error"] == (
        "nothing to undo: no judgement of this topic is left to take back"
    )
    assert current(app, world) == {}
    with get_store_of(app).read_session() as s:
        log = s.execute(
            select(Judgement.id, Judgement.docno, Judgement.grade, Judgement.undoes_id)
            .where(Judgement.user_id == world.users["alice"])
            .order_by(Judgement.id)
        ).all()
        done = progress.campaign_progress(s, world.campaign_id)["assessors"]
    first, second_, third = (row.id for row in log[:3])
    assert [(r.docno, r.grade, r.undoes_id) for r in log] == [
        ("D1", 2, None),
        ("D1", 1, None),
        ("D2", None, None),
        ("D2", None, third),  # takes back the cannot-judge: no judgement
        ("D1", 2, second_),  # takes back the revision: the first grade again
        ("D1", None, first),  # takes back the first grade: no judgement
    ]
    assert next(a for a in done if a["username"] == "alice")["progress"].judged == 0
    # bob's judgements are his: alice's undo never touches them
    bob = as_user("bob")
    assert (
        bob.post(url(world, "/judgements", "bob"), json={"docno": "D3", "grade": 0}).status_code
        == 201
    )
    assert as_user("bob").post(url(world, "/undo", "bob"), json={}).json["undone"]["docno"] == "D3"
    assert as_user("alice").post(url(world, "/undo", "bob"), json={}).status_code == 404


def test_evidence_is_saved_with_the_judgement_and_checked(
    app: Flask, as_user, world: World
) -> None:
    alice = as_user("alice")
    marked = {"docno": "D1", "grade": 2, "evidence": [[10, 20], [0, 4], [3, 6]]}
    refused = alice.post(url(world, "/judgements"), json=marked)
    assert refused.status_code == 400
    assert refused.json["error"] == "campaign 'c1' does not collect evidence passages"
    set_evidence(app, world, True)
    saved = alice.post(url(world, "/judgements"), json=marked)
    assert saved.status_code == 201
    assert saved.json["judgement"]["evidence"] == [[0, 6], [10, 20]]  # sorted, overlaps merged
    assert current(app, world)["D1"][3] == [[0, 6], [10, 20]]
    for body, error in [
        (
            {"docno": "D1", "grade": 2, "evidence": [[50, 61]]},
            "past the end of the document's text (60 characters)",
        ),
        (
            {"docno": "D1", "grade": None, "cannot_judge": "x", "evidence": [[0, 4]]},
            "go with a grade",
        ),
        ({"docno": "D1", "grade": 2, "evidence": [[4, 4]]}, "from a start to a later end; got 4-4"),
        ({"docno": "D1", "grade": 2, "evidence": [[0, "9"]]}, "is [start, end] (integers)"),
        ({"docno": "D1", "grade": 2, "evidence": [[i, i + 1] for i in range(21)]}, "at most 20"),
    ]:
        response = alice.post(url(world, "/judgements"), json=body)
        assert response.status_code == 400 and error in response.json["error"], response.json
    # a revision without evidence, then undo: the passages come back
    assert (
        alice.post(url(world, "/judgements"), json={"docno": "D1", "grade": 1}).status_code == 201
    )
    assert current(app, world)["D1"][3] is None
    back = alice.post(url(world, "/undo"), json={}).json["undone"]["judgement"]
    assert (back["grade"], back["evidence"]) == (2, [[0, 6], [10, 20]])


def test_the_log_exports_evidence_and_undos(app: Flask, as_user, world: World) -> None:
    set_evidence(app, world, True)
    alice, admin = as_user("alice"), as_user("admin")
    alice.post(url(world, "/judgements"), json={"docno": "D1", "grade": 2, "evidence": [[0, 6]]})
    alice.post(url(world, "/undo"), json={})
    rows = list(
        csv.DictReader(
            io.StringIO(admin.get(f"/api/v1/campaigns/{world.campaign_id}/export/log").text)
        )
    )
    assert [(r["docno"], r["grade"], r["evidence"], r["revision"]) for r in rows] == [
        ("D1", "2", "0-6", "1"),
        ("D1", "", "", "2"),
    ]
    assert rows[1]["undoes"] == rows[0]["id"] and rows[0]["undoes"] == ""
    records = json.loads(
        admin.get(f"/api/v1/campaigns/{world.campaign_id}/export/log?format=json").text
    )
    assert [(r["evidence"], r["undoes"]) for r in records] == [
        ([[0, 6]], None),
        ([], records[0]["id"]),
    ]


def test_adjudication_shows_the_whole_document_answers_evidence_and_time(
    app: Flask, as_user, world: World
) -> None:
    set_evidence(app, world, True)
    as_user("alice").post(
        url(world, "/judgements"),
        json={
            "docno": "D1",
            "grade": 2,
            "comment": "on topic",
            "time_spent_ms": 3000,
            "evidence": [[7, 34]],
        },
    )
    bob = as_user("bob")
    bob.post(
        url(world, "/judgements", "bob"), json={"docno": "D1", "grade": 1, "time_spent_ms": 500}
    )
    bob.post(
        url(world, "/judgements", "bob"), json={"docno": "D1", "grade": 0, "time_spent_ms": 1500}
    )
    with get_store_of(app).read_session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        majority = adjudication.MergeSpec("majority")
        figures = adjudication_queue.queue_figures(s, campaign.id, majority)
        page = adjudication_queue.adjudication_page(s, campaign, majority, figures)
    [entry] = page.entries
    assert entry.text == TEXT_1  # whole, not a snippet
    assert [(a.judge, a.grade, a.comment, a.evidence, a.time_spent_ms) for a in entry.answers] == [
        ("Judge 1", 2, "on topic", ("about solar panel recycling",), 3000),
        ("Judge 2", 0, "", (), 2000),  # both of bob's events count
    ]
    assert [piece for piece, marked in entry.passages if marked] == ["about solar panel recycling"]
    assert "".join(piece for piece, _ in entry.passages) == TEXT_1
    assert dict(page.counts) == {"undecided": 1, "rule": 0, "adjudicated": 0, "all": 1}


def test_the_states_judgements_are_the_document_answers_without_their_time(
    app: Flask, as_user, world: World
) -> None:
    """The state request reads its judgements apart (`judging.my_marks`, six columns): at
    every position it gives what the document request gives of the same judgement, but its
    time, after revisions, a 'cannot judge', evidence, a comment and an undo."""
    set_evidence(app, world, True)
    client = as_user("alice")
    for body in (
        {"docno": "D1", "grade": 0, "comment": "first"},
        {"docno": "D1", "grade": 2, "evidence": [[10, 20], [0, 4]], "comment": "<b>x</b>"},
        {"docno": "D2", "grade": None, "cannot_judge": "garbled"},
        {"docno": "D3", "grade": 1},
        {"docno": "D6", "grade": 2, "comment": "undone"},
    ):
        assert client.post(url(world, "/judgements"), json=body).status_code == 201
    undo = client.post(url(world, "/undo"), json={"client_id": "u-1"})
    assert undo.status_code == 201 and undo.json["undone"]["docno"] == "D6"
    state = client.get(url(world)).json
    documents = [client.get(url(world, f"/documents/{p}")).json for p in range(state["total"])]
    judged = {d["docno"]: d["judgement"] for d in documents if d["judgement"] is not None}
    assert set(judged) == {"D1", "D2", "D3"}
    assert judged["D1"]["evidence"] == [[0, 4], [10, 20]] and judged["D2"]["grade"] is None
    for document, mark in zip(documents, state["judgements"], strict=True):
        if document["judgement"] is None:
            assert mark is None
        else:
            assert "created_at" in document["judgement"]
            assert mark == {k: v for k, v in document["judgement"].items() if k != "created_at"}
