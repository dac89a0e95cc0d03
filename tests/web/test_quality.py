"""Gold documents, the practice set and the assessor dashboard, end to end.

The world: campaign c1, pool 1 pools T1 = D1 D2 D3 D6 D7 D8 and T2 likewise (depth 3 of runA
and runB; D4 and D5 are documents of the campaign outside the pool); alice and bob judge both
topics whole, carol nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from sklearn.metrics import accuracy_score, cohen_kappa_score
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench.cli import main
from workbench.services import (
    assessor_dashboard,
    assignments,
    gold,
    judging,
    qrels,
    qrels_imports,
)
from workbench.services.current_judgements import counted_judgements
from workbench.store.models import Assignment, Campaign, GoldDocument, User


def _campaign(s) -> Campaign:  # type: ignore[no-untyped-def]
    return s.get(Campaign, 1)


def _gold_world(app: Flask, *, share: float = 0.25) -> None:
    with get_store_of(app).session() as s:
        c = _campaign(s)
        gold.set_quality(s, c, gold_share=share)
        gold.mark(
            s,
            c,
            [
                gold.GoldItem("T1", "D4", 2, "recycling steps"),
                gold.GoldItem("T1", "D5", 0, "off topic"),
            ],
        )


def _aid(app: Flask, name: str, qid: str) -> int:
    with get_store_of(app).read_session() as s:
        return s.scalar(
            select(Assignment.id)
            .join(User, User.id == Assignment.user_id)
            .where(User.username == name, Assignment.qid == qid, Assignment.active.is_(True))
        )


def _sequence(app: Flask, name: str, qid: str) -> list[str]:
    with get_store_of(app).read_session() as s:
        return judging.document_sequence(s, s.get(Assignment, _aid(app, name, qid)))


def test_gold_documents_are_mixed_into_queues_and_look_like_any_other(
    app: Flask, as_user, world: World
) -> None:
    before = _sequence(app, "alice", "T1")
    _gold_world(app)
    queue = _sequence(app, "alice", "T1")
    assert sorted(queue) == sorted([*before, "D4", "D5"])  # 2 of 8 = a quarter
    assert [d for d in queue if d not in ("D4", "D5")] == before  # the others keep their order
    assert _sequence(app, "alice", "T2") == _sequence(app, "alice", "T2")  # no gold for T2
    alice = as_user("alice")
    aid = _aid(app, "alice", "T1")
    state = alice.get(f"/api/v1/assignments/{aid}").json
    assert state["total"] == 8
    documents = [alice.get(f"/api/v1/assignments/{aid}/documents/{i}").json for i in range(8)]
    assert {d["docno"] for d in documents} >= {"D4", "D5"}
    assert len({tuple(sorted(d)) for d in documents}) == 1  # the same fields for every document
    for response in [
        alice.get(f"/assess/{aid}"),
        *(alice.get(f"/api/v1/assignments/{aid}/documents/{i}") for i in range(8)),
    ]:
        assert "gold" not in response.text.lower() and "recycling steps" not in response.text
    progress = alice.get("/api/v1/assignments").json["assignments"]
    assert next(p for p in progress if p["id"] == aid)["progress"]["total"] == 8


def test_gold_judgements_stay_out_of_agreement_and_qrels_unless_chosen(
    app: Flask, world: World
) -> None:
    _gold_world(app)
    store = get_store_of(app)
    for docno in _sequence(app, "alice", "T1"):
        judging.submit_judgement(
            store, _aid(app, "alice", "T1"), world.users["alice"], judging.JudgementInput(docno, 1)
        )
    with store.session() as s:
        c = _campaign(s)
        counted = {(j.qid, j.docno) for j in counted_judgements(s, c)}
        assert ("T1", "D4") not in counted and ("T1", "D1") in counted
        labels, done = qrels.qrels_labels(s, c, assessor="alice")
        assert ("T1", "D4") not in labels and done.expected == 12  # T1 and T2: 6 each
        gold.set_quality(s, c, gold_in_qrels=True)
    with store.session() as s:
        c = _campaign(s)
        labels, _ = qrels.qrels_labels(s, c, assessor="alice")
        assert labels["T1", "D4"] == 1
        gold.set_quality(s, c, gold_in_qrels=False)
        # a pooled gold document: bob's T2 is withdrawn, alice judges T2 alone
        gold.mark(s, c, [gold.GoldItem("T2", "D3", 2, "")])
        assignments.unassign(s, s.get(Assignment, world.assignment["bob", "T2"]))
    for docno in _sequence(app, "alice", "T2"):
        judging.submit_judgement(
            store, _aid(app, "alice", "T2"), world.users["alice"], judging.JudgementInput(docno, 0)
        )
    with store.read_session() as s:
        c = _campaign(s)
        labels, done = qrels.qrels_labels(s, c)
        t2 = {d: g for (q, d), g in labels.items() if q == "T2"}
    assert t2["D3"] == 2  # its gold grade, not alice's 0
    assert set(t2.values()) == {0, 2} and len(t2) == 6


def test_dashboard_gold_accuracy_equals_scikit_learn_on_the_same_labels(
    app: Flask, as_user, world: World
) -> None:
    with get_store_of(app).session() as s:
        c = _campaign(s)
        gold.mark(
            s,
            c,
            [gold.GoldItem("T1", d, g) for d, g in [("D1", 2), ("D2", 0), ("D3", 1), ("D6", 0)]]
            + [gold.GoldItem("T2", d, g) for d, g in [("D1", 1), ("D2", 2), ("D3", 0)]],
        )
    given = {
        "T1": {"D1": 2, "D2": 1, "D3": 1, "D6": 0, "D7": 1, "D8": 0},
        "T2": {"D1": 0, "D2": 2, "D3": 0, "D6": 1, "D7": 1, "D8": 2},
    }
    store = get_store_of(app)
    for qid, grades in given.items():
        for docno, grade in grades.items():
            judging.submit_judgement(
                store,
                _aid(app, "alice", qid),
                world.users["alice"],
                judging.JudgementInput(docno, grade, time_spent_ms=12_000),
            )
            judging.submit_judgement(
                store,
                _aid(app, "bob", qid),
                world.users["bob"],
                judging.JudgementInput(docno, (grade + 1) % 3, time_spent_ms=3_000),
            )
    with store.read_session() as s:
        board = assessor_dashboard.assessor_dashboard(s, "c1", weights="quadratic")
        golden = gold.gold_grades(s, 1)
    row = next(r for r in board.rows if r.assessor == "alice")
    keys = sorted(golden)
    mine = [given[q][d] for q, d in keys]
    truth = [golden[k] for k in keys]
    assert row.gold is not None and row.gold.n == 7
    assert row.gold.accuracy.value == pytest.approx(accuracy_score(truth, mine))
    assert row.gold.kappa is not None
    assert row.gold.kappa.kappa == pytest.approx(
        cohen_kappa_score(mine, truth, weights="quadratic", labels=[0, 1, 2])
    )
    assert (
        row.judged == 12 and row.median_seconds == 12.0 and row.grades == {"0": 4, "1": 5, "2": 3}
    )
    assert row.agreement.pairs == 5  # the 12 documents less the 7 gold ones, each with bob
    bob = next(r for r in board.rows if r.assessor == "bob")
    assert bob.per_hour == pytest.approx(12 / (12 * 3 / 3600))
    assert [r.assessor for r in board.rows] == ["alice", "bob"]  # carol has no work here
    admin = as_user("admin")
    page = admin.get("/admin/campaigns/1/assessors?period=session")
    assert page.status_code == 200 and 'data-plot="grades"' in page.text
    assert "Drift of c1 by session" in page.text and "data:image/svg+xml;base64," in page.text
    csv = admin.get("/admin/campaigns/1/assessors.csv")
    assert csv.status_code == 200 and csv.headers["Content-Disposition"].endswith(
        'c1-assessors.csv"'
    )
    assert csv.text.startswith("Assessor,Active,Progress")
    data = json.loads(admin.get("/admin/campaigns/1/assessors.json").text)
    assert data["rows"][0]["gold"]["accuracy"]["value"] == pytest.approx(
        accuracy_score(truth, mine)
    )
    assert admin.get("/api/v1/campaigns/c1/assessors").json["campaign"] == "c1"
    assert "Assessor" in admin.get("/api/v1/campaigns/c1/assessors?format=md").text
    assert admin.get("/api/v1/campaigns/c1/assessors?period=week").status_code == 400
    assert admin.get("/admin/campaigns/1/assessors.docx").status_code == 404
    assert as_user("alice").get("/admin/campaigns/1/assessors").status_code == 403
    assert as_user("alice").get("/api/v1/campaigns/c1/assessors").status_code == 403


def test_assessors_see_their_own_progress_and_gold_accuracy_only_when_allowed(
    app: Flask, as_user, world: World
) -> None:
    _gold_world(app)
    store = get_store_of(app)
    for docno in _sequence(app, "alice", "T1"):
        judging.submit_judgement(
            store,
            _aid(app, "alice", "T1"),
            world.users["alice"],
            judging.JudgementInput(docno, 2 if docno == "D4" else 1),
        )
    alice = as_user("alice")
    page = alice.get("/assess/progress").text
    assert "8 / 14" in page and "not shown in this campaign" in page
    mine = alice.get("/api/v1/progress").json["campaigns"][0]
    assert mine["gold_shown"] is False and mine["gold_accuracy"] is None
    with store.session() as s:
        gold.set_quality(s, _campaign(s), show_gold_accuracy=True)
    page = alice.get("/assess/progress").text
    assert "50 % of 2 checks" in page  # D4 right, D5 wrong
    # what the page shows, not its random CSRF tokens (which may contain "D5")
    shown = re.sub(r'name="csrf[-_]token" (content|value)="[^"]*"', "", page)
    assert "csrf" not in shown.replace('name="csrf', "")  # every token was taken out
    assert "D4" not in shown and "D5" not in shown and "bob" not in shown
    assert alice.get("/api/v1/progress").json["campaigns"][0]["gold_n"] == 2


def test_admins_manage_gold_and_the_quality_settings_on_the_web(
    app: Flask, as_user, world: World, tmp_path: Path
) -> None:
    qrels_file = tmp_path / "earlier.qrels"
    qrels_file.write_text("T1 0 D1 2\nT1 0 D2 0\nT1 0 D4 1\nT1 0 D99 1\nT2 0 D3 1\n")
    with get_store_of(app).session() as s:
        qrels_imports.import_qrels(s, _campaign(s), qrels_file, name="earlier")
    admin = as_user("admin")
    page = admin.get("/admin/campaigns/1/quality").text
    assert "earlier" in page and "No gold documents yet." in page
    done = admin.post(
        "/admin/campaigns/1/gold/from",
        data={"source": "qrels", "qrels": "earlier", "per_topic": "2", "seed": "1"},
        follow_redirects=True,
    )
    # T1: one of each grade first (D1 = 2, then D4 = 1); D99 has no text and is left out
    assert "3 gold document(s) marked in 2 topic(s) (1 without text left out)." in done.text
    with get_store_of(app).read_session() as s:
        marked = {(g.qid, g.docno): g.grade for g in s.scalars(select(GoldDocument))}
    assert marked == {("T1", "D1"): 2, ("T1", "D4"): 1, ("T2", "D3"): 1}
    bad = admin.post(
        "/admin/campaigns/1/gold",
        data={"qid": "T1", "docno": "D2", "grade": "7"},
        follow_redirects=True,
    )
    assert "grade(s) 7 are not on the scale" in bad.text
    missing = admin.post(
        "/admin/campaigns/1/gold",
        data={"qid": "T1", "docno": "D99", "grade": "1"},
        follow_redirects=True,
    )
    assert "have no text in the campaign" in missing.text
    saved = admin.post(
        "/admin/campaigns/1/quality/settings",
        data={"gold_share": "10%", "show_gold_accuracy": "1"},
        follow_redirects=True,
    )
    assert "Quality settings saved." in saved.text
    assert (
        admin.post(
            "/admin/campaigns/1/quality/settings", data={"gold_share": "0.9"}, follow_redirects=True
        ).text.count("must be between 0 and 0.5")
        == 1
    )
    with get_store_of(app).read_session() as s:
        assert gold.quality_config(s, 1) == gold.QualityConfig(0.1, False, True)
    removed = admin.post(
        "/admin/campaigns/1/gold/remove", data={"qid": "T1", "docno": "D1"}, follow_redirects=True
    )
    assert "1 gold mark(s) removed." in removed.text
    assert as_user("alice").post("/admin/campaigns/1/gold/remove").status_code == 403


def test_the_practice_set_comes_before_the_first_topic_with_feedback(
    app: Flask, as_user, world: World
) -> None:
    admin = as_user("admin")
    bad = admin.post(
        "/admin/campaigns/1/practice",
        data={"items": "T1\tD1\t2\tok\nT1 D2 0\n"},
        follow_redirects=True,
    )
    assert (
        "practice items:2: expected qid&lt;TAB&gt;docno&lt;TAB&gt;grade&lt;TAB&gt;reason"
        in bad.text
    )
    # bob judged before the practice set existed: he is not sent back to practise
    judging.submit_judgement(
        get_store_of(app),
        world.assignment["bob", "T1"],
        world.users["bob"],
        judging.JudgementInput("D1", 1),
    )
    saved = admin.post(
        "/admin/campaigns/1/practice",
        data={"items": "T1\tD1\t2\tIt describes panel recycling.\nT2\tD2\t0\tOff topic.\n"},
        follow_redirects=True,
    )
    assert "Practice set of 2 item(s) saved." in saved.text
    alice, bob = as_user("alice"), as_user("bob")
    assert bob.get(f"/assess/{world.assignment['bob', 'T1']}").status_code == 200
    sent = alice.get(f"/assess/{world.assignment['alice', 'T1']}")
    assert sent.status_code == 302 and sent.headers["Location"].endswith(
        "/assess/campaigns/1/practice"
    )
    first = alice.get("/assess/campaigns/1/practice").text
    assert "document 1 of 2" in first and "It describes" not in first  # no answer before judging
    item = int(first.split("/practice/")[1].split('"')[0])
    feedback = alice.post(
        f"/assess/campaigns/1/practice/{item}", data={"grade": "1"}, follow_redirects=True
    ).text
    assert "Your answer: <strong>Relevant</strong>" in feedback
    assert "Expected: <strong>Highly relevant</strong>" in feedback
    assert "It describes panel recycling." in feedback
    again = alice.post(
        f"/assess/campaigns/1/practice/{item}", data={"grade": "2"}, follow_redirects=True
    ).text
    assert "Your answer: <strong>Relevant</strong>" in again  # the first answer counts
    second = alice.get("/assess/campaigns/1/practice").text
    item2 = int(second.split("/practice/")[1].split('"')[0])
    last = alice.post(
        f"/assess/campaigns/1/practice/{item2}", data={"grade": "cannot"}, follow_redirects=True
    ).text
    assert "cannot judge" in last and "Start judging" in last
    assert alice.get(f"/assess/{world.assignment['alice', 'T1']}").status_code == 200
    assert as_user("carol").get("/assess/campaigns/1/practice").status_code == 404  # not hers
    assert alice.get("/assess/campaigns/1/practice/999999").status_code == 404
    listing = admin.get("/admin/campaigns/1/quality").text
    assert "0 of 2" not in listing and "<td>alice</td><td>2 / 2</td><td>0</td>" in listing


def test_quality_commands(world_url, world: World, tmp_path: Path) -> None:
    def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", world_url[0], *args], input=input)

    added = run("gold", "add", "--campaign", "c1", "T1", "D4", "2", "--reason", "steps")
    assert added.exit_code == 0, added.output
    assert run("gold", "add", "--campaign", "c1", "T9", "D4", "2").exit_code == 1
    settings = run("gold", "settings", "--campaign", "c1", "--share", "0.2", "--show-accuracy")
    assert "gold share 0.2, in qrels: False, accuracy shown: True" in settings.output
    listing = run("gold", "list", "--campaign", "c1")
    assert "T1\tD4\t2\tsteps" in listing.output and "gold share 0.2" in listing.output
    practice = tmp_path / "practice.tsv"
    practice.write_text("# qid docno grade reason\nT1\tD1\t2\tOn topic.\n")
    assert (
        "practice set of 1 item(s)"
        in run("practice", "set", "--campaign", "c1", str(practice)).output
    )
    practice.write_text("T1\tD1\ttwo\n")
    wrong = run("practice", "set", "--campaign", "c1", str(practice))
    assert wrong.exit_code == 1 and f"{practice}:1: expected an integer grade" in wrong.output
    board = run("assessors", "--campaign", "c1", "--format", "csv", "--plots", str(tmp_path / "p"))
    assert board.exit_code == 0, board.output
    assert board.output.startswith("Assessor,Active,Progress")
    assert (tmp_path / "p" / "grades.svg").exists()
    assert run("gold", "remove", "--campaign", "c1").output.startswith("1 gold mark(s) removed")
