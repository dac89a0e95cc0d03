"""Take the README's admin-walkthrough screenshots in headless Chromium.

Builds the demo campaign in a temporary SQLite store, lets the demo assessors judge every
document of their first topic (grades from the demo's reference qrels, with a few changed so
that agreement and adjudication have something to show), serves the app on a free port and
saves one PNG per step under docs/screenshots/ (downscaled, 64 colours: a few tens of kB each).

    python3 scripts/readme_screenshots.py            # needs chromium and chromedriver
"""

from __future__ import annotations

import io
import sys
import tempfile
import threading
from pathlib import Path

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench import demo  # noqa: E402
from workbench.services import campaigns  # noqa: E402
from workbench.store import open_store  # noqa: E402
from workbench.web import create_app  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
WIDTH, HEIGHT = 1280, 860
SCALE = 0.6


def save(browser, name: str, scale: float = SCALE) -> None:  # type: ignore[no-untyped-def]
    """The viewport as a small PNG: downscaled and reduced to 64 colours."""
    image = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    image = image.resize((int(image.width * scale), int(image.height * scale)), Image.LANCZOS)
    image = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    path = OUT / f"{name}.png"
    image.save(path, optimize=True)
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} kB")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'demo.sqlite'}"
        store = open_store(url, upgrade=True)
        demo.create_demo(store)
        demo.judge_first_topics(store)
        modes = demo.create_mode_demos(store)
        with store.session() as session:
            campaign = campaigns.get_campaign(session, demo.CAMPAIGN)
            campaigns.set_judging(session, campaign, evidence=True)
            campaign_id = campaign.id
        store.dispose()
        empty_url = f"sqlite:///{Path(tmp) / 'empty.sqlite'}"
        open_store(empty_url, upgrade=True).dispose()
        app = create_app(
            {
                "DATABASE_URL": url,
                "SECRET_KEY": "screenshots",
                "INSTANCE_PATH": str(Path(tmp) / "instance"),
                "REPORT_JOB_WAIT_SECONDS": 120,
            }
        )
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            f"--window-size={WIDTH},{HEIGHT}",
            "--hide-scrollbars",
        ):
            options.add_argument(argument)
        browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        browser.implicitly_wait(5)
        empty = create_app(
            {"DATABASE_URL": empty_url, "SECRET_KEY": "s", "INSTANCE_PATH": str(Path(tmp) / "e")}
        )
        empty_server = make_server("127.0.0.1", 0, empty, threaded=True)
        threading.Thread(target=empty_server.serve_forever, daemon=True).start()
        try:
            walkthrough(browser, base, campaign_id)
            judging_modes(browser, base, campaign_id, modes)
            browser.get(f"http://127.0.0.1:{empty_server.server_port}/login")
            save(browser, "first-admin")
        finally:
            browser.quit()
            server.shutdown()
            empty_server.shutdown()


def log_in(browser, base: str, name: str, password: str) -> None:  # type: ignore[no-untyped-def]
    browser.delete_all_cookies()
    browser.get(base + "/login")
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    WebDriverWait(browser, 15).until(ec.presence_of_element_located((By.CSS_SELECTOR, ".who")))


def show(browser, base: str, path: str, anchor: str | None = None) -> None:  # type: ignore[no-untyped-def]
    browser.get(base + path)
    WebDriverWait(browser, 120).until(
        lambda d: (
            d.execute_script("return document.readyState") == "complete"
            and not d.find_elements(By.CSS_SELECTOR, ".job-running")
        )
    )
    if anchor:
        element = browser.find_element(By.ID, anchor)
        browser.execute_script(
            "(arguments[0].closest('section') || arguments[0]).scrollIntoView({block: 'start'})",
            element,
        )


def walkthrough(browser, base: str, cid: int) -> None:  # type: ignore[no-untyped-def]
    admin = next(p for n, p, r in demo.logins() if r == "admin")
    log_in(browser, base, "admin", admin)
    show(browser, base, "/admin/")
    save(browser, "1-campaigns")
    show(browser, base, f"/admin/campaigns/{cid}")
    save(browser, "2-upload")
    show(browser, base, f"/admin/campaigns/{cid}", "build-pool")
    save(browser, "3-pool")
    show(browser, base, f"/admin/campaigns/{cid}", "pool-card")
    save(browser, "3-pool-card")
    show(browser, base, f"/admin/campaigns/{cid}/assignments")
    save(browser, "4-assign")
    name, password, _ = next(login for login in demo.logins() if login[2] == "assessor")
    log_in(browser, base, name, password)
    start(browser, base, demo.CAMPAIGN, -1)
    WebDriverWait(browser, 15).until(lambda d: d.find_element(By.ID, "docno").text)
    save(browser, "5-judge")
    log_in(browser, base, "admin", admin)
    show(browser, base, f"/admin/campaigns/{cid}/progress")
    save(browser, "5-progress")
    show(browser, base, f"/reports/{cid}/agreement")
    save(browser, "6-agree")
    show(browser, base, f"/reports/{cid}/adjudication")
    save(browser, "7-adjudicate")
    show(browser, base, f"/reports/{cid}/evaluation?qrels=demo-reference")
    save(browser, "8-report")
    show(browser, base, f"/admin/campaigns/{cid}/documents?q=recycling")
    save(browser, "9-browse-documents")
    show(browser, base, f"/admin/campaigns/{cid}/judgements")
    save(browser, "9-judgement-log")


def start(browser, base: str, campaign: str, which: int, *words: str) -> None:  # type: ignore[no-untyped-def]
    """Open an assignment of `campaign` from My topics (`which`: its index among them)."""
    show(browser, base, "/assess/")
    rows = browser.find_elements(By.XPATH, f"//tr[td[1][normalize-space()='{campaign}']]")
    rows[which].find_element(By.CSS_SELECTOR, "a.button").click()


MARK_TEXT = """
const box = document.getElementById('doc-text'), words = arguments[0];
const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
const text = box.textContent, start = text.indexOf(words), end = start + words.length;
let node, seen = 0;
const range = document.createRange();
while ((node = walker.nextNode())) {
  if (start >= seen && start <= seen + node.length) range.setStart(node, start - seen);
  if (end >= seen && end <= seen + node.length) { range.setEnd(node, end - seen); break; }
  seen += node.length;
}
getSelection().removeAllRanges();
getSelection().addRange(range);
"""


def judging_modes(browser, base: str, cid: int, modes: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    """Issue 25's pages: an evidence passage, a list of passages, a pair, and the evaluation
    report and the judging page on a 390 px phone."""
    from selenium.webdriver.common.action_chains import ActionChains

    name, password, _ = next(login for login in demo.logins() if login[2] == "assessor")
    log_in(browser, base, name, password)
    start(browser, base, demo.CAMPAIGN, 0, "Resume")
    WebDriverWait(browser, 15).until(lambda d: d.find_element(By.ID, "docno").text)
    first_sentence = browser.execute_script(
        "return document.getElementById('doc-text').textContent.split('. ')[0]"
    )
    browser.execute_script(MARK_TEXT, first_sentence)
    ActionChains(browser).send_keys("e").perform()
    WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, "mark.evidence"))
    save(browser, "10-evidence")
    for mode, shot in (("demo-passages", "11-passages"), ("demo-pairs", "12-pairs")):
        start(browser, base, mode, 0)
        WebDriverWait(browser, 15).until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, ".passage, #left-docno")
                and d.find_element(By.ID, "save-status").text != "Loading…"
            )
        )
        if mode == "demo-passages":
            ActionChains(browser).send_keys("2").send_keys("1").perform()
        save(browser, shot)
    browser.set_window_size(390, 844)
    start(browser, base, demo.CAMPAIGN, -1)
    WebDriverWait(browser, 15).until(lambda d: d.find_element(By.ID, "docno").text)
    save(browser, "13-phone-judge", scale=1)
    admin = next(p for n, p, r in demo.logins() if r == "admin")
    log_in(browser, base, "admin", admin)
    show(browser, base, f"/reports/{cid}/evaluation?qrels=demo-reference", "evaluation-runs")
    browser.execute_script(
        "const t = document.getElementById('evaluation-runs');"
        "t.scrollLeft = 120; t.scrollIntoView({block: 'start'});"
    )
    save(browser, "13-phone-evaluation", scale=1)
    browser.set_window_size(WIDTH, HEIGHT)


if __name__ == "__main__":
    main()
