"""The evaluation page's topic-set and incomplete-qrels choices (issue 10 §2, §3)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import delete, select

from tests.analysis.test_incomplete_campaigns import SHORT_RUN
from tests.analysis.test_web_reports import login
from tests.web.conftest import FAST_HASH
from workbench.services import run_imports
from workbench.services.campaigns import get_campaign
from workbench.services.users import create_user
from workbench.store.models import Campaign, FinalLabel
from workbench.web import create_app


@pytest.fixture
def client_and_id(evaluated, database_url, tmp_path):
    path = tmp_path / "runE.txt"
    path.write_text(SHORT_RUN)
    with evaluated.session() as s:
        run_imports.import_runs(s, get_campaign(s, "demo"), [path], contributes=False)
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
    return login(app, "organiser", "a long secret 1"), campaign_id


def test_the_page_lists_missing_topics_and_offers_the_common_set(client_and_id):
    client, cid = client_and_id
    page = client.get(f"/reports/{cid}/evaluation?measures=map").get_data(as_text=True)
    assert "Every run is evaluated over the 3 judged topics of the final qrels" in page
    assert "runE lacks 2 judged topic(s), scored 0: q2, q3." in page
    assert "<th>Missing topics</th>" in page and "<td>q2 q3</td>" in page
    assert '<option value="common">common</option>' in page and "only the judged topics" in page
    common = client.get(f"/reports/{cid}/evaluation?measures=map&topic_set=common")
    text = common.get_data(as_text=True)
    assert "dropped: q2 (lacked by runE); q3 (lacked by runE)." in text
    assert "No test on map: fewer than 2 topics with scores." in text
    assert '<option value="common" selected>' in text
    assert "topic_set=common" in text  # the downloads keep the choice
    download = client.get(f"/reports/{cid}/evaluation.json?measures=map&topic_set=common")
    document = json.loads(download.get_data(as_text=True))
    summary = document["sections"][0]["data"]
    assert summary["scope"]["dropped"] == {"q2": ["runE"], "q3": ["runE"]}
    assert summary["notes"][0].startswith("Common-topic set: only the 1 of the 3")
    assert document["notes"][0] == summary["notes"][0]  # the report's notes say it first


def test_incomplete_final_qrels_need_the_explicit_choice(client_and_id, evaluated):
    client, cid = client_and_id
    with evaluated.session() as s:
        s.execute(delete(FinalLabel).where(FinalLabel.docno == "d11"))
    refused = client.get(f"/reports/{cid}/evaluation?measures=map").get_data(as_text=True)
    assert "1 of the 14 pooled or judged documents lack a final label" in refused
    assert 'id="summary-table"' not in refused and 'id="evaluation-options"' in refused
    allowed = client.get(f"/reports/{cid}/evaluation?measures=map&allow_incomplete=1")
    text = allowed.get_data(as_text=True)
    assert 'id="summary-table"' in text and "INCOMPLETE qrels, evaluated as asked" in text
    assert 'name="allow_incomplete" value="1" checked' in text
    latex = client.get(f"/reports/{cid}/evaluation.latex?measures=map&allow_incomplete=1")
    assert "INCOMPLETE qrels" in latex.get_data(as_text=True)
    no_choice = client.get(f"/reports/{cid}/evaluation.latex?measures=map").get_data(as_text=True)
    assert "Not available: 1 of the 14 pooled or judged documents lack" in no_choice
