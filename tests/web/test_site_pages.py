"""Every page of a whole site (tests/web/site.py) in headless Chromium: none is wider than a
390 px phone, their touch targets are at least 44 px high there, and axe-core finds no serious
or critical accessibility violation in the light or the dark colour scheme (issue 25, defects
2, 4 and 5). A test also checks that the walk covers every page route of the admin pages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import serve_in_thread
from tests.web.site import ADMIN_BLUEPRINTS, NOT_PAGES, PASSWORDS, Site, build_site, pages
from tests.web.test_browser import chromium, pytestmark
from workbench.store import open_store
from workbench.web import create_app

assert pytestmark  # the same skip rule as the other browser tests
PHONE = 390
TOUCH_PX = 44


@pytest.fixture(scope="module")
def site_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Site, Path]]:
    """The site built once for the module (SQLite: these tests look at pages, not stores)."""
    folder = tmp_path_factory.mktemp("site")
    url = f"sqlite:///{folder / 'site.sqlite'}"
    store = open_store(url, upgrade=True)
    site = build_site(store, folder / "files")
    store.dispose()
    app = create_app(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": "site",
            "INSTANCE_PATH": str(folder / "instance"),
            "REPORT_JOB_WAIT_SECONDS": 120,
            "REPORT_BOOTSTRAP_RESAMPLES": 50,  # a page to look at, not a statistic to check
        }
    )
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with serve_in_thread(app) as base:
        yield base, site, folder


SHARDS = 3
"""The walk is split in shards, each its own test, so that the workers share it out."""


def _walk(browser, base: str, site: Site, shard: int) -> Iterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Open every SHARDS-th page from the `shard`-th (logged in as its user), each loaded and
    its scripts run; yields (endpoint, path) with the page shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    who: str | None = "nobody"
    every = [("auth.login", "/login", None), *pages(site)]
    for endpoint, path, user in every[shard::SHARDS]:
        if user != who:
            browser.delete_all_cookies()
            browser.get(base + "/login")
            if user is not None:
                browser.find_element(By.ID, "username").send_keys(user)
                browser.find_element(By.ID, "password").send_keys(PASSWORDS[user])
                browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
                WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".who"))
            who = user
        browser.get(base + path)
        WebDriverWait(browser, 60).until(
            lambda d: d.execute_script(
                "return document.readyState === 'complete'"
                " && document.querySelector('.job-running') === null"
            )
        )
        if endpoint == "assess.judge":  # the judging pages fetch their documents
            WebDriverWait(browser, 20).until(
                lambda d: d.find_element(By.ID, "save-status").text not in ("", "Loading…")
            )
            time.sleep(0.3)
        yield endpoint, path


def test_the_walk_covers_every_page_route(site_server) -> None:  # type: ignore[no-untyped-def]
    """Every GET route of the admin blueprints (and the assessor's and account pages) is
    walked, but for the files and transient pages NOT_PAGES names."""
    from workbench.web import create_app as make

    app = make({"DATABASE_URL": "sqlite://", "SECRET_KEY": "x"})
    routes = {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if "GET" in (rule.methods or ())
        and (
            rule.endpoint.split(".")[0] in ADMIN_BLUEPRINTS
            or rule.endpoint
            in {"assess.topics", "assess.judge", "auth.change_password", "auth.login"}
        )
    }
    _, site, _ = site_server
    walked = {"auth.login"} | {endpoint for endpoint, _, _ in pages(site)}
    assert routes - set(NOT_PAGES) == walked


WIDE = """
const width = document.documentElement.clientWidth, out = [];
for (const e of document.querySelectorAll('body *')) {
  const box = e.getBoundingClientRect();
  if (box.width === 0 || box.right <= width + 1) continue;
  let clipped = false;  // inside a box that scrolls (or clips) it
  for (let p = e.parentElement; p && !clipped; p = p.parentElement) {
    clipped = ['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX);
  }
  const name = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '');
  if (!clipped) out.push(name + ' ' + Math.round(box.right));
}
return [document.documentElement.scrollWidth, out.slice(0, 5)];
"""


SMALL_TARGETS = """
const out = [];
for (const e of document.querySelectorAll(arguments[0])) {
  const box = e.getBoundingClientRect();
  const small = box.width > 0 && box.height < arguments[1] - 0.5;
  if (small) out.push(e.textContent.trim() + ' ' + box.height);
}
return out;
"""
TARGETS = "#grades button, #position-map .cell, .nav-buttons button, .passage .grade"
"""The judging pages' touch targets: grade buttons, the position map's cells, navigation."""


@pytest.mark.long
@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_page_is_wider_than_a_phone_and_touch_targets_are_44_px(  # type: ignore[no-untyped-def]
    site_server, tmp_path: Path, shard: int
) -> None:
    base, site, _ = site_server
    too_wide, small = [], {}
    with chromium(tmp_path, PHONE, phone=True) as browser:
        for endpoint, path in _walk(browser, base, site, shard):
            width, elements = browser.execute_script(WIDE)
            if width > PHONE:
                too_wide.append(f"{endpoint} {path}: {width} px ({', '.join(elements)})")
            if endpoint == "assess.judge":
                assert browser.execute_script(
                    "return document.querySelectorAll(arguments[0]).length", TARGETS
                ), f"{path} shows none of {TARGETS}"
                found = browser.execute_script(SMALL_TARGETS, TARGETS, TOUCH_PX)
                if found:
                    small[path] = found
    assert too_wide == []
    assert small == {}


def _axe(browser) -> list[str]:  # type: ignore[no-untyped-def]
    """The serious and critical violations axe-core finds on the page shown."""
    from axe_selenium_python import Axe

    axe = Axe(browser)
    axe.inject()
    found = axe.run()["violations"]
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:3])}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.long
@pytest.mark.parametrize("shard", range(SHARDS))
def test_axe_finds_no_serious_violation_in_either_colour_scheme(  # type: ignore[no-untyped-def]
    site_server, tmp_path: Path, shard: int
) -> None:
    pytest.importorskip("axe_selenium_python")
    base, site, _ = site_server
    violations = {}
    with chromium(tmp_path, 1280) as browser:
        for _endpoint, path in _walk(browser, base, site, shard):
            for scheme in ("light", "dark"):
                browser.execute_cdp_cmd(
                    "Emulation.setEmulatedMedia",
                    {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
                )
                found = _axe(browser)
                if found:
                    violations[f"{path} ({scheme})"] = found
    assert violations == {}
