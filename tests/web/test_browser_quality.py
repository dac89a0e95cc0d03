"""The quality pages in headless Chromium at 1280 px and 390 px (a phone): the assessor
dashboard (tables and plots), gold and practice, the remainder's confirmation and the
assessor's own progress never scroll the page sideways (wide tables scroll in their own box);
an assessor practises before the first topic, and a gold document in the judging page looks
like any other."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, chromium, log_in_as, submit_form
from workbench.services import assignments, calibration, campaigns, gold, judging, users
from workbench.store.models import Assignment, Pool

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]

LAYOUT = """
const width = arguments[0];
const boxes = Array.from(document.querySelectorAll('main table')).map(t => {
  const box = t.parentElement;
  return {wide: t.scrollWidth > box.clientWidth + 1,
          scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
          right: box.getBoundingClientRect().right};
});
const images = Array.from(document.querySelectorAll('main img')).map(i => ({
  loaded: i.complete && i.naturalWidth > 0, right: i.getBoundingClientRect().right}));
return {inner: window.innerWidth, page: document.documentElement.scrollWidth,
        tables: boxes, images: images};
"""


@pytest.fixture
def world_server(world_url, tmp_path: Path) -> Iterator[tuple[str, object, World]]:
    """The world with gold documents (a quarter of each T1 queue), alice's and bob's
    judgements of T1 and a practice set; served with CSRF on."""
    app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True, TESTING=False)
    world = world_url[1]
    store = get_store_of(app)
    with store.session() as s:
        c = campaigns.get_campaign(s, world.campaign_id)
        gold.set_quality(s, c, gold_share=0.25, show_gold_accuracy=True)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2, "steps"), gold.GoldItem("T1", "D5", 0)])
    with store.read_session() as s:
        queues = {
            name: judging.document_sequence(s, s.get(Assignment, world.assignment[name, "T1"]))
            for name in ("alice", "bob")
        }
    for name, grade in (("alice", 1), ("bob", 0)):
        for docno in queues[name]:
            judging.submit_judgement(
                store,
                world.assignment[name, "T1"],
                world.users[name],
                judging.JudgementInput(docno, grade, time_spent_ms=9_000),
            )
    with store.session() as s:
        c = campaigns.get_campaign(s, world.campaign_id)
        lines = calibration.parse_items("T2\tD1\t1\tIt is about colony losses.\n")
        calibration.set_items(s, c, lines)
    with serve_in_thread(app) as url:
        yield url, app, world
    store.dispose()


@pytest.fixture(params=[1280, 390], ids=["1280px", "390px"])
def browser(request, tmp_path: Path):  # type: ignore[no-untyped-def]
    with chromium(tmp_path, request.param, phone=request.param < 800) as driver:
        yield driver


def _fits(browser, path: str) -> dict:  # type: ignore[no-untyped-def]
    layout = browser.execute_script(LAYOUT, browser.width)
    assert layout["page"] <= browser.width, f"{path}: the page scrolls sideways: {layout}"
    assert layout["inner"] == browser.width, f"{path}: the layout widened: {layout}"
    for table in layout["tables"]:
        assert table["right"] <= browser.width + 1, f"{path}: {table}"
        if table["wide"]:
            assert table["scrolls"], f"{path}: a wide table without its own scroll: {table}"
    for image in layout["images"]:
        assert image["loaded"] and image["right"] <= browser.width + 1, f"{path}: {image}"
    return layout


def test_the_dashboard_and_quality_pages_fit_the_screen(world_server, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    base, _app, world = world_server
    log_in_as(browser, base, "admin")
    prefix = f"{base}/admin/campaigns/{world.campaign_id}"
    browser.get(prefix + "/assessors")
    layout = _fits(browser, "/assessors")
    assert len(layout["images"]) == 4  # grades, gold, drift, judgements per hour
    assert len(layout["tables"]) == 3
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#assessor-table-1 tbody tr'))"
        ".map(r => r.cells[0].innerText.trim())"
    )
    assert rows == ["alice", "bob"]
    if browser.width < 800:
        assert any(t["wide"] for t in layout["tables"])  # 18 columns scroll on a phone
    form = browser.find_element(By.ID, "dashboard-options")
    Select(form.find_element(By.NAME, "period")).select_by_visible_text("session")
    submit_form(browser, form)
    assert "Drift of c1 by session" in browser.page_source
    _fits(browser, "/assessors?period=session")
    for path in ("/quality", "/remainder?assessor=bob"):
        browser.get(prefix + path)
        _fits(browser, path)
    assert "Confirm: reassign 6 document(s)" in browser.page_source  # bob's T2


def test_an_assessor_practises_first_then_judges_gold_unawares(world_server, browser) -> None:
    from selenium.webdriver.common.by import By

    base, _app, world = world_server
    log_in_as(browser, base, "carol")  # carol has not judged yet: a topic of her own first
    with get_store_of(_app).session() as s:
        pool = s.get(Pool, world.pool_id)
        carol_t1 = assignments.assign(s, pool, "T1", users.get_user(s, "carol")).id
    browser.get(f"{base}/assess/{carol_t1}")
    assert browser.current_url.endswith(f"/assess/campaigns/{world.campaign_id}/practice")
    _fits(browser, "practice")
    form = browser.find_element(By.ID, "practice-form")
    browser.execute_script("window.submittedFromHere = true")
    form.find_element(By.CSS_SELECTOR, "button[value='0']").click()
    browser.find_element(By.ID, "practice-feedback")
    text = browser.find_element(By.ID, "practice-feedback").text
    assert "Your answer: Not relevant" in text and "Expected: Relevant" in text
    assert "It is about colony losses." in text
    _fits(browser, "feedback")
    browser.find_element(By.ID, "practice-done").click()
    browser.get(f"{base}/assess/{carol_t1}")
    total = browser.find_element(By.ID, "total").text
    assert total == "8"  # 6 pooled and 2 gold documents, shown alike
    page = browser.page_source.lower()
    assert "gold" not in page and "steps" not in page
    browser.get(f"{base}/assess/progress")
    _fits(browser, "/assess/progress")
    assert "no checks yet" in browser.find_element(By.ID, "my-progress").text
