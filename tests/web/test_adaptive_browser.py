"""End to end in headless Chromium: an organiser builds an adaptive pool, an assessor judges it
as the adaptive method reveals documents, the organiser follows the topic, raises its budget,
stops one."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from tests.web.conftest import get_store_of, populate
from tests.web.test_browser import (  # noqa: F401
    browser,
    flash_text,
    log_in_as,
    pytestmark,
    server,
    submit_form,
)
from workbench.services.current_judgements import current_judgements
from workbench.store.models import Assignment, Pool, User

assert pytestmark  # the same skip rule as the other browser tests


@pytest.fixture
def world_server(server, tmp_path: Path):  # type: ignore[no-untyped-def]  # noqa: F811
    base, app = server
    with get_store_of(app).session() as s:  # the populate users replace the fixture's
        for user in s.scalars(select(User)):
            s.delete(user)
    world = populate(get_store_of(app), tmp_path / "files")
    return base, app, world


def test_a_live_adaptive_pool_is_judged_end_to_end(world_server, browser) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    base, app, world = world_server
    wait = WebDriverWait(browser, 30)
    store = get_store_of(app)

    def submit(form) -> None:  # type: ignore[no-untyped-def]
        submit_form(browser, form, timeout=30)

    def flashes() -> str:
        return flash_text(browser)

    def log_out() -> None:
        browser.find_element(By.CSS_SELECTOR, "form.inline button.link").click()
        wait.until(ec.url_contains("/login"))

    def fill(form, name: str, value: str) -> None:  # type: ignore[no-untyped-def]
        field = form.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)

    # --- the organiser builds an adaptive MaxMean pool (budget 4, 2 at a time) and assigns T1
    log_in_as(browser, base, "admin")
    browser.get(f"{base}/admin/campaigns/{world.campaign_id}")
    form = browser.find_element(By.ID, "build-adaptive-pool")
    Select(form.find_element(By.NAME, "method")).select_by_visible_text("mm")
    for name, value in [("budget", "4"), ("depth", "6"), ("batch", "2"), ("seed", "3")]:
        fill(form, name, value)
    submit(form)
    assert "adaptive mm, budget 4 per topic, batch 2" in flashes(), flashes()
    assert browser.find_element(By.ID, "adaptive-topics")
    browser.find_element(By.LINK_TEXT, "Assignments").click()
    form = browser.find_element(By.ID, "manual-assign")
    Select(form.find_element(By.NAME, "user")).select_by_visible_text("alice")
    Select(form.find_element(By.NAME, "qids")).select_by_value("T1")
    submit(form)
    assert "Assigned 1 topic to alice." in flashes(), flashes()
    with store.read_session() as s:
        pool_id = s.scalar(select(Pool.id).order_by(Pool.id.desc()).limit(1))
        assignment_id = s.scalar(
            select(Assignment.id).where(Assignment.pool_id == pool_id, Assignment.qid == "T1")
        )
    log_out()

    # --- alice judges what the method chooses, asking for more when she is through
    log_in_as(browser, base, "alice")
    seen: list[str] = []

    def judge_page(keys: list[str], total: int, *, load: bool = True) -> None:
        if load:
            browser.get(f"{base}/assess/{assignment_id}")
        wait.until(ec.text_to_be_present_in_element((By.ID, "progress-text"), f"/ {total} judged"))
        body = browser.find_element(By.TAG_NAME, "body")
        for key in keys:
            wait.until(lambda d: d.find_element(By.ID, "docno").text not in ["", *seen])
            seen.append(browser.find_element(By.ID, "docno").text)
            body.send_keys(key)
        wait.until(ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved"))

    judge_page(["0", "0"], 2)  # runA's first two: not relevant, so MaxMean moves to runB
    assert seen == ["D1", "D2"]
    # no click: once both are saved the page fetches the next batch and opens its first one
    judge_page(["2", "1"], 4, load=False)
    assert seen == ["D1", "D2", "D8", "D7"]
    assert browser.find_element(By.ID, "total").text == "4"
    finished = "The topic is finished: no more documents to judge."
    wait.until(ec.text_to_be_present_in_element((By.ID, "more-status"), finished))
    banner = browser.find_element(By.ID, "done-banner")
    assert banner.is_displayed() and "Every document chosen so far is judged" in banner.text
    log_out()

    # --- the organiser sees the topic finished, raises its budget and stops T2
    log_in_as(browser, base, "admin")
    status = f"{base}/admin/campaigns/{world.campaign_id}/pools/{pool_id}/adaptive"
    browser.get(status)
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-qid="T1"]')
    assert row.find_element(By.CSS_SELECTOR, ".judged").text == "4"
    assert row.find_element(By.CSS_SELECTOR, ".relevant").text == "2"
    assert row.find_element(By.CSS_SELECTOR, ".state").text == "finished"
    form = browser.find_element(By.ID, "raise-budget")
    fill(form, "budget", "6")
    Select(form.find_element(By.NAME, "qid")).select_by_value("T1")
    submit(form)
    assert "Budget 6 for 1 topic(s)." in flashes()
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-qid="T2"]')
    submit(row.find_element(By.TAG_NAME, "form"))
    assert "Topic T2 stopped." in flashes()
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-qid="T1"]')
    assert row.find_element(By.CSS_SELECTOR, ".state").text == "open"
    log_out()

    # --- alice gets the two more: runB was relevant, so MaxMean stays on it
    log_in_as(browser, base, "alice")
    judge_page(["1", "0"], 6)
    wait.until(ec.text_to_be_present_in_element((By.ID, "more-status"), finished))
    assert seen == ["D1", "D2", "D8", "D7", "D6", "D5"]
    with store.read_session() as s:
        alice = s.scalar(select(User).where(User.username == "alice"))
        current = {
            j.docno: j.grade
            for j in current_judgements(s, world.campaign_id, qid="T1", user_id=alice.id)
        }
    # alice's judgements on the depth-3 pool of the world are none; these are the adaptive ones
    assert current == {"D1": 0, "D2": 0, "D8": 2, "D7": 1, "D6": 1, "D5": 0}
