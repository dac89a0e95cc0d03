"""Heavy report pages run as jobs: the page shows the job's progress, then its cached result;
a judgement makes the result stale (shown, marked, recomputed); a download waits for a result
as new as itself. The job runs in the app's worker process, as in production."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from tests.web.conftest import (
    PASSWORD,
    World,
    client_factory,
    get_store_of,
    make_app,
    serve_in_thread,
)
from tests.web.test_browser import (  # noqa: F401
    CHROMEDRIVER,
    CHROMIUM,
    browser,
    elements_now,
    log_in_as,
)
from workbench.services import jobs
from workbench.store.models import ReportJob, ReportResult
from workbench.web.report_jobs import seal, sealing_key, unseal

DEADLINE_S = 180.0
RELOAD = re.compile(r'http-equiv="refresh" content="1; url=([^"]+)"')


@pytest.fixture
def job_app(world_url: tuple[str, World], tmp_path: Path) -> Iterator[Flask]:
    """The world's app with requests that never wait for a job: they show its progress."""
    app = make_app(world_url[0], tmp_path, REPORT_JOB_WAIT_SECONDS=0)
    yield app
    get_store_of(app).dispose()


def _until(client: FlaskClient, path: str, done: str) -> str:
    """GET path until its page contains `done` (the job's result); the page's text."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        page = client.get(path).text
        if done in page:
            return page
        assert 'id="report-job"' in page, page
        assert time.monotonic() < deadline, f"no result within {DEADLINE_S} s: {page}"
        time.sleep(0.2)


def _job(app: Flask) -> ReportJob:
    with get_store_of(app).read_session() as session:
        job = session.scalar(select(ReportJob))
        assert job is not None
        return job


def test_report_page_shows_progress_then_the_cached_result(job_app: Flask, world_url) -> None:
    world = world_url[1]
    make = client_factory(job_app)
    admin, alice = make("admin"), make("alice")
    path = f"/reports/{world.campaign_id}/agreement"

    first = admin.get(path)
    assert first.status_code == 200
    assert 'id="report-job"' in first.text and RELOAD.search(first.text)
    assert 'id="agreement-topics"' not in first.text
    page = _until(admin, path, 'id="agreement-topics"')
    assert 'id="report-stale"' not in page
    assert (_job(job_app).status, _job(job_app).generation) == ("done", 1)

    submit = alice.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D1", "grade": 2},
    )
    assert submit.status_code == 201
    stale = admin.get(path).text  # the last result at once, marked, while it is recomputed
    assert 'id="agreement-topics"' in stale and 'id="report-stale"' in stale
    assert RELOAD.search(stale) is None  # no endless reloading while judging goes on
    link = re.search(r'href="([^"]*agreement\.csv[^"]*)"', stale)
    assert link and "generation=1" in link.group(1)
    shown = admin.get(link.group(1).replace("&amp;", "&"))  # what the page shows, at once
    assert shown.mimetype == "text/csv" and "attachment" in shown.headers["Content-Disposition"]
    deadline = time.monotonic() + DEADLINE_S
    while 'id="report-stale"' in admin.get(path).text:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    job = _job(job_app)
    assert (job.status, job.result_generation) == ("done", 2)
    with get_store_of(job_app).read_session() as session:
        assert job.fingerprint == jobs.fingerprint(session, world.campaign_id)


def test_download_waits_for_a_result_as_new_as_itself(job_app: Flask, world_url) -> None:
    world = world_url[1]
    admin = client_factory(job_app)("admin")
    path = f"/reports/{world.campaign_id}/agreement.csv"
    answer = admin.get(path)
    deadline = time.monotonic() + DEADLINE_S
    while "attachment" not in answer.headers.get("Content-Disposition", ""):
        reload = RELOAD.search(answer.text)
        assert reload, answer.text
        assert "generation=1" in reload.group(1)
        assert time.monotonic() < deadline
        time.sleep(0.2)
        answer = admin.get(reload.group(1).replace("&amp;", "&"))
    assert answer.mimetype == "text/csv"
    assert "Fleiss" in answer.text or "kappa" in answer.text.lower()


def test_report_pages_are_refused_to_assessors_before_any_job(job_app: Flask, world_url) -> None:
    alice = client_factory(job_app)("alice")
    assert alice.get(f"/reports/{world_url[1].campaign_id}/evaluation").status_code in (302, 403)
    with get_store_of(job_app).read_session() as session:
        assert session.scalar(select(ReportJob.id)) is None


def test_a_result_without_this_apps_seal_is_never_unpickled() -> None:
    key = sealing_key("one secret")
    sealed = seal({"runs": [1, 2]}, key)
    assert unseal(sealed, key) == {"runs": [1, 2]}
    with pytest.raises(ValueError, match="seal"):
        unseal(sealed, sealing_key("another secret"))
    with pytest.raises(ValueError, match="seal"):
        unseal(sealed.replace(b"runs", b"rung"), key)


def test_a_result_sealed_under_another_key_is_recomputed_and_said(
    job_app: Flask, world_url, tmp_path: Path
) -> None:
    """After the secret key is rotated, a cached result's seal no longer matches: the page
    (and its download) says so and computes the report again instead of answering 500."""
    world = world_url[1]
    path = f"/reports/{world.campaign_id}/agreement"
    _until(client_factory(job_app)("admin"), path, 'id="agreement-topics"')
    rotated = make_app(
        world_url[0], tmp_path / "rotated", REPORT_JOB_WAIT_SECONDS=0, SECRET_KEY="rotated key"
    )
    try:
        admin = client_factory(rotated)("admin")
        first = admin.get(path)
        assert first.status_code == 200
        assert "does not carry this server&#39;s seal" in first.text
        assert 'id="report-job"' in first.text and 'id="agreement-topics"' not in first.text
        assert admin.get(f"{path}.csv").status_code == 200  # a progress page, not a 500
        page = _until(admin, path, 'id="agreement-topics"')
        assert "seal" not in page
        with get_store_of(rotated).read_session() as session:
            result = session.scalar(select(ReportResult.result))
        assert result is not None
        assert "report" in unseal(result, sealing_key("rotated key"))
        assert client_factory(job_app)("admin").get(path).status_code == 200  # the old key too
    finally:
        get_store_of(rotated).dispose()


@pytest.mark.browser
@pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="needs chromium and chromedriver"
)
def test_browser_follows_the_progress_page_to_the_report(
    job_app: Flask,
    world_url,
    browser,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    job_app.config.update(TESTING=False)
    with serve_in_thread(job_app) as base:
        log_in_as(browser, base, "admin")
        browser.get(f"{base}/reports/{world_url[1].campaign_id}/evaluation?measures=P.5")
        assert browser.find_elements(By.ID, "report-job")  # the progress first
        WebDriverWait(browser, DEADLINE_S).until(
            ec.presence_of_element_located((By.ID, "evaluation-options"))
        )
        assert not elements_now(browser, By.ID, "report-job")
        assert browser.find_element(By.NAME, "measures").get_attribute("value") == "P.5"


APP_PROCESS = """
import json, sys, time
from workbench.web import create_app
heavy = lambda: sorted({m.split(".")[0] for m in sys.modules} & {"scipy", "matplotlib"})
app = create_app({"DATABASE_URL": sys.argv[1], "SECRET_KEY": "k" * 32, "TESTING": True,
                  "WTF_CSRF_ENABLED": False, "INSTANCE_PATH": sys.argv[3],
                  "REPORT_JOB_WAIT_SECONDS": 0})
started = heavy()
client = app.test_client()
assert client.post("/login", data={"username": "admin", "password": sys.argv[2]}).status_code == 302
deadline = time.monotonic() + 180
while 'id="agreement-topics"' not in (page := client.get(f"/reports/{sys.argv[4]}/agreement").text):
    assert time.monotonic() < deadline and 'id="report-job"' in page, page
    time.sleep(0.2)
print(json.dumps([started, heavy()]))
"""


def test_the_apps_process_leaves_the_report_libraries_to_its_job_children(
    world_url: tuple[str, World], tmp_path: Path
) -> None:
    """A server's process imports neither scipy nor matplotlib, at its start or when a report
    is computed: its report jobs' children, forked from a fork server that imported them
    (`workbench.web.job_child`), use them. Importing them in each app process cost 2-3 s of
    CPU at every server's (and server worker's) start."""
    import json
    import subprocess
    import sys

    url, world = world_url
    arguments = [url, PASSWORD, str(tmp_path / "instance"), str(world.campaign_id)]
    done = subprocess.run(
        [sys.executable, "-c", APP_PROCESS, *arguments],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert json.loads(done.stdout) == [[], []]
