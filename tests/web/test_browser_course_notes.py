"""In headless Chromium: the evaluation report's course-notes sections render (tables visible,
plots decoded by the browser) and the options form updates them."""

from __future__ import annotations

import pytest
from sqlalchemy import delete

from tests.web.conftest import get_store_of
from tests.web.test_browser import browser, log_in_as, pytestmark, server  # noqa: F401
from workbench.store.models import User


@pytest.fixture
def evaluated_server(server, tmp_path):  # noqa: F811
    """The analysis fixture campaign (3 topics, 4 runs, a pool, final labels) with efficiency
    figures for two runs, in the served app's store."""
    from tests.analysis.conftest import add_runs_and_pool, build_campaign
    from workbench.services.adjudication import MergeSpec, apply_rule
    from workbench.services.efficiency import import_efficiency

    base, app = server
    sidecar = tmp_path / "efficiency.csv"
    sidecar.write_text("run,mean_latency_ms,cost_per_1000_queries\nrunA,30,1\nrunB,10,2\n")
    with get_store_of(app).session() as s:
        s.execute(delete(User).where(User.username == "alice"))  # the campaign brings its own
        campaign = build_campaign(s)
        add_runs_and_pool(s, campaign, tmp_path)
        apply_rule(s, campaign, MergeSpec("majority", tie="higher"))
        import_efficiency(s, campaign, sidecar)
        campaign_id = campaign.id
    return base, campaign_id


def test_the_course_notes_sections_render(evaluated_server, browser) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    base, campaign_id = evaluated_server
    log_in_as(browser, base, "admin")
    browser.get(f"{base}/reports/{campaign_id}/evaluation?measures=map&allow_incomplete=1")
    for section in ("collection-measures", "power", "efficiency", "interleaving", "sweep"):
        assert browser.find_element(By.ID, f"section-{section}").is_displayed(), section
    power = browser.find_element(By.CSS_SELECTOR, "#section-power .section-note").text
    assert power.startswith("With 3 topics, differences of at least")
    assert browser.find_element(By.ID, "power-table").is_displayed()
    assert browser.find_element(By.ID, "interleaving-table").is_displayed()
    assert "has no documents" in browser.find_element(By.ID, "section-collection-measures").text

    def decoded_images(section: str) -> list[int]:
        return browser.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0] + ' img'))"
            ".map(i => i.complete ? i.naturalWidth : -1)",
            f"#section-{section}",
        )

    widths = decoded_images("efficiency")
    assert len(widths) == 2 and all(w > 0 for w in widths), widths

    form = browser.find_element(By.ID, "evaluation-options")
    form.find_element(By.NAME, "num_docs").send_keys("1000")
    form.find_element(By.NAME, "sweep").send_keys("run{x}")
    browser.execute_script("window.notesMark = true")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 15).until(
        lambda d: d.execute_script("return !window.notesMark && document.readyState === 'complete'")
    )
    table = browser.find_element(By.ID, "collection-measures-table")
    assert table.is_displayed() and "N = 1,000 documents" in table.text
    assert browser.find_element(By.ID, "sweep-table").is_displayed()
    assert "cross-validation" in browser.find_element(By.ID, "sweep-table-2").text
    sweep_widths = decoded_images("sweep")
    assert len(sweep_widths) == 1 and sweep_widths[0] > 0
