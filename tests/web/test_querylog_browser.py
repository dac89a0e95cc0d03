"""End to end in headless Chromium: a simulated query log from import to the report that ranks
the runs on clicks beside the assessors' qrels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_click_simulator import collection, sim
from tests.web.conftest import get_store_of
from tests.web.test_browser import CHROMEDRIVER, CHROMIUM, browser, log_in_as, server
from workbench.services import campaigns, qrels_imports, run_imports, topic_imports
from workbench.trec import write_qrels, write_run

__all__ = ["browser", "server"]  # fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium-driver)",
    ),
]


def campaign_with_log(app, folder: Path) -> tuple[int, Path]:
    """Campaign 'clicks': 20 topics, 6 runs, the qrels as set 'official'; a simulated
    position-based log of 30 impressions per topic by 12 users."""
    qrels, runs, titles = collection()
    folder.mkdir()
    (folder / "topics.tsv").write_text(
        "".join(f"{q}\t{t}\n" for q, t in titles.items()), encoding="utf-8"
    )
    write_qrels(qrels, folder / "qrels.txt")
    for tag, run in runs.items():
        write_run(run, folder / f"{tag}.txt", tag=tag)
    model = sim.ClickModel("pbm", max_grade=2)
    log = sim.simulate(qrels, runs, titles, model=model, impressions_per_topic=30, n_users=12)
    sim.write_log(log, folder / "simulated.jsonl")
    with get_store_of(app).session() as session:
        campaign = campaigns.create_campaign(session, "clicks", scale="0=No,1=Yes,2=Very")
        topic_imports.import_topics(session, campaign, folder / "topics.tsv")
        run_imports.import_runs(session, campaign, [folder / f"{t}.txt" for t in runs])
        qrels_imports.import_qrels(session, campaign, folder / "qrels.txt", name="official")
        return campaign.id, folder / "simulated.jsonl"


def test_simulated_log_from_import_to_evaluation_report(server, browser, tmp_path: Path) -> None:
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base, app = server
    campaign_id, log_path = campaign_with_log(app, tmp_path / "files")

    def submit(form) -> None:  # type: ignore[no-untyped-def]
        browser.execute_script("window.submittedFromHere = true")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(browser, 30, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script(
                "return !window.submittedFromHere && document.readyState === 'complete'"
                " && !!document.querySelector('.who')"
            )
        )

    def text_of(selector: str) -> str:
        return browser.execute_script(
            f"return Array.from(document.querySelectorAll({selector!r}))"
            ".map(e => e.innerText.trim()).join(' | ')"
        )

    log_in_as(browser, base, "admin")
    browser.get(f"{base}/reports/{campaign_id}/agreement")
    browser.find_element(By.LINK_TEXT, "Query logs").click()
    form = browser.find_element(By.ID, "import-querylog")
    form.find_element(By.NAME, "log").send_keys(str(log_path))
    k = form.find_element(By.NAME, "min_users")
    k.clear()
    k.send_keys("3")
    submit(form)
    assert "Query log 'simulated.jsonl': 600 impressions stored (600 on 20 topics)." in text_of(
        ".flash"
    )
    report = text_of("#anonymisation")
    assert "user and session ids replaced by keyed hashes" in report
    assert "queries issued by fewer than 3 distinct users dropped" in report

    form = browser.find_element(By.ID, "click-options")
    qrels = form.find_element(By.NAME, "qrels")
    qrels.clear()
    qrels.send_keys("official")
    submit(form)
    agreement = text_of("#click-agreement")
    assert "against the qrels set official qrels" in agreement
    evaluation = text_of("#click-evaluation")
    for tag in ("r0", "r1", "r2", "r3", "r4", "r5"):
        assert tag in evaluation
    notes = text_of("p.muted")
    assert "Kendall's tau between the two rankings" in notes
    tau = float(notes.split("Kendall's tau between the two rankings: ")[1][:6])
    assert tau > 0.5  # good runs get more clicks on relevant documents
    covered = re.search(r"Click preferences cover (\d+) of the campaign's 20 topics", notes)
    assert covered and 15 <= int(covered.group(1)) <= 20  # the page says which are left out
