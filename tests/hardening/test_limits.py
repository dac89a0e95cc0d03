"""Limits and refusals: oversized uploads get 413; forms and the API refuse out-of-range grades,
unknown topics or documents and ids of other campaigns with a clear 4xx, changing nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from flask import Flask

from tests.hardening.conftest import row_counts
from tests.web.conftest import World, client_factory, get_store_of, make_app
from workbench.services import assignments, campaigns, pools, run_imports, topic_imports
from workbench.services import users as user_service

SMALL_LIMIT = 4096


@pytest.fixture
def small_app(world_url, tmp_path: Path, world: World):  # type: ignore[no-untyped-def]
    app = make_app(world_url[0], tmp_path / "small", MAX_CONTENT_LENGTH=SMALL_LIMIT)
    yield app
    get_store_of(app).dispose()


def counts(app: Flask) -> dict[str, int]:
    with get_store_of(app).session() as session:
        return row_counts(session)


def test_production_config_limits_request_size(app: Flask) -> None:
    assert 0 < app.config["MAX_CONTENT_LENGTH"] <= 1024**3


def test_oversized_upload_is_413_and_imports_nothing(small_app: Flask, world: World) -> None:
    admin = client_factory(small_app)("admin")
    before = counts(small_app)
    topics = b"".join(b'{"qid": "X%d", "title": "padding padding"}\n' % i for i in range(400))
    assert len(topics) > SMALL_LIMIT
    response = admin.post(
        f"/admin/campaigns/{world.campaign_id}/upload/topics",
        data={"files": (io.BytesIO(topics), "big.jsonl")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 413
    assert counts(small_app) == before


def test_oversized_judgement_is_413_json(small_app: Flask, world: World) -> None:
    alice = client_factory(small_app)("alice")
    before = counts(small_app)
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    body = json.dumps({"docno": "D1", "grade": 1, "comment": "x" * (2 * SMALL_LIMIT)})
    response = alice.post(url, data=body, content_type="application/json")
    assert response.status_code == 413
    assert "error" in response.json
    assert counts(small_app) == before


BAD_JUDGEMENTS = [
    ({"docno": "D1", "grade": 3}, 400, "not on the scale"),
    ({"docno": "D1", "grade": -1}, 400, "not on the scale"),
    ({"docno": "D1", "grade": "1"}, 400, "grade must be an integer"),
    ({"docno": "D1", "grade": True}, 400, "grade must be an integer"),
    ({"docno": "D1", "grade": 1.5}, 400, "grade must be an integer"),
    ({"docno": "D1", "grade": None}, 400, "reason"),
    ({"docno": "D4", "grade": 1}, 404, "not in this assignment"),  # in the campaign, not pooled
    ({"docno": "nope", "grade": 1}, 404, "not in this assignment"),
    ({"docno": "", "grade": 1}, 400, "docno"),
    ({"grade": 1}, 400, "docno"),
    ({"docno": "D1", "grade": 1, "client_id": "x" * 65}, 400, "client_id"),
    ({"docno": "D1", "grade": 1, "client_id": ""}, 400, "client_id"),
    ({"docno": "D1", "grade": 1, "comment": "x" * 10_001}, 400, "comment"),
    ({"docno": "D1", "grade": 1, "comment": 5}, 400, "comment"),
    ({"docno": "D1", "grade": 1, "time_spent_ms": "soon"}, 400, "time_spent_ms"),
    ([{"docno": "D1", "grade": 1}], 400, "JSON object"),
]


@pytest.mark.parametrize(("body", "status", "message"), BAD_JUDGEMENTS)
def test_api_refuses_bad_judgements_clearly(
    app: Flask, world: World, body: object, status: int, message: str
) -> None:
    alice = client_factory(app)("alice")
    before = counts(app)
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    response = alice.post(url, json=body)
    assert response.status_code == status
    assert message in response.json["error"]
    assert counts(app) == before


def test_api_refuses_a_body_that_is_not_json(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    response = alice.post(url, data=b"\xff\xfe<xml/>", content_type="application/json")
    assert response.status_code == 400
    assert "error" in response.json


@pytest.fixture
def second_campaign(app: Flask, world: World, tmp_path: Path) -> dict[str, int]:
    """Campaign 'c2' with a pool and an assignment of carol's (ids to misuse from c1)."""
    from tests.web.conftest import write_campaign_files

    files = write_campaign_files(tmp_path / "c2files")
    with get_store_of(app).session() as session:
        campaign = campaigns.create_campaign(session, "c2")
        topic_imports.import_topics(session, campaign, files["topics"])
        run_imports.import_runs(session, campaign, [files["runA"]])
        pool = pools.build_pool(session, campaign, strategy="depth", depth=2, seed=1)
        carol = user_service.get_user(session, "carol")
        assignment = assignments.assign(session, pool, "T1", carol)
        return {"campaign": campaign.id, "pool": pool.id, "assignment": assignment.id}


def test_ids_of_another_campaign_are_404_and_change_nothing(
    app: Flask, world: World, second_campaign: dict[str, int]
) -> None:
    admin = client_factory(app)("admin")
    c1 = world.campaign_id
    before = counts(app)
    posts = [
        f"/admin/campaigns/{c1}/assignments/{second_campaign['assignment']}/remove",
        f"/admin/campaigns/{c1}/assignments/{second_campaign['assignment']}/reassign",
        f"/admin/campaigns/{c1}/pools/{second_campaign['pool']}/extend",
    ]
    for url in posts:
        assert admin.post(url, data={"user": "bob", "runs": "runA"}).status_code == 404, url
    gets = [
        "/admin/campaigns/999999",
        "/api/v1/campaigns/999999/progress",
        "/api/v1/campaigns/999999/export/pool",
        "/reports/999999/agreement",
        f"/api/v1/assignments/{second_campaign['assignment']}",
    ]
    for url in gets:
        assert admin.get(url).status_code == 404, url
    assert counts(app) == before


def test_forms_refuse_bad_values_with_a_message_and_change_nothing(
    app: Flask, world: World
) -> None:
    admin = client_factory(app)("admin")
    before = counts(app)
    c1 = world.campaign_id
    refusals = [
        (f"/admin/campaigns/{c1}/pools", {"strategy": "depth", "depth": "abc"}),
        (f"/admin/campaigns/{c1}/assignments", {"user": "alice", "qids": "T99"}),
        (f"/admin/campaigns/{c1}/assignments/auto", {"judges_per_topic": "-2"}),
        (
            f"/reports/{c1}/adjudication",
            {"qid": "T1", "docno": "D1", "grade": "7", "reason": "x"},
        ),
        (f"/reports/{c1}/adjudication", {"qid": "T99", "docno": "D1", "grade": "1"}),
    ]
    for url, form in refusals:
        response = admin.post(url, data=form, follow_redirects=True)
        assert response.status_code in (200, 400, 404), (url, response.status_code)
        assert 'class="flash error' in response.text or response.status_code >= 400, url
    assert counts(app) == before


NUL_JUDGEMENTS = [
    {"docno": "D1", "grade": 1, "comment": "a\u0000b"},
    {"docno": "D1", "grade": 1, "client_id": "id\u0000"},
    {"docno": "D1", "grade": None, "cannot_judge": "broken\u0000"},
]


@pytest.mark.parametrize("body", NUL_JUDGEMENTS)
def test_api_refuses_nul_characters(app: Flask, world: World, body: dict) -> None:
    alice = client_factory(app)("alice")
    before = counts(app)
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    response = alice.post(url, json=body)
    assert response.status_code == 400
    assert counts(app) == before


def test_login_with_nul_characters_is_refused_like_a_wrong_password(
    app: Flask, world: World
) -> None:
    client = app.test_client()
    for form in ({"username": "ali\u0000ce", "password": "x"}, {"username": "a", "password": "\0"}):
        assert client.post("/login", data=form).status_code == 401
