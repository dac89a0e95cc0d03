"""The evaluation page's course-notes sections through the Flask test client."""

from __future__ import annotations

import base64

import pytest
from sqlalchemy import select

from tests.analysis.test_web_reports import login
from tests.web.conftest import FAST_HASH
from workbench.services.users import create_user
from workbench.store.models import Campaign
from workbench.web import create_app


@pytest.fixture
def course_notes_app(evaluated, database_url):
    with evaluated.session() as s:
        create_user(s, "organiser", "a long secret 1", role="admin", hash_method=FAST_HASH)
        campaign_id = s.scalar(select(Campaign.id).where(Campaign.name == "demo"))
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test",
            "TESTING": True,
            "REPORT_JOB_WAIT_SECONDS": 120,  # the report job's result, not its progress page
        }
    )
    app.config["CAMPAIGN_ID"] = campaign_id
    return app


def _page(app, query: str = "") -> str:
    client = login(app, "organiser", "a long secret 1")
    cid = app.config["CAMPAIGN_ID"]
    return client.get(f"/reports/{cid}/evaluation?measures=map{query}").get_data(as_text=True)


def test_sections_and_their_reasons(course_notes_app):
    page = _page(course_notes_app)
    for section in ("collection-measures", "power", "efficiency", "interleaving", "sweep"):
        assert f'id="section-{section}"' in page, section
    for option in ("num_docs", "delta", "sweep", "interleaving"):  # in the one form
        assert f'name="{option}"' in page, option
    # the fixture campaign stores no documents and no efficiency figures, and no pattern is given
    assert "has no documents: give the collection size N" in page
    assert "No run has efficiency figures" in page
    assert "Give a run-tag pattern" in page
    assert "With 3 topics, differences of at least" in page
    assert 'id="interleaving-table"' in page and "team-draft interleaving" in page
    assert 'id="power-table-2"' in page  # the topic-set size design, then the power table


def test_sections_with_n_a_sweep_and_efficiency(course_notes_app, evaluated, tmp_path):
    from workbench.services.campaigns import get_campaign
    from workbench.services.efficiency import import_efficiency

    sidecar = tmp_path / "eff.csv"
    sidecar.write_text("run,mean_latency_ms,cost_per_1000_queries\nrunA,30,1\nrunB,10,2\n")
    with evaluated.session() as s:
        import_efficiency(s, get_campaign(s, "demo"), sidecar)
    page = _page(
        course_notes_app,
        "&num_docs=1000&sweep=run%7Bx%7D&interleaving=balanced&delta=0.2",
    )
    assert 'id="collection-measures-table"' in page and "N = 1,000 documents" in page
    assert "Accuracy is not used to rank retrieval runs" in page
    assert 'id="efficiency-table"' in page and "runC, runD" in page
    assert 'id="sweep-table"' in page and "3-fold cross-validation" in page
    assert "balanced interleaving" in page
    assert "Topics to detect 0.2, paired t-test" in page
    images = [part.split('"')[0] for part in page.split("data:image/svg+xml;base64,")[1:]]
    svgs = [base64.b64decode(i).decode() for i in images]
    assert sum("Pareto frontier" in s for s in svgs) == 2  # against latency and against cost
    assert any("map over x" in s for s in svgs)  # the one-parameter sweep's curve


def test_bad_numbers_and_an_unknown_method_are_refused_with_the_form(course_notes_app):
    client = login(course_notes_app, "organiser", "a long secret 1")
    cid = course_notes_app.config["CAMPAIGN_ID"]
    for query, reason in (
        ("num_docs=-5", "num docs must be at least 1; got '-5'"),
        ("delta=abc", "delta must be a number; got 'abc'"),
        ("interleaving=<script>&test=t", "unknown interleaving '<script>'"),
    ):
        response = client.get(f"/reports/{cid}/evaluation?{query}")
        assert response.status_code == 400
        text = response.get_data(as_text=True)
        assert reason.replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;") in text
        assert "<script>" not in text and 'id="evaluation-options"' in text


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("test=z", "unknown test 'z'; expected one of t, wilcoxon, sign, randomization"),
        ("correction=none", "unknown correction 'none'; expected one of holm, bonferroni, bh"),
        ("topic_set=some", "unknown topic set 'some'; expected one of all, common"),
    ],
)
def test_an_unknown_choice_is_refused_as_the_cli_refuses_it(course_notes_app, query, reason):
    client = login(course_notes_app, "organiser", "a long secret 1")
    cid = course_notes_app.config["CAMPAIGN_ID"]
    response = client.get(f"/reports/{cid}/evaluation?{query}")
    assert response.status_code == 400
    assert reason in response.get_data(as_text=True).replace("&#39;", "'")
