"""End to end in headless Chromium: an admin sets up a campaign, an assessor judges by keyboard.

Runs against werkzeug's threaded server on 127.0.0.1 (a free port) in a thread. Skipped when
Debian's chromium or chromedriver is absent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.web.conftest import FAST_HASH, PASSWORD, get_store_of, make_app, serve_in_thread
from workbench import demo
from workbench.services import users as user_service
from workbench.services.current_judgements import current_judgements
from workbench.store.models import Judgement, User

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "judging.png"
UPDATE_SCREENSHOT_ENV = "WORKBENCH_UPDATE_SCREENSHOT"  # =1 refreshes the README's screenshot
IMPLICIT_WAIT_S = 5
"""How long `find_element(s)` waits for an element to appear (`chromium`): a `find_elements`
that finds none returns only after it, so a check that expects none uses `elements_now`."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]


@pytest.fixture
def server(tmp_path: Path, database_url: str) -> Iterator[tuple[str, object]]:
    app = make_app(database_url, tmp_path, WTF_CSRF_ENABLED=True, TESTING=False)
    with get_store_of(app).session() as s:
        user_service.create_user(s, "admin", PASSWORD, role="admin", hash_method=FAST_HASH)
        user_service.create_user(s, "alice", PASSWORD, role="assessor", hash_method=FAST_HASH)
    with serve_in_thread(app) as url:
        yield url, app
    get_store_of(app).dispose()


@contextmanager
def chromium(tmp_path: Path, width: int = 1400, *, phone: bool = False):  # type: ignore[no-untyped-def]
    """A headless Chromium of this width (``phone``: a phone's viewport, device metrics and
    touch, as a page's meta viewport expects); ``driver.width`` says which."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium'}",
        f"--window-size={width},900",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(IMPLICIT_WAIT_S)
    if phone:
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 844, "deviceScaleFactor": 2, "mobile": True},
        )
    driver.width = width
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(tmp_path: Path):  # type: ignore[no-untyped-def]
    with chromium(tmp_path) as driver:
        yield driver


def elements_now(context, by: str, value: str) -> list:  # type: ignore[no-untyped-def]
    """The elements matching in `context` (the page or an element of it) now, without the
    implicit wait: a `find_elements` expected to find none took IMPLICIT_WAIT_S (5 s of each
    page of the site walk)."""
    from selenium.webdriver.remote.webelement import WebElement

    driver = context.parent if isinstance(context, WebElement) else context
    driver.implicitly_wait(0)
    try:
        return context.find_elements(by, value)
    finally:
        driver.implicitly_wait(IMPLICIT_WAIT_S)


def log_in_as(browser, base: str, name: str) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(base + "/login")
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    WebDriverWait(browser, 15).until(ec.presence_of_element_located((By.CSS_SELECTOR, ".who")))


def submit_form(browser, form, timeout: float = 15) -> None:  # type: ignore[no-untyped-def]
    """Submit and wait until the next page is whole.

    A mark on the old page's window tells the pages apart; polling in a script, not through
    element handles, since the inspector refuses handles of a page being replaced.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_script("window.submittedFromHere = true")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, timeout, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return !window.submittedFromHere && document.readyState === 'complete'"
            " && !!document.querySelector('.who')"
        )
    )


def flash_text(browser) -> str:  # type: ignore[no-untyped-def]
    """The page's flash messages, read in one script: no element handle can go stale."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.flash'))"
        ".map(e => e.innerText.trim()).join(' | ')"
    )


def test_admin_sets_up_and_assessor_judges_by_keyboard(server, browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    base, app = server
    wait = WebDriverWait(browser, 15)
    folder = tmp_path / "files"
    folder.mkdir()
    files = demo.write_files(folder)  # readable generated topics and documents

    def log_in(name: str) -> None:
        log_in_as(browser, base, name)

    def submit(form) -> None:  # type: ignore[no-untyped-def]
        submit_form(browser, form)

    def flashes() -> str:
        return flash_text(browser)

    # --- the admin: campaign, uploads, pool, assignment ---
    log_in("admin")
    browser.get(base + "/admin/")
    form = browser.find_element(By.ID, "new-campaign")
    form.find_element(By.NAME, "name").send_keys("e2e")
    submit(form)
    assert "Campaign 'e2e' created." in flashes()
    for kind, paths in [
        ("topics", files["topics"]),
        ("documents", files["documents"]),
        ("runs", files["runs"][:2]),
    ]:
        form = browser.find_element(By.ID, f"upload-{kind}")
        form.find_element(By.NAME, "files").send_keys("\n".join(str(p) for p in paths))
        submit(form)
        assert f"{kind}: " in flashes() and "added" in flashes(), flashes()
    form = browser.find_element(By.ID, "build-pool")
    depth = form.find_element(By.NAME, "depth")
    depth.clear()
    depth.send_keys("8")
    form.find_element(By.NAME, "seed").send_keys("11")  # the same order, and screenshot, each run
    submit(form)
    assert "built (depth)" in flashes()
    assert "over 8 topics, from 2 runs" in " ".join(browser.page_source.split())
    browser.find_element(By.LINK_TEXT, "Assignments").click()
    form = browser.find_element(By.ID, "manual-assign")
    Select(form.find_element(By.NAME, "user")).select_by_visible_text("alice")
    Select(form.find_element(By.NAME, "qids")).select_by_value("401")
    submit(form)
    assert "Assigned 1 topic to alice." in flashes()
    browser.find_element(By.CSS_SELECTOR, "form.inline button.link").click()  # log out

    # --- the assessor: five judgements by keyboard ---
    log_in("alice")
    browser.find_element(By.LINK_TEXT, "Start").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "pos"), "1"))
    wait.until(lambda d: d.find_element(By.ID, "docno").text)
    body = browser.find_element(By.TAG_NAME, "body")
    keys = ["2", "1", "0", "2", "1"]
    judged: list[tuple[str, int]] = []
    for number, key in enumerate(keys, 1):
        docno = browser.find_element(By.ID, "docno").text
        body.send_keys(key)
        judged.append((docno, int(key)))
        wait.until(ec.text_to_be_present_in_element((By.ID, "pos"), str(number + 1)))
        wait.until(lambda d, n=number: d.find_element(By.ID, "docno").text != judged[n - 1][0])
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    total = int(browser.find_element(By.ID, "progress-text").text.split()[2])
    assert browser.find_element(By.ID, "progress-text").text == f"5 / {total} judged"
    assert total > 5
    # the topic title's words are the highlighted query terms
    marks = browser.find_elements(By.CSS_SELECTOR, "#topic-title mark.query-term")
    assert [m.text for m in marks] == ["solar", "panel", "recycling"]

    browser.refresh()
    wait.until(ec.text_to_be_present_in_element((By.ID, "progress-text"), f"5 / {total}"))
    assert browser.find_element(By.ID, "pos").text == "6"  # resumed where we left off
    cells = browser.find_elements(By.CSS_SELECTOR, "#position-map .cell")
    assert [c.text for c in cells] == [*keys] + [""] * (total - 5)

    # revise the first judgement: go back with the keyboard and press another grade
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(5):
        body.send_keys("p")
    wait.until(ec.text_to_be_present_in_element((By.ID, "pos"), "1"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), judged[0][0]))
    assert "Judged Highly relevant · saved" in browser.find_element(By.ID, "doc-state").text
    body.send_keys("0")
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    body.send_keys("p")
    wait.until(ec.text_to_be_present_in_element((By.ID, "doc-state"), "Judged Not relevant"))
    refresh_readme = os.environ.get(UPDATE_SCREENSHOT_ENV) == "1"
    screenshot = README_SCREENSHOT if refresh_readme else tmp_path / "judging.png"
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000

    # --- the store holds exactly those judgements ---
    with get_store_of(app).session() as s:
        alice = s.scalar(select(User).where(User.username == "alice"))
        log = list(
            s.scalars(select(Judgement).where(Judgement.user_id == alice.id).order_by(Judgement.id))
        )
        current = {j.docno: j.grade for j in current_judgements(s, log[0].campaign_id)}
    expected = dict(judged)
    expected[judged[0][0]] = 0
    assert current == expected
    assert [(j.docno, j.grade) for j in log] == [*judged, (judged[0][0], 0)]
    assert all(j.client_id for j in log) and len({j.client_id for j in log}) == 6


def test_judgement_made_offline_is_retried_and_saved_once(server, browser, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.web.conftest import populate

    base, app = server
    with get_store_of(app).session() as s:  # the populate users replace the fixture's
        for user in s.scalars(select(User)):
            s.delete(user)
    world = populate(get_store_of(app), tmp_path / "files")
    wait = WebDriverWait(browser, 20)
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}")
    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), "D1"))
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    browser.find_element(By.TAG_NAME, "body").send_keys("2")
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "Not saved yet"))
    first_cell = browser.find_elements(By.CSS_SELECTOR, "#position-map .cell")[0]
    assert "pending" in first_cell.get_attribute("class")  # not shown as saved
    status = browser.find_element(By.ID, "save-status")
    counting = re.compile(r"Retrying in ([2-9]|[1-3][0-9]) s")
    wait.until(lambda _: counting.search(status.text))  # a backoff of 2 s or more
    seconds = int(counting.search(status.text).group(1))
    # the message counts down, second by second (or a new attempt failed and it starts again)
    wait.until(lambda _: f"Retrying in {seconds - 1} s" in status.text)
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    with get_store_of(app).session() as s:
        rows = list(s.scalars(select(Judgement)))
    assert [(j.docno, j.grade, j.user_id) for j in rows] == [("D1", 2, world.users["alice"])]


def test_idle_time_is_not_counted_and_own_terms_are_highlighted(server, browser, tmp_path) -> None:
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.web.conftest import populate

    base, app = server
    app.config["JUDGE_IDLE_SECONDS"] = 1
    app.config["JUDGE_BREAK_MINUTES"] = 0.04  # a break reminder after 2.4 s of activity
    with get_store_of(app).session() as s:
        for user in s.scalars(select(User)):
            s.delete(user)
    world = populate(get_store_of(app), tmp_path / "files")
    wait = WebDriverWait(browser, 20)
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}")
    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), "D1"))
    body = browser.find_element(By.TAG_NAME, "body")
    time.sleep(3.5)  # idle: no input for longer than the 1 s limit
    body.send_keys("1")
    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), "D2"))
    for _ in range(6):  # active: some input every half second
        body.send_keys("x")
        time.sleep(0.5)
    assert browser.find_element(By.ID, "break-banner").is_displayed()
    body.send_keys("0")
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    browser.find_element(By.ID, "break-dismiss").click()
    assert not browser.find_element(By.ID, "break-banner").is_displayed()
    with get_store_of(app).session() as s:
        times = dict(s.execute(select(Judgement.docno, Judgement.time_spent_ms)).all())
    assert times["D1"] < 2500  # at most the idle limit plus a tick, not the 3.5 s
    assert times["D2"] >= 2500

    term = browser.find_element(By.ID, "term-input")
    term.send_keys("text\n")
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#doc-text mark.user-term")))
    marks = browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.user-term")
    assert [m.text for m in marks] == ["Text"]
    query_marks = browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.query-term")
    assert [m.text for m in query_marks] == ["solar", "panel", "recycling"]
    assert browser.find_elements(By.CSS_SELECTOR, "#terms .chip.user-term")
