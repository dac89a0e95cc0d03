"""Issue 25 in headless Chromium: undo (z) and the next topic (t) by key, evidence passages,
the selected grade readable in dark mode, the passages list, pairwise judging, and the
adjudication queue (whole document, answers, filter, the message kept in view)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.web.conftest import get_store_of
from tests.web.test_browser import browser, flash_text, log_in_as, pytestmark, server  # noqa: F401
from tests.web.test_browser_judging import (  # noqa: F401
    LONG_TEXT,
    WIDTHS,
    _at_width,
    _open,
    _waiter,
    world_server,
)
from workbench.services import campaigns, judging, preferences
from workbench.services.current_judgements import current_judgements
from workbench.store.models import Campaign, FinalLabel

assert pytestmark  # the same skip rule as the other browser tests


def _current(app, world, user: str = "alice") -> dict[str, tuple]:  # type: ignore[no-untyped-def]
    with get_store_of(app).read_session() as s:
        rows = current_judgements(s, world.campaign_id, qid="T1", user_id=world.users[user])
    return {r.docno: (r.grade, r.evidence) for r in rows}


def _set_judging(app, world, **settings) -> None:  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as s:
        campaigns.set_judging(s, s.get(Campaign, world.campaign_id), **settings)


def _saved(driver) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    _waiter(driver).until(
        ec.text_to_be_present_in_element((By.ID, "save-status"), "All judgements saved")
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_undo_and_next_topic_by_key(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, world.assignment["alice", "T1"], "D1")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("2")  # D1: highly relevant, then D2
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), "D2"))
    body.send_keys("0")  # D2: not relevant, then D3
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), "D3"))
    _saved(browser)
    assert _current(app, world) == {"D1": (2, None), "D2": (0, None)}
    body.send_keys("z")  # takes D2's judgement back and shows D2
    _waiter(browser).until(
        ec.text_to_be_present_in_element((By.ID, "action-status"), "Undone: D2 is not judged")
    )
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), "D2"))
    assert browser.find_element(By.ID, "doc-state").text == "Not judged yet"
    assert browser.find_element(By.ID, "progress-text").text == "1 / 6 judged"
    assert _current(app, world) == {"D1": (2, None)}
    body.send_keys("t")  # the next assigned topic
    _waiter(browser).until(ec.url_contains(f"/assess/{world.assignment['alice', 'T2']}"))
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "topic-title"), "honeybee"))


def test_evidence_passages_are_marked_saved_and_shown(world_server, browser) -> None:  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    _set_judging(app, world, evidence=True)
    log_in_as(browser, base, "alice")
    _open(browser, base, world.assignment["alice", "T2"], "D1")
    select_words = """
      const box = document.getElementById('doc-text'), text = box.textContent;
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      let node, seen = 0, range = document.createRange(), start = text.indexOf(arguments[0]);
      const end = start + arguments[0].length;
      while ((node = walker.nextNode())) {
        const n = node.length;
        if (start >= seen && start <= seen + n) range.setStart(node, start - seen);
        if (end >= seen && end <= seen + n) { range.setEnd(node, end - seen); break; }
        seen += n;
      }
      const selection = window.getSelection();
      selection.removeAllRanges(); selection.addRange(range);
    """

    def count(driver) -> str:  # type: ignore[no-untyped-def]  # (shown in capitals)
        return driver.find_element(By.ID, "evidence-count").get_attribute("textContent")

    browser.execute_script(select_words, "solar panels are recycled")
    ActionChains(browser).send_keys("e").perform()  # to the page as it is: the selection kept
    body = browser.find_element(By.TAG_NAME, "body")
    _waiter(browser).until(lambda d: count(d) == "1 passage")
    marks = browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.evidence")
    assert "".join(m.text for m in marks) == "solar panels are recycled"
    body.send_keys("2")  # the grade saves the passage with it
    _saved(browser)
    with get_store_of(app).read_session() as s:
        rows = current_judgements(s, world.campaign_id, qid="T2", user_id=world.users["alice"])
    # D1 is LONG_TEXT: "Paragraph 1: solar panels are recycled, ..."
    assert [(r.docno, r.grade, r.evidence) for r in rows] == [("D1", 2, [[13, 38]])]
    body.send_keys("p")  # back to D1: its passage is shown, and removed by its button
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), "D1"))
    assert browser.find_element(By.CSS_SELECTOR, "#evidence-list li").text.startswith(
        "“solar panels are recycled”"
    )
    browser.find_element(By.CSS_SELECTOR, "#evidence-list button").click()
    _waiter(browser).until(lambda d: count(d) == "none yet")
    _saved(browser)
    with get_store_of(app).read_session() as s:
        rows = current_judgements(s, world.campaign_id, qid="T2", user_id=world.users["alice"])
    assert [(r.grade, r.evidence) for r in rows] == [(2, None)]  # a revision, grade kept


def _contrast(element) -> float:  # type: ignore[no-untyped-def]
    """WCAG contrast ratio of an element's text on its background."""

    def luminance(css: str) -> float:
        values = [int(c) / 255 for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
        linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in values]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    text = luminance(element.value_of_css_property("color"))
    ground = luminance(element.value_of_css_property("background-color"))
    return (max(text, ground) + 0.05) / (min(text, ground) + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_selected_grade_is_readable(world_server, browser, scheme: str) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    with get_store_of(app).connection() as connection:
        judging.record_judgement(
            connection,
            world.assignment["alice", "T1"],
            world.users["alice"],
            judging.JudgementInput("D1", 1),
        )
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}#1")
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), "D1"))
    selected = browser.find_element(By.CSS_SELECTOR, "#grades .grade.selected")
    assert selected.get_attribute("data-grade") == "1"
    assert _contrast(selected) >= 4.5  # was 2.39:1 in dark mode


@pytest.mark.parametrize("width", WIDTHS)
def test_passages_are_judged_by_keys_in_a_list(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    _set_judging(app, world, mode="passages", options={"per_screen": 4})
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}")
    wait = _waiter(browser)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passages .passage")) == 4)
    items = browser.find_elements(By.CSS_SELECTOR, "#passages .passage")
    texts = [i.find_element(By.CSS_SELECTOR, ".passage-text").text for i in items]
    assert [t.splitlines()[0] for t in texts] == [
        "Document 1",
        "Document 2",
        "Document 3",
        "Document 6",
    ]
    assert "runA" not in browser.page_source and "rank" not in " ".join(texts)

    def focused() -> int:
        return browser.execute_script(
            "return [...document.querySelectorAll('#passages .passage')]"
            ".findIndex(e => e.classList.contains('current') && e === document.activeElement)"
        )

    assert focused() == 0
    outline = items[0].value_of_css_property("outline-style")
    assert outline != "none"  # the focus is visible
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("2")  # the first passage, then the focus moves on
    wait.until(lambda d: focused() == 1)
    body.send_keys("j")
    wait.until(lambda d: focused() == 2)
    body.send_keys("k")
    wait.until(lambda d: focused() == 1)
    body.send_keys("0")
    wait.until(lambda d: focused() == 2)
    _saved(browser)
    assert _current(app, world) == {"D1": (2, None), "D2": (0, None)}
    assert (
        items[0].find_element(By.CSS_SELECTOR, ".passage-state").text == "Highly relevant · saved ✓"
    )
    body.send_keys("n")  # the next screen: the two passages left
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passages .passage")) == 2)
    assert browser.find_element(By.ID, "pos").text == "5"
    body.send_keys("z")  # takes D2's judgement back: its screen again, D2 in focus
    wait.until(ec.text_to_be_present_in_element((By.ID, "action-status"), "Undone: passage 2"))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passages .passage")) == 4)
    wait.until(lambda d: focused() == 1)
    assert _current(app, world) == {"D1": (2, None)}
    assert browser.find_element(By.ID, "progress-text").text == "1 / 6 judged"


@pytest.mark.parametrize("width", WIDTHS)
def test_pairs_are_judged_side_by_side(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    _set_judging(app, world, mode="pairwise", options={"top": 3})
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}")
    wait = _waiter(browser)
    wait.until(lambda d: d.find_element(By.ID, "left-docno").text)
    left, right = (browser.find_element(By.ID, f"{s}-side") for s in ("left", "right"))
    side_by_side = left.rect["y"] == right.rect["y"]
    assert side_by_side == (width > 800)  # one above the other on a phone
    shown = []
    body = browser.find_element(By.TAG_NAME, "body")
    for key in ("1", "3", "2"):  # left better, right better, about the same
        pair = (
            browser.find_element(By.ID, "left-docno").text,
            browser.find_element(By.ID, "right-docno").text,
        )
        shown.append(pair)
        body.send_keys(key)
        if len(shown) < 3:
            wait.until(
                lambda d, p=pair: (
                    d.find_element(By.ID, "left-docno").text not in p
                    or d.find_element(By.ID, "right-docno").text not in p
                )
            )
    wait.until(ec.visibility_of_element_located((By.ID, "done-banner")))
    _saved(browser)
    assert browser.find_element(By.ID, "progress-text").text == "3 / 3 judged"
    with get_store_of(app).read_session() as s:
        rows = {
            (r.first, r.second): r for r in preferences.current_preferences(s, world.campaign_id)
        }
    expected = {}
    for (a, b), outcome in zip(shown, ("left", "right", "equal"), strict=True):
        preferred = {"left": a, "right": b}.get(outcome)
        expected[tuple(sorted((a, b)))] = preferred
    got = {
        k: (r.first if r.outcome == "first" else r.second if r.outcome == "second" else None)
        for k, r in rows.items()
    }
    assert got == expected and set(got) == {("D1", "D2"), ("D1", "D8"), ("D2", "D8")}
    body.send_keys("z")
    wait.until(ec.text_to_be_present_in_element((By.ID, "action-status"), "not judged any more"))
    assert browser.find_element(By.ID, "progress-text").text == "2 / 3 judged"


def test_adjudication_keeps_the_message_in_view_and_filters(world_server, browser) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, app, world = world_server
    store = get_store_of(app)
    for user, docno, grade, comment, ms in [
        ("alice", "D1", 2, "the whole document answers it", 4000),
        ("bob", "D1", 0, "off topic", 1500),
        ("alice", "D2", 1, "", 1000),
        ("bob", "D2", 0, "", 2500),
    ]:
        with store.connection() as connection:
            judging.record_judgement(
                connection,
                world.assignment[user, "T1"],
                world.users[user],
                judging.JudgementInput(docno, grade, comment=comment, time_spent_ms=ms),
            )
    _at_width(browser, 390)  # a phone: the queue is long, the page scrolls
    log_in_as(browser, base, "admin")
    browser.get(f"{base}/reports/{world.campaign_id}/adjudication")
    items = browser.find_elements(By.CSS_SELECTOR, ".queue-item")
    assert len(items) == 2
    first = items[0]
    box = first.find_element(By.CSS_SELECTOR, ".document-box")
    assert box.get_attribute("textContent") == LONG_TEXT  # 10,000 characters, not 600
    assert (
        first.find_element(By.LINK_TEXT, "Open D1 on its own page")
        .get_attribute("href")
        .endswith(f"/admin/campaigns/{world.campaign_id}/documents/D1")
    )
    answers = [
        [
            c.get_attribute("textContent").strip()
            for c in row.find_elements(By.CSS_SELECTOR, "th, td")
        ]
        for row in first.find_elements(By.CSS_SELECTOR, "tr.answer")
    ]
    assert answers == [
        ["Judge 1", "2 · Highly relevant", "4.0 s", "the whole document answers it"],
        ["Judge 2", "0 · Not relevant", "1.5 s", "off topic"],
    ]
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("1")
    reason = first.find_element(By.NAME, "reason")
    _waiter(browser).until(lambda d: d.switch_to.active_element == reason)
    reason.send_keys("partly on topic", Keys.ENTER)
    _waiter(browser).until(lambda d: "Final grade 1 recorded for D1." in flash_text(d))
    assert browser.execute_script("return window.scrollY") == 0  # the message stays in view
    assert browser.find_element(By.CSS_SELECTOR, ".flash").is_displayed()
    items = browser.find_elements(By.CSS_SELECTOR, ".queue-item h3")
    assert [h.get_attribute("textContent") for h in items] == [
        "Topic T1: solar panel recycling · D2"
    ]  # what is left
    assert browser.find_element(By.ID, "queue-heading").text == (
        "1 document left to decide (no final label yet)"
    )
    browser.get(f"{base}/reports/{world.campaign_id}/adjudication?show=adjudicated")
    decided = browser.find_elements(By.CSS_SELECTOR, ".queue-item")
    assert len(decided) == 1 and "current final label: 1 (adjudicated)" in decided[0].text
    with store.read_session() as s:
        label = s.scalar(select(FinalLabel).where(FinalLabel.docno == "D1"))
        assert (label.grade, label.reason) == (1, "partly on topic")
