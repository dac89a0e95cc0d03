"""The browse pages in headless Chromium at 390 px (a phone) and 1280 px: the page body never
scrolls sideways, wide tables scroll inside their own container, the search form is in view
and searching works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import World, get_store_of, make_app, serve_in_thread
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, chromium, log_in_as, submit_form
from workbench.services import campaigns, document_imports, judging

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]

LONG_WORD = "x" * 300  # a docno-like run without a break, in a comment and a text


@pytest.fixture
def world_server(world_url, tmp_path: Path) -> Iterator[tuple[str, object, World]]:
    """The test world with judgements (a long comment among them) served with CSRF on."""
    app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True, TESTING=False)
    world = world_url[1]
    store = get_store_of(app)
    wide = tmp_path / "wide.jsonl"
    wide.write_text(json.dumps({"docno": "D9", "title": "Wide", "text": f"solar {LONG_WORD}"}))
    with store.session() as s:
        document_imports.import_documents(s, campaigns.get_campaign(s, world.campaign_id), [wide])
    with store.connection() as connection:
        for docno, grade in (("D1", 2), ("D2", None), ("D3", 0)):
            judging.record_judgement(
                connection,
                world.assignment["alice", "T1"],
                world.users["alice"],
                judging.JudgementInput(
                    docno,
                    grade,
                    cannot_judge=None if grade is not None else "foreign language",
                    comment=f"see {LONG_WORD}",
                ),
            )
    with serve_in_thread(app) as url:
        yield url, app, world
    store.dispose()


@pytest.fixture(params=[390, 1280], ids=["390px", "1280px"])
def browser(request, tmp_path: Path):  # type: ignore[no-untyped-def]
    with chromium(tmp_path, request.param, phone=request.param < 800) as driver:
        yield driver


LAYOUT = """
const width = arguments[0];  // the device's width (a phone widens its layout to fit content)
const tables = Array.from(document.querySelectorAll('main table')).map(t => {
  const box = t.parentElement;
  const style = getComputedStyle(box);
  return {id: t.id, wide: t.scrollWidth > box.clientWidth + 1,
          scrolls: ['auto', 'scroll'].includes(style.overflowX),
          right: box.getBoundingClientRect().right};
});
const sheet = Array.from(document.styleSheets)
  .find(s => (s.href || '').includes('/static/style.css'));
let rules = 0;
try { rules = sheet ? sheet.cssRules.length : 0; } catch (e) { rules = 0; }
const fetched = performance.getEntriesByType('resource')
  .filter(r => r.name.includes('/static/style.css'))
  .map(r => ({status: r.responseStatus, bytes: r.transferSize, ms: Math.round(r.duration)}));
const search = document.querySelector('form.filters');
const inView = e => { const r = e.getBoundingClientRect();
  return r.width > 0 && r.left >= 0 && r.right <= width + 1; };
return {width: width, inner: window.innerWidth, page: document.documentElement.scrollWidth,
        tables: tables, styled: rules > 0, stylesheet: fetched,
        search: search ? Array.from(search.querySelectorAll('input, select, button'))
          .filter(e => e.type !== 'hidden').map(inView) : null};
"""


def _layout(browser) -> dict:  # type: ignore[no-untyped-def]
    return browser.execute_script(LAYOUT, browser.width)


def _check(browser, path: str, *, search: bool, tables: int = 1) -> dict:  # type: ignore[no-untyped-def]
    layout = _layout(browser)
    # Without its stylesheet a page is as wide as its longest word: /documents at 390 px was
    # 2,537 px in one local run, the width it has with style.css blocked. Say so, not "wide".
    assert layout["styled"], f"{path}: the page has no stylesheet: {layout['stylesheet']}"
    assert layout["page"] <= layout["width"], f"{path}: the page scrolls sideways: {layout}"
    assert layout["inner"] == layout["width"], f"{path}: the layout widened: {layout}"
    assert len(layout["tables"]) == tables, path
    for table in layout["tables"]:
        assert table["right"] <= layout["width"] + 1, f"{path}: {table}"
        if table["wide"]:  # wider than its container: the container scrolls it
            assert table["scrolls"], f"{path}: {table}"
    if search:
        assert layout["search"] and all(layout["search"]), f"{path}: search form: {layout}"
    return layout


def test_the_browse_pages_fit_the_screen_and_search_works(world_server, browser) -> None:
    from selenium.webdriver.common.by import By

    base, _app, world = world_server
    log_in_as(browser, base, "admin")
    prefix = f"{base}/admin/campaigns/{world.campaign_id}"
    wide = []
    for path, search, tables in (
        ("/topics", True, 1),
        ("/documents", True, 1),
        ("/documents/D1", False, 1),
        ("/documents/D9", False, 0),  # a long unbroken word in its text
        ("/runs", False, 1),
        ("/judgements", True, 1),
        ("/judgements?assessor=alice", True, 1),
    ):
        browser.get(prefix + path)
        layout = _check(browser, path, search=search, tables=tables)
        wide += [t["id"] for t in layout["tables"] if t["wide"]]
    if browser.width < 800:
        assert "judgement-log" in wide  # nine columns do not fit a phone: they scroll
    browser.get(prefix + "/documents")
    form = browser.find_element(By.CSS_SELECTOR, "form.filters")
    form.find_element(By.NAME, "q").send_keys("recycl")
    submit_form(browser, form)
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#browse-documents tbody tr td:first-child'))"
        ".map(td => td.innerText.trim())"
    )
    assert rows == [f"D{i}" for i in range(1, 9)]  # D9 (a long word) has no "recycl"
    assert "1–8 of 8" in browser.find_element(By.CSS_SELECTOR, ".pager").text
    _check(browser, "/documents?q=recycl", search=True)
