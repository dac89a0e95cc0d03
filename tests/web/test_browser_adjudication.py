"""The adjudication queue in headless Chromium at 1280 px and 390 px: the topic narrative,
the judges' comments and cannot-judge reasons, and deciding by keyboard."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.web.conftest import get_store_of
from tests.web.test_browser import (  # noqa: F401
    browser,
    elements_now,
    log_in_as,
    pytestmark,
    server,
)
from tests.web.test_browser_judging import WIDTHS, _at_width, _waiter, world_server  # noqa: F401
from workbench.services import assignments, judging, pools, users
from workbench.store.models import Campaign, FinalLabel

assert pytestmark  # the same skip rule as the other browser tests


def _judge(store, assignment: int, user: int, docno: str, grade, comment="", cannot=None):  # type: ignore[no-untyped-def]
    with store.connection() as connection:
        judging.record_judgement(
            connection,
            assignment,
            user,
            judging.JudgementInput(docno, grade, cannot_judge=cannot, comment=comment),
        )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_queue_shows_context_and_decides_by_keyboard(
    world_server,  # noqa: F811
    browser,  # noqa: F811
    width: int,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, app, world = world_server
    store = get_store_of(app)
    with store.session() as s:
        pool = pools.get_pool(s, s.get(Campaign, world.campaign_id), world.pool_id)
        carol = assignments.assign(s, pool, "T1", users.get_user(s, "carol"), order="docno").id
    alice, bob = world.assignment["alice", "T1"], world.assignment["bob", "T1"]
    ids = world.users
    _judge(store, alice, ids["alice"], "D1", 2, comment="answers the topic")
    _judge(store, bob, ids["bob"], "D1", 0, comment="only mentions panels")
    _judge(store, carol, ids["carol"], "D1", None, cannot="garbled scan")
    _judge(store, alice, ids["alice"], "D2", 1)
    _judge(store, bob, ids["bob"], "D2", 0)
    _at_width(browser, width)
    log_in_as(browser, base, "admin")
    browser.get(f"{base}/reports/{world.campaign_id}/adjudication?rule=majority&tie=adjudicate")
    items = browser.find_elements(By.CSS_SELECTOR, ".queue-item")
    heads = [i.find_element(By.TAG_NAME, "h3").get_attribute("textContent") for i in items]
    assert [h.strip() for h in heads] == [
        "Topic T1: solar panel recycling · D1",
        "Topic T1: solar panel recycling · D2",
    ]
    first = items[0]
    assert first.find_element(By.CSS_SELECTOR, ".narrative").text == (
        "Narrative: Recycling processes are relevant. <b>markup</b> stays text."
    )
    notes = [li.text for li in first.find_elements(By.CSS_SELECTOR, ".judge-notes li")]
    assert notes == [
        "Judge 1 commented: answers the topic",
        "Judge 2 commented: only mentions panels",
        "Judge 3 could not judge: garbled scan",
    ]
    assert elements_now(items[1], By.CSS_SELECTOR, ".judge-notes") == []
    assert "current" in first.get_attribute("class")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")  # the second document
    _waiter(browser).until(lambda d: "current" in items[1].get_attribute("class"))
    body.send_keys("1")  # its grade, then the reason
    reason = items[1].find_element(By.NAME, "reason")
    _waiter(browser).until(lambda d: d.switch_to.active_element == reason)
    assert items[1].find_element(By.NAME, "grade").get_attribute("value") == "1"
    reason.send_keys("the narrative asks for processes", Keys.ENTER)
    _waiter(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".queue-item")) == 1)
    with store.read_session() as s:
        label = s.scalar(select(FinalLabel).where(FinalLabel.docno == "D2"))
        assert label is not None and label.grade == 1
        assert label.reason == "the narrative asks for processes"
