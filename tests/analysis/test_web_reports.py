"""The report pages through the Flask test client: admin only, agreement, adjudication + CSRF."""

from __future__ import annotations

import re

import pytest
from flask import url_for
from sqlalchemy import delete, select

from tests.web.conftest import FAST_HASH
from workbench.services.users import create_user
from workbench.store.models import Campaign, FinalLabel, User
from workbench.web import create_app

JOB_WAIT_S = 120  # the report jobs run in child processes; these tests read their results
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')


@pytest.fixture
def app(judged, database_url, tmp_path):
    with judged.session() as s:
        create_user(s, "organiser", "a long secret 1", role="admin", hash_method=FAST_HASH)
        create_user(s, "reader", "a long secret 2", role="assessor", hash_method=FAST_HASH)
        campaign_id = s.scalar(select(Campaign.id).where(Campaign.name == "demo"))
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test",
            "TESTING": True,
            "REPORT_BOOTSTRAP_RESAMPLES": 50,
            "REPORT_JOB_WAIT_SECONDS": JOB_WAIT_S,
        }
    )
    app.config["CAMPAIGN_ID"] = campaign_id
    return app


def token(client, path: str) -> str:
    page = client.get(path)
    match = CSRF.search(page.get_data(as_text=True))
    assert match, f"no CSRF meta tag on {path}"
    return match.group(1)


def login(app, username: str, password: str):
    client = app.test_client()
    with app.test_request_context():
        login_url = url_for("auth.login")
    response = client.post(
        login_url,
        data={"username": username, "password": password, "csrf_token": token(client, login_url)},
    )
    assert response.status_code in (302, 303), response.get_data(as_text=True)[:500]
    return client


@pytest.fixture
def admin(app):
    return login(app, "organiser", "a long secret 1")


def test_pages_are_admin_only(app):
    cid = app.config["CAMPAIGN_ID"]
    anonymous = app.test_client()
    assert anonymous.get(f"/reports/{cid}/agreement").status_code == 302
    reader = login(app, "reader", "a long secret 2")
    for path in (
        "/reports/",
        f"/reports/{cid}/agreement",
        f"/reports/{cid}/adjudication",
        f"/reports/{cid}/evaluation",
    ):
        assert reader.get(path).status_code == 403, path
    with app.test_request_context():
        topics_url = url_for("assess.topics")
    response = reader.post(
        f"/reports/{cid}/adjudication/apply",
        data={"rule": "any", "csrf_token": token(reader, topics_url)},
    )
    assert response.status_code == 403


def test_agreement_page_shows_tables_and_heat_maps(admin, app):
    cid = app.config["CAMPAIGN_ID"]
    page = admin.get(f"/reports/{cid}/agreement").get_data(as_text=True)
    assert 'id="agreement-pairs"' in page and 'id="agreement-topics"' in page
    assert page.count("data:image/svg+xml;base64,") == 3  # one heat map per pair
    for name in ("alice", "bob", "carol"):
        assert name in page
    graded = admin.get(f"/reports/{cid}/agreement?graded=1").get_data(as_text=True)
    assert "Quadratic kappa" in graded
    download = admin.get(f"/reports/{cid}/agreement.json?graded=1")
    assert download.headers["Content-Disposition"].endswith('demo-agreement.json"')
    assert download.get_json()["graded"] is True
    latex = admin.get(f"/reports/{cid}/agreement.latex").get_data(as_text=True)
    assert latex.count(r"\begin{tabular}") == 3


def test_adjudication_queue_is_anonymous_and_decisions_need_csrf(admin, app, judged):
    cid = app.config["CAMPAIGN_ID"]
    queue_url = f"/reports/{cid}/adjudication?rule=majority&tie=adjudicate"
    page = admin.get(queue_url).get_data(as_text=True)
    assert "Judge 1" in page and "Judge 3" in page
    assert "alice" not in page and "carol" not in page  # judges anonymised
    assert "no decision (tie)" in page  # q2/d6 is a tie
    decision = {
        "qid": "q2",
        "docno": "d6",
        "grade": "1",
        "reason": "on topic in part",
        "rule": "majority",
        "tie": "adjudicate",
    }
    refused = admin.post(f"/reports/{cid}/adjudication", data=decision)
    assert refused.status_code in (302, 303, 400)
    with judged.session() as s:
        assert s.scalars(select(FinalLabel)).first() is None
    response = admin.post(
        f"/reports/{cid}/adjudication", data=decision | {"csrf_token": token(admin, queue_url)}
    )
    assert response.status_code == 303
    with judged.session() as s:
        label = s.scalar(select(FinalLabel).where(FinalLabel.docno == "d6"))
        assert (label.grade, label.rule, label.reason) == (1, "adjudicated", "on topic in part")
        ids = {u.username: str(u.id) for u in s.scalars(select(User))}
        assert label.judges == {ids["alice"]: 2, ids["bob"]: 0, ids["carol"]: 1}
    after = admin.get(queue_url).get_data(as_text=True)
    assert "q2 · d6" not in after and ">d6<" not in after


def test_applying_a_rule_from_the_page(admin, app, judged):
    cid = app.config["CAMPAIGN_ID"]
    queue_url = f"/reports/{cid}/adjudication"
    response = admin.post(
        f"/reports/{cid}/adjudication/apply",
        data={"rule": "any", "tie": "adjudicate", "csrf_token": token(admin, queue_url)},
    )
    assert response.status_code == 303
    page = admin.get(response.headers["Location"]).get_data(as_text=True)
    assert "any: 12 final labels set, 0 kept as adjudicated, 0 left to adjudicate." in page
    with judged.session() as s:
        labels = {(f.qid, f.docno): f.grade for f in s.scalars(select(FinalLabel))}
    assert len(labels) == 12 and labels[("q3", "d9")] == 1


def test_a_decision_without_reason_is_refused(admin, app, judged):
    cid = app.config["CAMPAIGN_ID"]
    queue_url = f"/reports/{cid}/adjudication"
    response = admin.post(
        f"/reports/{cid}/adjudication",
        data={
            "qid": "q2",
            "docno": "d6",
            "grade": "1",
            "reason": " ",
            "csrf_token": token(admin, queue_url),
        },
        follow_redirects=True,
    )
    assert "needs a reason" in response.get_data(as_text=True)
    with judged.session() as s:
        assert s.scalars(select(FinalLabel)).first() is None


@pytest.fixture
def evaluated_app(evaluated, database_url):
    with evaluated.session() as s:
        create_user(s, "organiser", "a long secret 1", role="admin", hash_method=FAST_HASH)
        campaign_id = s.scalar(select(Campaign.id).where(Campaign.name == "demo"))
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test",
            "TESTING": True,
            "REPORT_JOB_WAIT_SECONDS": JOB_WAIT_S,
        }
    )
    app.config["CAMPAIGN_ID"] = campaign_id
    return app


def test_evaluation_page_has_every_section(evaluated_app, evaluated):
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign

    client = login(evaluated_app, "organiser", "a long secret 1")
    cid = evaluated_app.config["CAMPAIGN_ID"]
    page = client.get(f"/reports/{cid}/evaluation?measures=map+P.5&test=randomization").get_data(
        as_text=True
    )
    sections = (
        'id="summary-table"',
        'id="pairwise-tests-table"',
        'id="tukey-table"',
        'id="per-topic-table"',
        'id="per-topic-table-2"',  # P_5 too
        'id="ranking-stability-table"',
        "Leave-one-run-out",
        "Leave-one-group-out",
        "randomization test",
        "Holm",
    )
    for section in sections:
        assert section in page, section
    # per-topic bars, PR curves, interleaving has none; no efficiency figures, no sweep
    assert page.count("data:image/svg+xml;base64,") == 2
    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map"])
    best = max(table.runs, key=lambda r: r.summary["map"])
    assert f"<strong>{best.summary['map']:.4f}</strong>" in page


def test_evaluation_downloads(evaluated_app):
    client = login(evaluated_app, "organiser", "a long secret 1")
    cid = evaluated_app.config["CAMPAIGN_ID"]
    latex = client.get(f"/reports/{cid}/evaluation.latex?measures=map&correction=bh")
    assert latex.status_code == 200
    assert latex.headers["Content-Disposition"].endswith('demo-evaluation.tex"')
    text = latex.get_data(as_text=True)
    assert r"\begin{tabular}" in text and "Benjamini-Hochberg" in text and r"\textbf{" in text
    assert r"\subsection*{Ranking stability}" in text
    trec = client.get(f"/reports/{cid}/evaluation.trec?measures=map")
    assert "map                   \tall\t" in trec.get_data(as_text=True)
    assert trec.headers["Content-Disposition"].endswith('demo-evaluation.trec_eval.txt"')
    assert client.get(f"/reports/{cid}/evaluation.exe").status_code == 404


def test_evaluation_page_explains_missing_final_labels(evaluated_app, evaluated):
    with evaluated.session() as s:
        s.execute(delete(FinalLabel))
    client = login(evaluated_app, "organiser", "a long secret 1")
    cid = evaluated_app.config["CAMPAIGN_ID"]
    page = client.get(f"/reports/{cid}/evaluation").get_data(as_text=True)
    assert "no final labels yet" in page


def test_the_agreement_form_takes_the_bootstrap_settings(admin, app):
    cid = app.config["CAMPAIGN_ID"]
    page = admin.get(f"/reports/{cid}/agreement?bootstrap=0&seed=3").get_data(as_text=True)
    assert 'name="bootstrap" value="0"' in page and 'name="seed" value="3"' in page
    assert "agreement.csv?bootstrap=0&amp;seed=3" in page  # the downloads are the same report
    assert admin.get(f"/reports/{cid}/agreement.json?bootstrap=0&seed=3").status_code == 200
    assert admin.get(f"/reports/{cid}/agreement?bootstrap=99999").status_code == 400


def test_the_evaluation_form_takes_alpha_and_the_relevance_level(evaluated_app):
    admin = login(evaluated_app, "organiser", "a long secret 1")
    cid = evaluated_app.config["CAMPAIGN_ID"]
    query = "qrels=final&measures=map&alpha=0.2&level=2"
    document = admin.get(f"/reports/{cid}/evaluation.json?{query}").get_json()
    sections = {s["name"]: s["data"] for s in document["sections"]}
    assert sections["pairwise-tests"]["alpha"] == 0.2
    assert sections["summary"]["relevance_level"] == 2
    page = admin.get(f"/reports/{cid}/evaluation?{query}").get_data(as_text=True)
    assert 'name="alpha" value="0.2"' in page and 'name="level" value="2"' in page
    assert admin.get(f"/reports/{cid}/evaluation?alpha=2").status_code == 400
    assert admin.get(f"/reports/{cid}/evaluation?alpha=x").status_code == 400


def test_a_batch_decision_from_the_page(admin, app, judged):
    cid = app.config["CAMPAIGN_ID"]
    queue_url = f"/reports/{cid}/adjudication"
    response = admin.post(
        f"/reports/{cid}/adjudication/apply",
        data={
            "rule": "any",
            "tie": "adjudicate",
            "topics": "q1",
            "reason": "clear cases",
            "csrf_token": token(admin, queue_url),
        },
    )
    assert response.status_code == 303
    page = admin.get(response.headers["Location"]).get_data(as_text=True)
    assert "any on topic(s) q1: " in page
    with judged.session() as s:
        labels = list(s.scalars(select(FinalLabel)))
    assert labels and {(f.qid, f.reason) for f in labels} == {("q1", "clear cases")}
