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


def save(browser, name: str) -> None:  # type: ignore[no-untyped-def]
    """The viewport as a small PNG: downscaled and reduced to 64 colours."""
    image = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    image = image.resize((int(image.width * SCALE), int(image.height * SCALE)), Image.LANCZOS)
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
        with store.read_session() as session:
            campaign_id = campaigns.get_campaign(session, demo.CAMPAIGN).id
        store.dispose()
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
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                         f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars"):
            options.add_argument(argument)
        browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        browser.implicitly_wait(5)
        try:
            walkthrough(browser, base, campaign_id)
        finally:
            browser.quit()
            server.shutdown()


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
        lambda d: d.execute_script("return document.readyState") == "complete"
        and not d.find_elements(By.CSS_SELECTOR, ".job-running")
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
    show(browser, base, "/assess/")
    browser.find_elements(By.LINK_TEXT, "Start")[-1].click()
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


if __name__ == "__main__":
    main()
