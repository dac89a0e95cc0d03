"""The judging page in headless Chromium at 1280 px and 390 px: scrolling by keyboard, the
narrow layout, cannot-judge by keyboard, dark mode, resuming, highlighting word forms, the
next topic, guidelines (issue 12 section 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, update

from tests.web.conftest import get_store_of, populate
from tests.web.test_browser import (  # noqa: F401
    browser,
    elements_now,
    flash_text,
    log_in_as,
    pytestmark,
    server,
    submit_form,
)
from workbench.services import judging
from workbench.services.current_judgements import current_judgements
from workbench.store.models import DocumentRow, User

assert pytestmark  # the same skip rule as the other browser tests

WIDTHS = [1280, 390]
LONG_TEXT = "\n\n".join(
    f"Paragraph {i}: solar panels are recycled, and the recycling of panels recycles glass."
    for i in range(1, 121)
)


@pytest.fixture
def world_server(server, tmp_path: Path):  # type: ignore[no-untyped-def]  # noqa: F811
    base, app = server
    store = get_store_of(app)
    with store.session() as s:  # the populate users replace the fixture's
        for user in s.scalars(select(User)):
            s.delete(user)
    world = populate(store, tmp_path / "files")
    with store.session() as s:  # D1 and D2 (alice's first documents of T1) are long
        s.execute(
            update(DocumentRow)  # the rows behind the documents view
            .where(
                DocumentRow.campaign_id == world.campaign_id,
                DocumentRow.docno.in_(["D1", "D2"]),
            )
            .values(text=LONG_TEXT)
        )
    return base, app, world


def _waiter(browser, seconds: int = 20):  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds)


def _open(browser, base: str, assignment: int, docno: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(f"{base}/assess/{assignment}")
    _waiter(browser).until(ec.text_to_be_present_in_element((By.ID, "docno"), docno))
    _waiter(browser).until(lambda d: d.find_element(By.ID, "doc-text").text.strip() != "")


def _at_width(browser, width: int) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    browser.set_window_size(width, 844 if width < 800 else 900)


SCROLLED = """
const panel = document.querySelector('.document-panel');
const own = getComputedStyle(panel).overflowY;
return (own === 'auto' || own === 'scroll') && panel.scrollHeight > panel.clientHeight
  ? panel.scrollTop : window.scrollY;
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_the_keyboard_scrolls_a_long_document_and_still_judges(
    world_server,
    browser,  # noqa: F811
    width: int,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, app, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, world.assignment["alice", "T1"], "D1")
    body = browser.find_element(By.TAG_NAME, "body")
    wait = _waiter(browser)

    def scrolled() -> float:
        return float(browser.execute_script(SCROLLED))

    def press(key: str, then) -> float:  # type: ignore[no-untyped-def]
        before = scrolled()
        body.send_keys(key)
        wait.until(lambda d: then(before, scrolled()))
        return scrolled()

    start = scrolled()
    down = press(Keys.ARROW_DOWN, lambda b, a: a > b)
    assert down - start == pytest.approx(48, abs=2)
    press(Keys.ARROW_UP, lambda b, a: a < b)
    screen = press(Keys.SPACE, lambda b, a: a - b > 200)
    press(Keys.SHIFT + Keys.SPACE, lambda b, a: a < b)
    browser.find_element(By.TAG_NAME, "body")  # the page did not reload or navigate
    assert browser.find_element(By.ID, "docno").text == "D1"
    press(Keys.PAGE_DOWN, lambda b, a: a > b)
    end = press(Keys.END, lambda b, a: a > screen)
    assert (
        browser.execute_script(
            "const r = document.getElementById('doc-text').getBoundingClientRect();"
            "return r.bottom <= window.innerHeight + 2"
        )
        or width >= 800
    )  # the window's end shows the document's end
    press(Keys.HOME, lambda b, a: a < end)
    panel_top = browser.execute_script(
        "return document.querySelector('.document-panel').getBoundingClientRect().top"
    )  # the document's start: on a narrow screen the topic above stays scrolled away
    assert scrolled() <= start + 2 if width >= 800 else 0 <= panel_top <= 10
    # the judging keys still work: a grade judges D1 and opens D2 at its start
    body.send_keys(Keys.END)
    wait.until(lambda d: scrolled() > screen)
    body.send_keys("1")
    wait.until(lambda d: d.find_element(By.ID, "docno").text == "D2")
    wait.until(lambda d: "All judgements saved" in d.find_element(By.ID, "save-status").text)
    title_top = browser.execute_script(
        "return document.getElementById('doc-title').getBoundingClientRect().top"
    )
    assert 0 <= title_top < browser.execute_script("return window.innerHeight") / 2
    with get_store_of(app).read_session() as s:
        alice = world.users["alice"]
        grades = {
            j.docno: j.grade
            for j in current_judgements(s, world.campaign_id, qid="T1", user_id=alice)
        }
    assert grades == {"D1": 1}


@pytest.mark.parametrize("width", WIDTHS)
def test_the_layout_fits_the_screen(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    base, _, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/")
    buttons = browser.find_elements(By.CSS_SELECTOR, "table.my-topics a.button")
    assert len(buttons) == 2
    inner = browser.execute_script("return window.innerWidth")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= inner
    for button in buttons:  # the Start buttons are on screen
        rect = browser.execute_script("return arguments[0].getBoundingClientRect()", button)
        assert rect["left"] >= 0 and rect["right"] <= inner, rect
    assert "Start" in buttons[0].text
    _open(browser, base, world.assignment["alice", "T1"], "D1")
    assert browser.execute_script("return document.documentElement.scrollWidth") <= inner
    details = browser.find_element(By.ID, "topic-details")
    controls = browser.find_element(By.CSS_SELECTOR, ".judge-controls")
    fixed = controls.value_of_css_property("position") == "fixed"
    height = browser.execute_script("return window.innerHeight")
    text_top = browser.execute_script(
        "return document.getElementById('doc-text').getBoundingClientRect().top"
    )
    if width < 800:
        assert details.get_attribute("open") is None  # collapsed above the document
        assert fixed
        rect = browser.execute_script("return arguments[0].getBoundingClientRect()", controls)
        assert rect["bottom"] == pytest.approx(height, abs=1)
        assert text_top < height / 2  # the document starts in the first half of the screen
        grade = browser.find_element(By.CSS_SELECTOR, '#grades .grade[data-key="1"]')
        top = browser.execute_script("return arguments[0].getBoundingClientRect().top", grade)
        assert height / 2 < top < height
        # scrolled into the long document, a judgement opens the next one at its start,
        # not at the top of the page
        browser.execute_script("window.scrollTo(0, 3000)")
        grade.click()
        _waiter(browser).until(lambda d: d.find_element(By.ID, "docno").text == "D2")
        scroll = browser.execute_script("return window.scrollY")
        title = browser.execute_script(
            "return document.getElementById('docno').getBoundingClientRect().top"
        )
        assert 0 <= title < 40 and scroll > 0  # D2's start at the top, the topic above it
        details.find_element(By.TAG_NAME, "summary").click()  # the topic opens on request
        assert browser.find_element(By.CSS_SELECTOR, ".topic-narrative").is_displayed()
    else:
        assert details.get_attribute("open") is not None and not fixed
        assert browser.find_element(By.CSS_SELECTOR, ".topic-narrative").is_displayed()
        assert text_top < height / 3


@pytest.mark.parametrize("width", WIDTHS)
def test_cannot_judge_by_keyboard(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.select import Select

    base, app, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, world.assignment["alice", "T1"], "D1")
    wait = _waiter(browser)
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("c")
    reason = browser.find_element(By.ID, "cannot-reason")
    wait.until(lambda d: d.switch_to.active_element == reason)
    Select(reason).select_by_value("other")
    other = browser.find_element(By.ID, "cannot-other")
    other.send_keys(Keys.ENTER)  # empty: refused, with the reason why
    wait.until(
        lambda d: "empty reason cannot be saved" in d.find_element(By.ID, "cannot-error").text
    )
    assert browser.find_element(By.ID, "cannot-panel").is_displayed()
    assert browser.find_element(By.ID, "docno").text == "D1"
    other.send_keys("scanned upside down", Keys.ENTER)
    wait.until(lambda d: d.find_element(By.ID, "docno").text == "D2")
    assert not browser.find_element(By.ID, "cannot-panel").is_displayed()
    body.send_keys("c")
    reason = browser.find_element(By.ID, "cannot-reason")
    wait.until(lambda d: d.switch_to.active_element == reason)
    Select(reason).select_by_index(1)
    reason.send_keys(Keys.ENTER)  # Enter on the list saves its reason
    wait.until(lambda d: d.find_element(By.ID, "docno").text == "D3")
    wait.until(lambda d: "All judgements saved" in d.find_element(By.ID, "save-status").text)
    with get_store_of(app).read_session() as s:
        rows = current_judgements(s, world.campaign_id, qid="T1", user_id=world.users["alice"])
        reasons = {j.docno: (j.grade, j.cannot_judge) for j in rows}
    assert reasons == {
        "D1": (None, "scanned upside down"),
        "D2": (None, "The document is empty or missing"),
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_dark_mode_follows_the_browser(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    base, _, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")

    def luminance(css: str) -> float:
        channels = [int(c) for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
        return sum(w * c / 255 for w, c in zip((0.2126, 0.7152, 0.0722), channels, strict=True))

    def colours() -> tuple[float, float, float]:
        page = luminance(
            browser.find_element(By.TAG_NAME, "html").value_of_css_property("background-color")
        )
        card = luminance(
            browser.find_element(By.CSS_SELECTOR, ".document-panel").value_of_css_property(
                "background-color"
            )
        )
        text = luminance(browser.find_element(By.ID, "doc-text").value_of_css_property("color"))
        return page, card, text

    _open(browser, base, world.assignment["alice", "T1"], "D1")
    page, card, text = colours()
    assert page > 0.9 and card > 0.9 and text < 0.3
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    _open(browser, base, world.assignment["alice", "T1"], "D1")
    page, card, text = colours()
    assert page < 0.15 and card < 0.2 and text > 0.7
    mark = browser.find_element(By.CSS_SELECTOR, "#doc-text mark")
    assert (
        luminance(mark.value_of_css_property("color"))
        - luminance(mark.value_of_css_property("background-color"))
        > 0.4
    )  # highlighted text stays readable


@pytest.mark.parametrize("width", WIDTHS)
def test_resume_opens_the_first_unjudged_document(world_server, browser, width: int) -> None:  # noqa: F811
    base, app, world = world_server
    assignment = world.assignment["alice", "T1"]
    store = get_store_of(app)
    for docno in ("D1", "D2", "D6"):  # D3 skipped
        with store.connection() as connection:
            judging.record_judgement(
                connection, assignment, world.users["alice"], judging.JudgementInput(docno, 1)
            )
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, assignment, "D3")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_finished_topic_offers_the_next_one(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app, world = world_server
    assignment = world.assignment["alice", "T1"]
    with get_store_of(app).read_session() as s:
        from workbench.store.models import Assignment

        sequence = judging.document_sequence(s, s.get(Assignment, assignment))
    for docno in sequence[:-1]:
        with get_store_of(app).connection() as connection:
            judging.record_judgement(
                connection, assignment, world.users["alice"], judging.JudgementInput(docno, 0)
            )
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, assignment, sequence[-1])
    assert not browser.find_element(By.ID, "done-banner").is_displayed()
    browser.find_element(By.TAG_NAME, "body").send_keys("2")
    wait = _waiter(browser)
    wait.until(ec.visibility_of_element_located((By.ID, "next-topic")))
    # asked for once the topic is done (not with the page)
    wait.until(ec.text_to_be_present_in_element((By.ID, "next-topic"), "Next assigned topic"))
    offer = browser.find_element(By.CSS_SELECTOR, "#next-topic a")
    assert offer.text == "T2 · honeybee colony collapse →"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", offer)
    offer.click()
    wait.until(ec.url_contains(f"/assess/{world.assignment['alice', 'T2']}"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "topic-title"), "honeybee"))


@pytest.mark.parametrize("width", WIDTHS)
def test_highlighting_matches_word_forms(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, _, world = world_server
    _at_width(browser, width)
    log_in_as(browser, base, "alice")
    _open(browser, base, world.assignment["alice", "T1"], "D1")

    def marked(cls: str) -> set[str]:
        return set(
            browser.execute_script(
                "return Array.from(document.querySelectorAll('#doc-text mark.' + arguments[0]))"
                ".map(m => m.textContent)",
                cls,
            )
        )

    # the topic says "solar panel recycling"; the text says panels, recycled, recycles
    assert marked("query-term") == {"solar", "panels", "recycled", "recycling", "recycles"}
    assert marked("user-term") == set()
    if width < 800:
        browser.find_element(By.CSS_SELECTOR, "#topic-details summary").click()
    field = browser.find_element(By.ID, "term-input")
    field.send_keys("glasses", Keys.ENTER)  # its stem, glass, is in the text
    _waiter(browser).until(lambda d: marked("user-term") == {"glass"})


GUIDELINES = (
    "# How to judge\n\n**Relevant** means the document *answers* the topic.\n\n"
    "<script>window.injected = 1</script> <b>raw</b>\n\n[bad](javascript:alert(1))"
)


@pytest.mark.parametrize("width", WIDTHS)
def test_guidelines_before_the_first_document(world_server, browser, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, _, world = world_server
    _at_width(browser, width)
    wait = _waiter(browser)
    log_in_as(browser, base, "admin")  # the admin writes them on the campaign page
    browser.get(f"{base}/admin/campaigns/{world.campaign_id}")
    form = browser.find_element(By.ID, "guidelines-form")
    form.find_element(By.NAME, "guidelines").send_keys(GUIDELINES)
    submit_form(browser, form)
    assert "Guidelines saved." in flash_text(browser)
    assert browser.find_element(By.NAME, "guidelines").get_attribute("value") == GUIDELINES
    browser.find_element(By.CSS_SELECTOR, "form.inline button.link").click()  # log out
    wait.until(ec.url_contains("/login"))

    log_in_as(browser, base, "alice")
    browser.get(f"{base}/assess/{world.assignment['alice', 'T1']}")
    dialog = wait.until(ec.visibility_of_element_located((By.ID, "guidelines")))
    text = dialog.find_element(By.CSS_SELECTOR, ".guidelines-text")
    assert text.find_element(By.TAG_NAME, "h1").text == "How to judge"
    assert text.find_element(By.TAG_NAME, "strong").text == "Relevant"
    assert "<script>window.injected = 1</script> <b>raw</b>" in text.text  # shown, not run
    assert elements_now(text, By.TAG_NAME, "script") == []
    assert elements_now(text, By.TAG_NAME, "b") == []
    assert elements_now(text, By.CSS_SELECTOR, "a[href^='javascript']") == []
    assert browser.execute_script("return window.injected") is None
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("1")  # the dialog is open: no judgement
    browser.find_element(By.ID, "guidelines-close").click()
    wait.until(ec.invisibility_of_element_located((By.ID, "guidelines")))
    wait.until(lambda d: d.find_element(By.ID, "doc-text").text.strip() != "")
    assert browser.find_element(By.ID, "progress-text").text.startswith("0 /")
    body.send_keys("1")
    wait.until(lambda d: d.find_element(By.ID, "docno").text == "D2")
    wait.until(lambda d: "All judgements saved" in d.find_element(By.ID, "save-status").text)
    browser.find_element(By.ID, "guidelines-button").click()  # reopened at any time
    wait.until(ec.visibility_of_element_located((By.ID, "guidelines")))
    browser.find_element(By.ID, "guidelines-close").click()
    wait.until(ec.invisibility_of_element_located((By.ID, "guidelines")))
    # after the first judgement they no longer open by themselves
    browser.get(f"{base}/assess/{world.assignment['alice', 'T2']}")
    wait.until(lambda d: d.find_element(By.ID, "doc-text").text.strip() != "")
    assert not browser.find_element(By.ID, "guidelines").is_displayed()
    assert browser.find_element(By.ID, "guidelines-button").is_displayed()
