"""Every admin API route under /api/v1/campaigns names its campaign by name or by id, resolved
the one way (`campaigns.get_campaign`): the adaptive-pool and query-log routes too."""

from __future__ import annotations

import io
import re

from flask import Flask

from tests.web.conftest import World, get_store_of, write_campaign_files
from tests.web.test_adaptive_pools import _adaptive_world
from tests.web.test_querylogs_web import KEY, log_text
from workbench.services import campaigns, qrels_imports


def test_every_campaign_route_takes_a_name_or_an_id(app: Flask) -> None:
    rules = [r.rule for r in app.url_map.iter_rules() if r.rule.startswith("/api/v1/campaigns/")]
    assert len(rules) >= 11  # progress, export, 4 adaptive, 5 query-log routes
    for rule in rules:
        first = re.match(r"/api/v1/campaigns/<([^>]+)>", rule)
        assert first is not None and first.group(1) == "campaign_ref", rule


def test_adaptive_routes_by_name_and_by_id(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    _, pool_number, _ = _adaptive_world(app, world)
    by_id, by_name = (f"/api/v1/campaigns/{ref}" for ref in (world.campaign_id, "c1"))
    status = admin.get(f"{by_name}/pools/{pool_number}/adaptive")
    assert status.status_code == 200 and status.json["settings"]["strategy"] == "mm"
    assert status.json == admin.get(f"{by_id}/pools/{pool_number}/adaptive").json
    provenance = admin.get(f"{by_name}/adaptive-provenance").json
    assert provenance["campaign"] == world.campaign_id
    assert [p["pool"] for p in provenance["adaptive_pools"]] == [pool_number]
    assert provenance == admin.get(f"{by_id}/adaptive-provenance").json
    raised = admin.post(f"{by_name}/pools/{pool_number}/adaptive/budget", json={"budget": 5})
    assert raised.status_code == 200 and raised.json == {"budget": 5, "topics": 2}
    stopped = admin.post(f"{by_name}/pools/{pool_number}/adaptive/topics/T2/stop", json={})
    assert stopped.json == {"topic": "T2", "stopped": True}
    state = admin.get(f"{by_id}/pools/{pool_number}/adaptive").json
    topics = {t["qid"]: t for t in state["topics"]}
    assert topics["T1"]["budget"] == 5 and topics["T2"]["stopped"]
    unknown = admin.get("/api/v1/campaigns/nope/adaptive-provenance")
    assert unknown.status_code == 404 and unknown.json == {"error": "no campaign 'nope'"}


def test_query_log_routes_by_name_and_by_id(app: Flask, as_user, world: World, tmp_path) -> None:
    app.config["QUERYLOG_KEY"] = KEY
    files = write_campaign_files(tmp_path / "qrels-files")
    with get_store_of(app).session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        qrels_imports.import_qrels(session, campaign, files["qrels"], name="ref")
    admin = as_user("admin")
    by_id, by_name = (f"/api/v1/campaigns/{ref}/querylogs" for ref in (world.campaign_id, "c1"))
    data = {"log": (io.BytesIO(log_text().encode()), "clicks.jsonl"), "min_users": "3"}
    created = admin.post(by_name, data=data, content_type="multipart/form-data")
    assert created.status_code == 201, created.text
    listed = admin.get(by_name).json
    assert [log["name"] for log in listed["querylogs"]] == ["clicks.jsonl"]
    assert listed == admin.get(by_id).json
    name = {"name": "clicks.jsonl", "qrels": "ref"}
    report = admin.get(f"{by_name}/report", query_string=name)
    assert report.status_code == 200 and report.json["mapped_impressions"] == 6
    assert report.json == admin.get(f"{by_id}/report", query_string=name).json
    prefs = admin.get(f"{by_name}/prefs", query_string=name)
    assert prefs.text.startswith("T1 p1 1 D2 1\n")
    assert prefs.text == admin.get(f"{by_id}/prefs", query_string=name).text
    evaluation = admin.get(f"{by_name}/evaluation", query_string=name)
    assert evaluation.status_code == 200
    assert evaluation.json == admin.get(f"{by_id}/evaluation", query_string=name).json
    agreement = admin.get(f"{by_name}/agreement", query_string=name)
    assert agreement.status_code == 200
    assert (agreement.json["consistent"], agreement.json["comparable"]) == (0, 1)
    missing = admin.get("/api/v1/campaigns/nope/querylogs")
    assert missing.status_code == 404 and missing.json == {"error": "no campaign 'nope'"}


def test_the_openapi_document_says_what_a_campaign_ref_is(as_user, world: World) -> None:
    document = as_user(None).get("/api/v1/openapi.json").json
    status = document["paths"]["/api/v1/campaigns/{campaign_ref}/pools/{pool_id}/adaptive"]["get"]
    ref, pool = status["parameters"][:2]
    assert ref["schema"] == {"type": "string"} and "name or its id" in ref["description"]
    assert pool["schema"] == {"type": "integer"} and "number" in pool["description"]
    logs = document["paths"]["/api/v1/campaigns/{campaign_ref}/querylogs"]
    assert set(logs) == {"get", "post"}
