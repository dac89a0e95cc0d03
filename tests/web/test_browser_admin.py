"""Admin pages in headless Chromium: confirmations before role changes, deactivation,
withdraw and reassign; Reassign waits for an explicit choice. At 1280 px and 390 px."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, chromium, log_in_as
from workbench.store.models import Assignment, User

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]


@pytest.fixture
def world_server(world_url, tmp_path: Path) -> Iterator[tuple[str, object, World]]:
    """The test world (admin, alice, bob, carol; campaign c1) served with CSRF on."""
    app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True, TESTING=False)
    with serve_in_thread(app) as url:
        yield url, app, world_url[1]
    get_store_of(app).dispose()


@pytest.fixture(params=[1280, 390], ids=["1280px", "390px"])
def browser(request, tmp_path: Path):  # type: ignore[no-untyped-def]
    with chromium(tmp_path, request.param, phone=False) as driver:
        yield driver


def _page_changed(browser) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page marked by _mark is replaced by a whole new one."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 15, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return !window.markedPage && document.readyState === 'complete'"
            " && !!document.querySelector('.who')"
        )
    )


def _mark(browser) -> None:  # type: ignore[no-untyped-def]
    browser.execute_script("window.markedPage = true")


def _flashes(browser) -> str:  # type: ignore[no-untyped-def]
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.flash'))"
        ".map(e => e.innerText.trim()).join(' | ')"
    )


def _click(browser, element) -> None:  # type: ignore[no-untyped-def]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _alert_text(browser) -> str:  # type: ignore[no-untyped-def]
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 10).until(ec.alert_is_present()).text


def test_deactivate_and_role_change_ask_first(world_server, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    base, app, world = world_server
    log_in_as(browser, base, "admin")
    browser.get(base + "/admin/users")
    alice = world.users["alice"]

    def form(action: str):  # type: ignore[no-untyped-def]
        return browser.find_element(
            By.XPATH,
            f"//form[@action='/admin/users/{alice}'][.//input[@name='action'][@value='{action}']]",
        )

    # cancelling the confirmation sends nothing
    _mark(browser)
    _click(browser, form("active").find_element(By.CSS_SELECTOR, "button"))
    assert _alert_text(browser).startswith("Deactivate alice?")
    browser.switch_to.alert.dismiss()
    assert browser.execute_script("return window.markedPage === true")  # same page
    with get_store_of(app).session() as s:
        assert s.get(User, alice).active
    # accepting it deactivates
    _click(browser, form("active").find_element(By.CSS_SELECTOR, "button"))
    _alert_text(browser)
    browser.switch_to.alert.accept()
    _page_changed(browser)
    assert "User 'alice' updated (active)." in _flashes(browser)
    with get_store_of(app).session() as s:
        assert not s.get(User, alice).active

    # a role change names the chosen role in its question
    Select(form("role").find_element(By.NAME, "role")).select_by_visible_text("admin")
    _mark(browser)
    _click(browser, form("role").find_element(By.CSS_SELECTOR, "button"))
    assert _alert_text(browser) == "Give alice the role admin?"
    browser.switch_to.alert.accept()
    _page_changed(browser)
    with get_store_of(app).session() as s:
        assert s.get(User, alice).role == "admin"

    # the only active admin cannot demote themselves: the page says why and stays reachable
    me = world.users["admin"]
    role_form = browser.find_element(
        By.XPATH, f"//form[@action='/admin/users/{me}'][.//input[@value='role']]"
    )
    Select(role_form.find_element(By.NAME, "role")).select_by_visible_text("assessor")
    _mark(browser)
    _click(browser, role_form.find_element(By.CSS_SELECTOR, "button"))
    assert _alert_text(browser) == "Give admin the role assessor?"
    browser.switch_to.alert.accept()
    _page_changed(browser)
    assert "'admin' is the last active admin" in _flashes(browser)
    assert browser.find_element(By.LINK_TEXT, "Users")  # the admin menu is still there


def test_reassign_needs_a_choice_and_withdraw_asks(world_server, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    base, app, world = world_server
    log_in_as(browser, base, "admin")
    browser.get(f"{base}/admin/campaigns/{world.campaign_id}/assignments")
    first = world.assignment["alice", "T1"]
    reassign = browser.find_element(By.CSS_SELECTOR, f"form[action$='/{first}/reassign']")
    choice = Select(reassign.find_element(By.NAME, "user"))
    assert choice.first_selected_option.get_attribute("value") == ""  # no default assessor
    _mark(browser)
    _click(browser, reassign.find_element(By.CSS_SELECTOR, "button"))
    # the browser refuses the empty required choice: no question, no request
    assert browser.execute_script("return arguments[0].validity.valueMissing", choice._el)
    assert browser.execute_script("return window.markedPage === true")
    choice.select_by_visible_text("carol")
    _click(browser, reassign.find_element(By.CSS_SELECTOR, "button"))
    assert _alert_text(browser).startswith("Move topic T1 from alice to carol?")
    browser.switch_to.alert.accept()
    _page_changed(browser)
    assert "Topic reassigned." in _flashes(browser)
    with get_store_of(app).session() as s:
        assert not s.get(Assignment, first).active

    second = world.assignment["bob", "T2"]
    withdraw = browser.find_element(By.CSS_SELECTOR, f"form[action$='/{second}/remove']")
    _mark(browser)
    _click(browser, withdraw.find_element(By.CSS_SELECTOR, "button"))
    assert _alert_text(browser).startswith("Withdraw topic T2 from bob?")
    browser.switch_to.alert.dismiss()
    with get_store_of(app).session() as s:
        assert s.get(Assignment, second).active
    _click(browser, withdraw.find_element(By.CSS_SELECTOR, "button"))
    _alert_text(browser)
    browser.switch_to.alert.accept()
    _page_changed(browser)
    with get_store_of(app).session() as s:
        assert not s.get(Assignment, second).active
