"""Query-log pages and API: admin only, CSRF, escaped output, bad files change nothing."""

from __future__ import annotations

import html
import io
import json

import pytest

from workbench.services import campaigns, qrels_imports
from workbench.web.querylogs import anonymisation_key

from .conftest import csrf_token_of, get_store_of, login, make_app, write_campaign_files

KEY = bytes(range(32))


def log_text() -> str:
    """Six users search T1, typed in two ways: three click D2 (D2 > D1), three D3 (D3 > D1,
    D3 > D2); one user searches 'mail me@x.org' (masked, then dropped: fewer than k users)."""
    lines = []
    for u in range(6):
        lines.append(
            {
                "session": f"s{u}",
                "user": f"user{u}",
                "query": "Solar panel  RECYCLING" if u % 2 else "solar panel recycling",
                "time": 1000 + u,
                "results": [{"docno": f"D{r}", "rank": r} for r in range(1, 7)],
                "clicks": [{"docno": "D2" if u < 3 else "D3", "time": 1010 + u}],
            }
        )
    lines.append(
        {
            "session": "s9",
            "user": "user9",
            "query": "mail me@x.org",
            "time": 5,
            "results": [{"docno": "D1", "rank": 1}],
            "clicks": [],
        }
    )
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture
def app(world_url, tmp_path):
    """The world's app with the query-log key in its config (the job process that imports
    uploaded logs is given it)."""
    app = make_app(world_url[0], tmp_path, QUERYLOG_KEY=KEY)
    yield app
    get_store_of(app).dispose()


@pytest.fixture
def app_with_qrels(app, world, tmp_path):
    files = write_campaign_files(tmp_path / "qrels-files")
    with get_store_of(app).session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        qrels_imports.import_qrels(session, campaign, files["qrels"], name="ref")
    return app


def upload(client, campaign_id, text, **fields):
    data = {"log": (io.BytesIO(text.encode()), "clicks.jsonl"), "min_users": "3", **fields}
    return client.post(
        f"/querylogs/{campaign_id}/import", data=data, content_type="multipart/form-data"
    )


def imported_after(client, queued, guard_s: float = 120):  # type: ignore[no-untyped-def]
    """Follow an upload's task page until the import has ended; the page it then leads to."""
    import time

    deadline = time.monotonic() + guard_s
    page = client.get(queued.location)
    while page.status_code == 200 and 'id="import-task"' in page.text:
        assert time.monotonic() < deadline
        time.sleep(0.2)
        page = client.get(queued.location)
    assert page.status_code == 303
    return client.get(page.location)


def test_admin_imports_and_reads_the_report_and_agreement(app_with_qrels, world, as_user):
    admin = as_user("admin")
    page = admin.get(f"/querylogs/{world.campaign_id}")
    assert page.status_code == 200 and "Import a query log" in page.text
    done = upload(admin, world.campaign_id, log_text(), name="<b>log</b>")
    assert done.status_code == 303
    report = admin.get(done.headers["Location"])
    assert report.status_code == 200
    assert "&lt;b&gt;log&lt;/b&gt;" in report.text and "<b>log</b>" not in report.text
    assert "queries issued by fewer than 3 distinct users dropped" in report.text
    assert "6 impressions stored, 6 on 1 topic(s)" in report.text
    listed = admin.get(f"/querylogs/{world.campaign_id}")
    assert "&lt;b&gt;log&lt;/b&gt;" in listed.text
    compared = admin.get(
        f"/querylogs/{world.campaign_id}/agreement",
        query_string={"name": "<b>log</b>", "qrels": "ref", "min_support": "2"},
    )
    assert compared.status_code == 200, compared.text
    assert 'id="click-agreement"' in compared.text and 'id="click-evaluation"' in compared.text
    assert "Kendall&#39;s tau between the two rankings" in compared.text
    refused = admin.get(
        f"/querylogs/{world.campaign_id}/agreement",
        query_string={"name": "<b>log</b>", "qrels": "ref", "min_support": "0"},
    )
    assert refused.status_code == 200 and "at least 1" in refused.text
    assert admin.get(f"/querylogs/{world.campaign_id}/report?name=nope").status_code == 404


def test_bad_upload_changes_nothing_and_names_the_line(app_with_qrels, world, as_user):
    admin = as_user("admin")
    bad = log_text() + "{not json}\n"
    done = upload(admin, world.campaign_id, bad)
    assert done.status_code == 303
    page = admin.get(done.headers["Location"])
    assert "clicks.jsonl:8: expected a JSON object" in page.text
    assert "No query log yet." in page.text
    assert "/tmp" not in page.text


def test_assessors_and_anonymous_users_are_kept_out(app_with_qrels, world, as_user):
    alice = as_user("alice")
    for path in (
        f"/querylogs/{world.campaign_id}",
        f"/querylogs/{world.campaign_id}/report?name=x",
        f"/api/v1/campaigns/{world.campaign_id}/querylogs",
    ):
        assert alice.get(path).status_code == 403
        assert as_user(None).get(path).status_code in (302, 401)
    assert upload(alice, world.campaign_id, log_text()).status_code == 403


def test_import_form_needs_the_csrf_token(world_url, world, tmp_path):
    csrf_app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True, QUERYLOG_KEY=KEY)
    client = csrf_app.test_client()
    login(client, "admin")
    refused = upload(client, world.campaign_id, log_text())
    assert refused.status_code == 303 and "/report" not in refused.headers["Location"]
    page = client.get(f"/querylogs/{world.campaign_id}")
    assert "The form expired or was not sent from this site" in page.text
    assert "No query log yet." in page.text
    token = csrf_token_of(client.get(f"/querylogs/{world.campaign_id}").text)
    ok = upload(client, world.campaign_id, log_text(), csrf_token=token)
    assert ok.status_code == 303 and "/report" in ok.headers["Location"]


def test_api_import_report_agreement_evaluation_prefs(app_with_qrels, world, as_user):
    admin = as_user("admin")
    base = f"/api/v1/campaigns/{world.campaign_id}/querylogs"
    data = {"log": (io.BytesIO(log_text().encode()), "clicks.jsonl"), "min_users": "3"}
    created = admin.post(base, data=data, content_type="multipart/form-data")
    assert created.status_code == 201, created.text
    assert created.json["anonymisation"]["kept"] == {"impressions": 6, "users": 6, "queries": 1}
    assert admin.get(base).json["querylogs"][0]["name"] == "clicks.jsonl"
    report = admin.get(f"{base}/report", query_string={"name": "clicks.jsonl"}).json
    assert report["mapped_impressions"] == 6
    prefs = admin.get(f"{base}/prefs", query_string={"name": "clicks.jsonl"})
    assert prefs.text == (
        "T1 p1 1 D2 1\nT1 p1 1 D1 0\nT1 p2 1 D3 1\nT1 p2 1 D1 0\nT1 p3 1 D3 1\nT1 p3 1 D2 0\n"
    )
    agreement = admin.get(
        f"{base}/agreement", query_string={"name": "clicks.jsonl", "qrels": "ref"}
    ).json
    # D2 (grade 0) preferred to D1 (grade 2) disagrees; D3 is unjudged
    assert (agreement["consistent"], agreement["comparable"], agreement["share"]) == (0, 1, 0.0)
    evaluation = admin.get(
        f"{base}/evaluation", query_string={"name": "clicks.jsonl", "qrels": "ref"}
    ).json
    scores = {r["tag"]: r["clicks"] for r in evaluation["runs"]}
    # runA ranks D1, D2 above D3: none fulfilled; runB retrieves D3 but neither D1 nor D2:
    # D3 > D1 and D3 > D2 are implied and fulfilled, D2 > D1 does not occur: 2 of 3
    assert scores == pytest.approx({"runA": 0.0, "runB": 2 / 3})
    assert evaluation["kendall_tau"] == -1.0
    bad = admin.post(
        base, data={"log": (io.BytesIO(b"{}\n"), "x.jsonl")}, content_type="multipart/form-data"
    )
    assert bad.status_code == 400 and bad.json["error"].startswith("x.jsonl:1: expected")
    missing = admin.get(f"{base}/report", query_string={"name": "nope"})
    assert missing.status_code == 404 and "nope" in missing.json["error"]


def test_the_key_comes_from_the_instance_folder(world_url, tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_QUERYLOG_KEY", raising=False)
    app = make_app(world_url[0], tmp_path)
    with app.app_context():
        key = anonymisation_key()
    assert (tmp_path / "instance" / "querylog_key").read_text().strip() == key.hex()


def test_click_agreement_is_a_report_job_the_page_and_api_follow(world, world_url, tmp_path):
    """The bootstrap runs outside the request: with no wait, the page shows the job's
    progress (and reloads) and the API answers 202, until the job's result is shown."""
    import time

    from .conftest import client_factory, make_app

    app = make_app(world_url[0], tmp_path, REPORT_JOB_WAIT_SECONDS=0, QUERYLOG_KEY=KEY)
    files = write_campaign_files(tmp_path / "qrels-files")
    with get_store_of(app).session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        qrels_imports.import_qrels(session, campaign, files["qrels"], name="ref")
    admin = client_factory(app)("admin")
    queued = upload(admin, world.campaign_id, log_text())
    assert queued.status_code == 303 and "/imports/" in queued.location  # the import's task
    imported_after(admin, queued)
    path = f"/querylogs/{world.campaign_id}/agreement"
    query = {"name": "clicks.jsonl", "qrels": "ref"}
    first = admin.get(path, query_string=query)
    assert first.status_code == 200 and 'id="report-job"' in first.text
    assert 'http-equiv="refresh"' in first.text and 'id="click-agreement"' not in first.text
    api = f"/api/v1/campaigns/{world.campaign_id}/querylogs/agreement"
    answer = admin.get(api, query_string=query)
    deadline = time.monotonic() + 120  # a hang guard: the job runs in a child process
    while answer.status_code == 202 and time.monotonic() < deadline:
        assert answer.json["status"] in ("queued", "running")
        time.sleep(0.2)
        answer = admin.get(api, query_string=query)
    assert answer.status_code == 200 and answer.json["comparable"] == 1
    page = admin.get(path, query_string=query)
    assert 'id="click-agreement"' in page.text and 'id="report-job"' not in page.text
    get_store_of(app).dispose()


def test_page_and_api_name_the_uploaded_mapping_file_in_errors(app_with_qrels, world, as_user):
    admin = as_user("admin")
    api = f"/api/v1/campaigns/{world.campaign_id}/querylogs"
    for mapping, expected in (
        (b"T9\tsome query\n", "mine.tsv: topics not in campaign"),
        (b"no tab here\n", "mine.tsv:1: expected qid<TAB>query"),
    ):

        def files(mapping=mapping):
            return {
                "log": (io.BytesIO(log_text().encode()), "clicks.jsonl"),
                "mapping": (io.BytesIO(mapping), "mine.tsv"),
                "min_users": "3",
            }

        refused = admin.post(api, data=files(), content_type="multipart/form-data")
        assert refused.status_code == 400
        assert refused.json["error"].startswith(expected) and "/tmp" not in refused.json["error"]
        done = admin.post(
            f"/querylogs/{world.campaign_id}/import",
            data=files(),
            content_type="multipart/form-data",
        )
        page = admin.get(done.headers["Location"])
        assert html.escape(expected) in page.text and "/tmp" not in page.text
        assert admin.get(api).json["querylogs"] == []


def test_a_log_over_the_form_limit_is_imported_by_a_task(world, world_url, tmp_path):
    """A log larger than the 1 MiB form limit (and the API's 64 KB) is accepted up to the
    upload limit, saved to disk and imported by a task: the page follows it to the log's
    report; the API answers 202 with a Location that answers 200 with the summary."""
    import time

    from .conftest import client_factory

    app = make_app(world_url[0], tmp_path, REPORT_JOB_WAIT_SECONDS=0, QUERYLOG_KEY=KEY)
    admin = client_factory(app)("admin")
    text = log_text()
    big = text * (3 * 2**20 // len(text) + 1)  # 3 MiB: every impression seven times over
    assert len(big) > 3 * 2**20
    queued = upload(admin, world.campaign_id, big, name="web log")
    assert queued.status_code == 303 and "/imports/" in queued.location
    report = imported_after(admin, queued)
    assert "web log" in report.text and "impressions stored" in report.text
    api = f"/api/v1/campaigns/{world.campaign_id}/querylogs"
    data = {"log": (io.BytesIO(big.encode()), "api.jsonl"), "min_users": "3"}
    answer = admin.post(api, data=data, content_type="multipart/form-data")
    assert answer.status_code == 202 and answer.json["status"] in ("queued", "running")
    location = answer.headers["Location"]
    deadline = time.monotonic() + 120
    while answer.status_code == 202:
        assert time.monotonic() < deadline
        time.sleep(0.2)
        answer = admin.get(location)
    assert answer.status_code == 200, answer.text
    lines = big.count("\n")
    assert answer.json["anonymisation"]["read"]["impressions"] == lines
    assert answer.json["impressions"] == lines - lines // 7  # 'mail me@x.org': one user
    names = {log["name"] for log in admin.get(api).json["querylogs"]}
    assert names == {"web log", "api.jsonl"}
    assert admin.get(f"{api}/imports/999999").status_code == 404
    get_store_of(app).dispose()
