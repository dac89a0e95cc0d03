"""Bad input gets a 4xx and changes nothing, never a 500 (issue 11 §3, §6, §8 headers).

The API answers every error as JSON under /api/v1 (unknown routes and methods too); the web
app shows its own error page. Bodies are limited per route; temporary upload folders of
dead workers are removed.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from flask import Flask

from tests.hardening.conftest import row_counts
from tests.web.conftest import World, client_factory, get_store_of, make_app
from workbench import limits
from workbench.web import uploads


def counts(app: Flask) -> dict[str, int]:
    with get_store_of(app).session() as session:
        return row_counts(session)


def judgement_url(world: World) -> str:
    return f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"


RAW_BODIES = [
    '{"docno": "D1", "grade": 9223372036854775808}',
    '{"docno": "D1", "grade": 2147483648}',
    '{"docno": "D1", "grade": -9223372036854775809}',
    '{"docno": "D1", "grade": 1, "time_spent_ms": NaN}',
    '{"docno": "D1", "grade": 1, "time_spent_ms": Infinity}',
    '{"docno": "D1", "grade": 1, "time_spent_ms": -Infinity}',
    '{"docno": "D1", "grade": 1, "time_spent_ms": 1e999}',
    '{"docno": "D1", "grade": 1, "comment": "\\ud800"}',
    '{"docno": "\\udfff", "grade": 1}',
    '{"docno": "D1", "grade": 1, "client_id": "\\ud83d"}',
    '{"docno": "D1", "grade": null, "cannot_judge": "\\udc00 broken"}',
    "[" * 1000 + "]" * 1000,
    '{"a":' * 1000 + "1" + "}" * 1000,
    '{"docno": "D1", "grade": ' + "9" * 5000 + "}",
    '{"docno": "D1", "grade": 1, "time_spent_ms": ' + "9" * 5000 + "}",
    '{"docno": "D1", "grade": 1, "time_spent_ms": 1' + "0" * 4000 + ".5}",
]


@pytest.mark.parametrize("body", RAW_BODIES, ids=range(len(RAW_BODIES)))
def test_hostile_json_is_a_json_400_and_stores_nothing(app: Flask, world: World, body: str) -> None:
    alice = client_factory(app)("alice")
    before = counts(app)
    response = alice.post(judgement_url(world), data=body, content_type="application/json")
    assert response.status_code == 400, response.text
    assert response.is_json and response.json["error"]
    assert counts(app) == before


def test_a_long_cannot_judge_reason_is_refused(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    before = counts(app)
    body = {"docno": "D1", "grade": None, "cannot_judge": "x" * (limits.CANNOT_JUDGE + 1)}
    response = alice.post(judgement_url(world), json=body)
    assert response.status_code == 400 and "cannot_judge" in response.json["error"]
    assert counts(app) == before


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (2**31, "campaign must be between"),
        (-(2**31), "campaign must be between"),
        (10**30, "an integer of 31 digits is out of range"),  # the JSON reader's own bound
    ],
)
def test_ids_in_json_bodies_beyond_the_column_range_are_400(
    app: Flask, world: World, value: int, said: str
) -> None:
    """Asking for work in campaign 2**31 overflowed PostgreSQL's INTEGER (a 500, found by
    schemathesis in CI's PostgreSQL pass)."""
    alice = client_factory(app)("alice")
    before = counts(app)
    response = alice.post("/api/v1/work", json={"campaign": value})
    assert response.status_code == 400, response.text
    assert said in response.json["error"]
    assert counts(app) == before


def test_the_json_api_takes_kilobytes(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    body = json.dumps({"docno": "D1", "grade": 1, "comment": "x" * limits.API_BODY_BYTES})
    response = alice.post(judgement_url(world), data=body, content_type="application/json")
    assert response.status_code == 413 and "error" in response.json


def test_forms_take_a_megabyte_and_uploads_more(app: Flask, world: World) -> None:
    client = app.test_client()
    big = {"username": "x" * (2 * limits.FORM_BODY_BYTES), "password": "y"}
    assert client.post("/login", data=big).status_code == 413
    admin = client_factory(app)("admin")
    topics = b"".join(
        b'{"qid": "X%d", "title": "%s"}\n' % (i, b"t" * 1000) for i in range(2 * 1024)
    )
    assert len(topics) > limits.FORM_BODY_BYTES
    response = admin.post(
        f"/admin/campaigns/{world.campaign_id}/upload/topics",
        data={"files": (io.BytesIO(topics), "many.jsonl")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 303
    assert "topics: 2048 added" in admin.get(response.location).text


URL_IDS = [
    "/api/v1/assignments/9223372036854775808",
    "/api/v1/assignments/2147483648/documents/0",
    "/api/v1/assignments/1/documents/99999999999999999999",
    "/api/v1/campaigns/99999999999/progress",
]


@pytest.mark.parametrize("url", URL_IDS)
def test_ids_beyond_the_column_range_are_404(app: Flask, world: World, url: str) -> None:
    response = client_factory(app)("admin").get(url)
    assert response.status_code == 404 and "error" in response.json


def test_admin_ids_beyond_the_column_range_are_404_pages(app: Flask, world: World) -> None:
    admin = client_factory(app)("admin")
    for url in ("/admin/campaigns/9223372036854775808", "/reports/99999999999/evaluation"):
        response = admin.get(url)
        assert response.status_code == 404
        assert "<h1>404" in response.text


def test_api_errors_are_json_for_unknown_routes_and_methods(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    missing = alice.get("/api/v1/nothing-here")
    assert missing.status_code == 404 and "error" in missing.json
    wrong_method = alice.delete(judgement_url(world))
    assert wrong_method.status_code == 405 and "error" in wrong_method.json
    assert "POST" in wrong_method.headers["Allow"]


@pytest.mark.parametrize(
    ("method", "url", "code"),
    [("GET", "/nothing-here", 404), ("DELETE", "/login", 405), ("GET", "/admin/", 403)],
)
def test_web_errors_use_the_apps_error_page(
    app: Flask, world: World, method: str, url: str, code: int
) -> None:
    response = client_factory(app)("alice").open(url, method=method)
    assert response.status_code == code
    assert f"<h1>{code}" in response.text and 'class="topbar"' in response.text


def test_a_server_error_shows_the_error_page_without_the_exception(
    world_url, tmp_path: Path, world: World
) -> None:
    app = make_app(world_url[0], tmp_path, TESTING=False, PROPAGATE_EXCEPTIONS=False)

    @app.get("/boom")
    def boom():  # type: ignore[no-untyped-def]
        raise RuntimeError("secret detail")

    response = app.test_client().get("/boom")
    assert response.status_code == 500
    assert "<h1>500" in response.text and "secret detail" not in response.text
    get_store_of(app).dispose()


@pytest.mark.parametrize(
    ("url", "form", "message"),
    [
        ("/admin/campaigns", {"name": "c9", "relevance_level": "²"}, "relevance level"),
        ("/admin/campaigns", {"name": "line\nbreak"}, "one line"),
        ("/admin/campaigns", {"name": "nul\x00name"}, "one line"),
        ("/admin/campaigns/{c}/pools", {"strategy": "depth", "depth": "0"}, "depth"),
        ("/admin/campaigns/{c}/pools", {"strategy": "depth", "seed": "-1"}, "seed"),
        ("/admin/campaigns/{c}/pools", {"strategy": "depth", "seed": str(2**63)}, "seed"),
        ("/admin/campaigns/{c}/pools", {"strategy": "depth", "depth": "²"}, "depth"),
        ("/admin/campaigns/{c}/assignments/auto", {"judges_per_topic": "0"}, "judges"),
        ("/admin/users", {"username": "x\ny", "password": "a fine password"}, "printable"),
        ("/admin/users", {"username": "newbie", "password": "1234567890"}, "common"),
    ],
)
def test_admin_forms_refuse_bad_values_with_a_message(
    app: Flask, world: World, url: str, form: dict, message: str
) -> None:
    admin = client_factory(app)("admin")
    before = counts(app)
    response = admin.post(url.format(c=world.campaign_id), data=form, follow_redirects=True)
    assert response.status_code == 200
    assert 'class="flash error' in response.text and message in response.text
    assert counts(app) == before


def test_long_upload_file_names_are_shortened(app: Flask, world: World) -> None:
    admin = client_factory(app)("admin")
    name = "t" * 300 + ".jsonl"
    response = admin.post(
        f"/admin/campaigns/{world.campaign_id}/upload/topics",
        data={"files": (io.BytesIO(b'{"qid": "L1", "title": "long"}\n'), name)},
        content_type="multipart/form-data",
    )
    assert response.status_code == 303
    assert "topics: 1 added" in admin.get(response.location).text


def test_security_headers(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    for url in ("/account/password", "/login", "/api/v1/me"):
        headers = alice.get(url).headers
        assert headers["Cache-Control"] == "no-store", url
        assert "form-action 'self'" in headers["Content-Security-Policy"]
        assert "base-uri 'none'" in headers["Content-Security-Policy"]
        assert "Strict-Transport-Security" not in headers
    assert "no-store" not in alice.get("/static/style.css").headers.get("Cache-Control", "")
    token_page = client_factory(app)("admin").post(
        f"/admin/users/{world.users['carol']}", data={"action": "token"}
    )
    assert token_page.headers["Cache-Control"] == "no-store"


def test_hsts_when_cookies_are_secure(
    world_url, tmp_path: Path, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_SECURE_COOKIES", "1")
    app = make_app(world_url[0], tmp_path)
    headers = app.test_client().get("/login").headers
    assert headers["Strict-Transport-Security"].startswith("max-age=")
    get_store_of(app).dispose()


def test_upload_folders_of_dead_workers_are_removed(app: Flask, world: World, tmp_path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    root = uploads.uploads_root()
    root.mkdir(mode=0o700, exist_ok=True)
    orphan = root / f"{uploads.PREFIX}{dead.stdout.strip()}-leftover"
    (orphan / "0").mkdir(parents=True)
    (orphan / "0" / "big.run").write_bytes(b"x" * 1000)
    mine = root / f"{uploads.PREFIX}{os.getpid()}-busy"
    mine.mkdir()
    admin = client_factory(app)("admin")
    admin.post(
        f"/admin/campaigns/{world.campaign_id}/upload/topics",
        data={"files": (io.BytesIO(b'{"qid": "N1", "title": "new"}\n'), "t.jsonl")},
        content_type="multipart/form-data",
    )
    assert not orphan.exists()
    assert mine.exists()  # a folder of a live process stays
    mine.rmdir()
    assert not [p for p in root.iterdir() if p.name.startswith(f"{uploads.PREFIX}{os.getpid()}")]


def test_evaluation_with_only_non_numeric_measures_is_a_message(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    for docno, grade in [("D1", 1), ("D2", 0)]:
        assert alice.post(judgement_url(world), json={"docno": docno, "grade": grade}).status_code
    admin = client_factory(app)("admin")
    query = "qrels=alice&allow_incomplete=1"
    page = admin.get(f"/reports/{world.campaign_id}/evaluation?measures=runid+num_q&{query}")
    assert page.status_code == 200  # num_q in the summary; no measure for the rest
    assert "none of the measures runid, num_q has a per-topic value" in page.text
    download = admin.get(f"/reports/{world.campaign_id}/evaluation.csv?measures=runid&{query}")
    assert download.status_code == 200
    assert "none of the measures runid is a number" in download.text


@pytest.mark.parametrize("level", ["²", "1e3", str(2**70)])
def test_export_options_are_bounded_integers(app: Flask, world: World, level: str) -> None:
    admin = client_factory(app)("admin")
    api = admin.get(f"/api/v1/campaigns/{world.campaign_id}/export/qrels?binary_level={level}")
    assert api.status_code == 400 and "binary_level" in api.json["error"]
    page = admin.get(f"/admin/campaigns/{world.campaign_id}/download/qrels?binary_level={level}")
    assert page.status_code == 303


def test_a_truncated_gzip_upload_is_a_message_and_imports_nothing(app: Flask, world: World) -> None:
    import gzip

    admin = client_factory(app)("admin")
    before = counts(app)
    good = gzip.compress(b'{"docno": "D1", "title": "x", "text": "y"}\n' * 50)
    for blob in (good[: len(good) // 2], good[:10] + b"\x00" * 30 + good[40:], b"\x1f\x8b junk"):
        response = admin.post(
            f"/admin/campaigns/{world.campaign_id}/upload/documents",
            data={"files": (io.BytesIO(blob), "d.jsonl.gz")},
            content_type="multipart/form-data",
        )
        assert response.status_code == 400
        assert 'class="flash error' in response.text
    assert counts(app) == before


def test_an_adjudication_reason_is_bounded(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    assert alice.post(judgement_url(world), json={"docno": "D1", "grade": 1}).status_code == 201
    admin = client_factory(app)("admin")
    before = counts(app)
    form = {"qid": "T1", "docno": "D1", "grade": "1", "reason": "x" * (limits.REASON + 1)}
    response = admin.post(f"/reports/{world.campaign_id}/adjudication", data=form)
    assert response.status_code in (303, 400)
    if response.status_code == 303:
        assert "at most" in admin.get(response.location).text
    assert counts(app) == before
