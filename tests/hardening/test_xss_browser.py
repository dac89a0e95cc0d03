"""XSS payloads in a document's text, a topic's title and a judgement's comment stay inert.

Checked in headless Chromium against the app served on 127.0.0.1: no alert fires, no element of the
payload reaches the DOM, and the payload is shown as the literal text it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import update

from tests.web.conftest import World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import (  # noqa: F401
    CHROMEDRIVER,
    CHROMIUM,
    browser,
    elements_now,
    log_in_as,
)
from workbench.services import judging
from workbench.store.models import Assignment, DocumentRow, Topic

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]

DOCUMENT_PAYLOAD = "<img src=x onerror=\"alert('document')\"><script>alert('document')</script>"
TOPIC_PAYLOAD = "<script>alert('topic')</script><b onmouseover=alert('topic')>bold</b>"
COMMENT_PAYLOAD = "</textarea><svg onload=alert('comment')>"


@pytest.fixture
def server(world_url, world: World, tmp_path: Path) -> Iterator[str]:
    """The world with the payloads planted, served with CSRF on as in production."""
    app = make_app(world_url[0], tmp_path / "live", WTF_CSRF_ENABLED=True, TESTING=False)
    with get_store_of(app).session() as session:
        session.execute(
            update(DocumentRow)  # the rows behind the documents view
            .where(DocumentRow.campaign_id == world.campaign_id)
            .values(text=DOCUMENT_PAYLOAD, title=DOCUMENT_PAYLOAD)
        )
        session.execute(
            update(Topic)
            .where(Topic.campaign_id == world.campaign_id, Topic.qid == "T1")
            .values(title=TOPIC_PAYLOAD)
        )
        assignment = session.get(Assignment, world.assignment["alice", "T1"])
        assert assignment is not None
        first = judging.document_sequence(session, assignment)[0]
        judging.record_judgement(
            session.connection(),
            assignment.id,
            assignment.user_id,
            judging.JudgementInput(first, 1, comment=COMMENT_PAYLOAD),
        )
    with serve_in_thread(app) as url:
        yield url
    get_store_of(app).dispose()


def assert_inert(driver) -> None:  # type: ignore[no-untyped-def]
    """No alert fired, no element carries a payload's handler, no script holds its code."""
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        pass
    else:
        pytest.fail(f"an alert fired: {text!r}")
    handlers = elements_now(driver, By.CSS_SELECTOR, "[onerror], [onload], [onmouseover]")
    scripts = elements_now(driver, By.TAG_NAME, "script")
    assert handlers == []
    assert not any("alert(" in (e.get_attribute("innerHTML") or "") for e in scripts)


def test_payloads_render_as_text_on_the_judging_page(server: str, browser, world: World) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 15)
    log_in_as(browser, server, "alice")
    browser.get(f"{server}/assess/{world.assignment['alice', 'T1']}")
    wait.until(lambda d: d.find_element(By.ID, "doc-text").text == DOCUMENT_PAYLOAD)
    if browser.find_element(By.ID, "pos").text != "1":
        browser.find_element(By.ID, "prev-button").click()
        wait.until(lambda d: d.find_element(By.ID, "pos").text == "1")
        wait.until(lambda d: d.find_element(By.ID, "doc-text").text == DOCUMENT_PAYLOAD)
    assert browser.find_element(By.ID, "topic-title").text == TOPIC_PAYLOAD
    assert browser.find_element(By.ID, "doc-title").text == DOCUMENT_PAYLOAD
    assert browser.find_element(By.ID, "comment").get_attribute("value") == COMMENT_PAYLOAD
    assert_inert(browser)


def test_payloads_render_as_text_on_admin_pages(server: str, browser, world: World) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    log_in_as(browser, server, "admin")
    pages = [
        f"/admin/campaigns/{world.campaign_id}",
        f"/admin/campaigns/{world.campaign_id}/assignments",
        f"/admin/campaigns/{world.campaign_id}/progress",
        f"/reports/{world.campaign_id}/adjudication",
        f"/reports/{world.campaign_id}/agreement",
    ]
    shown = []
    for page in pages:
        browser.get(server + page)
        assert_inert(browser)
        if TOPIC_PAYLOAD in browser.find_element(By.TAG_NAME, "main").text:
            shown.append(page)
    assert shown, "the topic title appears as text on none of the admin pages"
