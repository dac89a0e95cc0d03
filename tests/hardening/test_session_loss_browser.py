"""The judging page never drops a judgement when its session ends (issue 11 §7).

In headless Chromium against the app served on 127.0.0.1 with CSRF on: the session ends
(logged out in another tab, or ended by the server); the judgements made meanwhile stay
queued in localStorage, the page asks the assessor to log in again, and after the login (in
place, or in another tab) it sends them, each stored once under its own client_id.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.web.conftest import PASSWORD, World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, browser, log_in_as  # noqa: F401
from workbench.services import users as user_service
from workbench.store.models import Judgement

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]


@pytest.fixture
def live(world_url, world: World, tmp_path: Path) -> Iterator[tuple[str, object]]:
    app = make_app(world_url[0], tmp_path / "live", WTF_CSRF_ENABLED=True, TESTING=False)
    with serve_in_thread(app) as url:
        yield url, app
    get_store_of(app).dispose()


def stored(app) -> list[tuple[str, int | None, str | None]]:  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as session:
        rows = session.scalars(select(Judgement).order_by(Judgement.id))
        return [(j.docno, j.grade, j.client_id) for j in rows]


def open_judging(browser, base: str, world: World):  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 20)
    log_in_as(browser, base, "alice")
    assignment = world.assignment["alice", "T1"]
    browser.get(f"{base}/assess/{assignment}")
    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), "D1"))
    return wait, f"wb-pending-{assignment}"


def judge(browser, wait, key: str, docno: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    wait.until(ec.text_to_be_present_in_element((By.ID, "docno"), docno))
    browser.find_element(By.TAG_NAME, "body").send_keys(key)


def pending(browser, key: str) -> list[dict]:  # type: ignore[no-untyped-def]  # noqa: F811
    return json.loads(browser.execute_script(f"return localStorage.getItem('{key}') || '[]'"))


def test_logged_out_in_another_tab_then_logged_in_in_place(
    live,
    browser,  # noqa: F811
    world: World,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app = live
    wait, key = open_judging(browser, base, world)
    judge(browser, wait, "2", "D1")
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    judging_tab = browser.current_window_handle

    browser.switch_to.new_window("tab")  # log out in another tab
    browser.get(base + "/assess/")
    browser.find_element(By.CSS_SELECTOR, "form.inline button.link").click()
    wait.until(ec.presence_of_element_located((By.ID, "username")))
    browser.switch_to.window(judging_tab)

    judge(browser, wait, "1", "D2")
    judge(browser, wait, "0", "D3")
    wait.until(ec.visibility_of_element_located((By.ID, "relogin")))
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "session has ended"))
    wait.until(lambda d: len(pending(d, key)) == 2)
    queued = pending(browser, key)
    assert [(e["body"]["docno"], e["body"]["grade"]) for e in queued] == [("D2", 1), ("D3", 0)]
    assert [(d, g) for d, g, _ in stored(app)] == [("D1", 2)]

    browser.find_element(By.ID, "relogin-password").send_keys("wrong password")
    browser.find_element(By.CSS_SELECTOR, "#relogin-form button[type=submit]").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "relogin-error"), "wrong password"))
    assert len(pending(browser, key)) == 2  # still kept

    field = browser.find_element(By.ID, "relogin-password")
    field.clear()
    field.send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "#relogin-form button[type=submit]").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    assert not browser.find_element(By.ID, "relogin").is_displayed()
    assert pending(browser, key) == []
    rows = stored(app)
    assert [(d, g) for d, g, _ in rows] == [("D1", 2), ("D2", 1), ("D3", 0)]
    assert [c for _, _, c in rows[1:]] == [e["body"]["client_id"] for e in queued]


def test_session_ended_by_the_server_then_logged_in_in_a_new_tab(
    live,
    browser,  # noqa: F811
    world: World,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app = live
    wait, key = open_judging(browser, base, world)
    with get_store_of(app).session() as session:  # e.g. a password reset by the admin
        user_service.end_sessions(session, user_service.get_user(session, "alice"))
    judge(browser, wait, "2", "D1")
    wait.until(ec.visibility_of_element_located((By.ID, "relogin")))
    assert len(pending(browser, key)) == 1
    judging_tab = browser.current_window_handle

    browser.find_element(By.ID, "relogin-tab").click()  # opens the login page in a new tab
    wait.until(lambda d: len(d.window_handles) == 2)
    browser.switch_to.window(next(h for h in browser.window_handles if h != judging_tab))
    wait.until(ec.presence_of_element_located((By.ID, "username")))
    log_in_as(browser, base, "alice")
    browser.switch_to.window(judging_tab)

    wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))
    assert pending(browser, key) == []
    assert [(d, g) for d, g, _ in stored(app)] == [("D1", 2)]
