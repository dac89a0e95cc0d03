"""The machine-judge pages in headless Chromium: an admin adds a judge, starts a job and
watches its progress bar move to the end without reloading; the report page renders."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, chromium, log_in_as
from workbench.llm_test_server import Behaviour, StubServer
from workbench.services import machine_jobs

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer(Behaviour("obey", delay_s=0.25)) as server:
        yield server


@pytest.fixture
def machine_server(world_url, tmp_path: Path) -> Iterator[tuple[str, object, World]]:
    """The test world served with CSRF on; jobs run in a thread of the test (the job page
    cannot tell)."""

    def runner(store, job_id):  # type: ignore[no-untyped-def]
        threading.Thread(target=machine_jobs.run_job, args=(store, job_id), daemon=True).start()

    app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True, TESTING=False,
                   MACHINE_JOB_RUNNER=runner, MACHINE_REPORT_RESAMPLES=20)  # fmt: skip
    with serve_in_thread(app) as url:
        yield url, app, world_url[1]
    get_store_of(app).dispose()


def test_a_job_from_the_browser_with_a_live_progress_bar(machine_server, stub, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base, _app, world = machine_server
    with chromium(tmp_path, 1280, phone=False) as browser:
        log_in_as(browser, base, "admin")
        browser.get(f"{base}/machine/{world.campaign_id}")
        browser.find_element(By.CSS_SELECTOR, "#add-judge").find_element(
            By.XPATH, "./ancestor::details"
        ).find_element(By.TAG_NAME, "summary").click()
        form = browser.find_element(By.ID, "add-judge")
        form.find_element(By.NAME, "model").send_keys("stub")
        form.find_element(By.NAME, "base_url").send_keys(stub.url)
        form.find_element(By.NAME, "attempts").send_keys("2")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 10).until(
            lambda d: "Machine judge machine:stub added" in d.page_source
        )
        start = browser.find_element(By.ID, "start-job")
        concurrency = start.find_element(By.NAME, "concurrency")
        concurrency.clear()
        concurrency.send_keys("1")
        start.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.ID, "job-progress"))
        seen = set()

        def finished(driver) -> bool:  # type: ignore[no-untyped-def]
            value = driver.execute_script("return document.getElementById('job-progress').value")
            seen.add(value)
            return driver.find_element(By.ID, "job-status").text == "done"

        WebDriverWait(browser, 30, poll_frequency=0.1).until(finished)
        assert browser.execute_script("return document.getElementById('job-progress').value") == 12
        assert browser.find_element(By.ID, "job-count").text == "12 of 12"
        assert len(seen - {0, 12}) >= 1  # it moved through intermediate values, not reloaded
        assert browser.find_element(By.ID, "job-calls").text == "12"
        browser.get(f"{base}/machine/{world.campaign_id}/report")
        assert "no human label yet" in browser.page_source
        assert browser.find_element(By.CSS_SELECTOR, "nav.tabs a.active").text == "Machine judges"
