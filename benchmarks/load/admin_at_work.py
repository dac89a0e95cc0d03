"""Load with an admin at work: N assessors judge through `workbench serve` while an admin
uploads a large run, imports a large document collection and opens every report page.

Builds the load campaign of run_load.py (one topic per five assessors) plus four more runs
and a reference qrels set, so that the evaluation (randomization test, ranking stability,
reusability) and agreement (bootstrap intervals) reports have work to do. After a ramp-up
the assessors judge for `--seconds`; meanwhile one admin thread, in this order:

1. uploads a run file of `--run-mb` MB through the admin page (multipart POST) and follows
   the import task's page until the run is stored;
2. imports a JSONL document file of `--docs-mb` MB with `workbench import documents` (a
   separate process on the same store, as an organiser would from the shell);
3. opens every admin and report page and download once (campaign, progress, assignments,
   users, exports, agreement, adjudication, evaluation with a randomization test, their
   downloads), following a report's progress page until its result is shown.

The assessors judge until the admin is done (at most `--seconds`).

Reports the judgements' latency (p50/p95/p99/max) over the whole window and while each
import ran, the admin's actions and durations, on SQLite the longest holds of the store's
write lock (by any process: `WORKBENCH_WRITE_LOCK_LOG`), and checks the store: every
acknowledged judgement stored once, none lost. The sizes are parameters; the defaults are
small for a quick run (`--run-mb 200 --docs-mb 1024` is the full size of issue 11).

    python benchmarks/load/admin_at_work.py [--db URL] [--run-mb 20] [--docs-mb 50]
        [--seconds 60] [--rate 300] [--assessors 50]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_load
from stall_probes import StallProbes

from workbench.services import campaigns, qrels_imports, run_imports
from workbench.services import users as user_service
from workbench.store import Store, open_store
from workbench.store.db import WRITE_LOCK_LOG_ENV

ADMIN = "load-admin"
ADMIN_PASSWORD = "a long admin password"
EXTRA_RUNS = 4
PAGE_TIMEOUT_S = 600.0
UPLOAD_TIMEOUT_S = 3600.0
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')
REFRESH = re.compile(r'http-equiv="refresh" content="1; url=([^"]+)"')


@dataclass
class AdminLog:
    """What the admin did: (action, start, end, HTTP status or exit code), time.monotonic."""

    actions: list[tuple[str, float, float, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, action: str, start: float, status: int) -> None:
        self.actions.append((action, start, time.monotonic(), status))


def prepare_campaign(store: Store, load: run_load.LoadCampaign, folder: Path, seed: int) -> None:
    """An admin with a password, four more runs and reference qrels over the pooled docnos."""
    rng = random.Random(seed)
    with store.session() as session:
        user_service.create_user(session, ADMIN, ADMIN_PASSWORD, role="admin")
        campaign = campaigns.get_campaign(session, load.campaign_id)
        docnos = sorted({d for a in load.assessors for d in a.docnos})
        qids = sorted({d.split("-D")[0] for d in docnos})
        paths = []
        for k in range(EXTRA_RUNS):
            path = folder / f"extra{k}.run"
            lines = []
            for qid in qids:
                ranked = [d for d in docnos if d.startswith(f"{qid}-D")]
                rng.shuffle(ranked)
                lines += [
                    f"{qid} Q0 {d} {r} {len(ranked) - r} extra{k}\n"
                    for r, d in enumerate(ranked, 1)
                ]
            path.write_text("".join(lines))
            paths.append(path)
        run_imports.import_runs(session, campaign, paths)
        qrels = folder / "reference.qrels"
        qrels.write_text("".join(f"{d.split('-D')[0]} 0 {d} {rng.randint(0, 2)}\n" for d in docnos))
        qrels_imports.import_qrels(session, campaign, qrels, name="reference")


def write_big_run(path: Path, qids: list[str], megabytes: float) -> int:
    """A run of about `megabytes` MB over `qids` (new docnos); its line count."""
    target = int(megabytes * 1e6)
    per_topic = max(1, target // (len(qids) * 40))
    written = lines = 0
    with path.open("w") as out:
        for qid in qids:
            chunk = [
                f"{qid} Q0 big-{qid}-{i} {i + 1} {per_topic - i} bigrun\n" for i in range(per_topic)
            ]
            text = "".join(chunk)
            out.write(text)
            written += len(text)
            lines += per_topic
    return lines


def write_big_documents(path: Path, megabytes: float) -> int:
    """A JSONL collection of about `megabytes` MB (4 KB documents); its document count."""
    rng = random.Random(7)
    words = [f"w{rng.randint(0, 50_000)}" for _ in range(20_000)]
    target = int(megabytes * 1e6)
    written = count = 0
    with path.open("w") as out:
        while written < target:
            batch = []
            for _ in range(1000):
                start = rng.randint(0, len(words) - 700)
                text = " ".join(words[start : start + 650])
                batch.append(
                    json.dumps({"docno": f"coll-{count}", "title": f"d{count}", "text": text})
                )
                count += 1
            block = "\n".join(batch) + "\n"
            out.write(block)
            written += len(block)
    return count


class Browser:
    """The admin's session over HTTP/1.1 (cookies and the CSRF token of the last page)."""

    def __init__(self, port: int, page_timeout: float = PAGE_TIMEOUT_S) -> None:
        self.port = port
        self.page_timeout = page_timeout
        self.cookie = ""
        self.csrf = ""
        self.last_page = ""

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        wait = timeout or self.page_timeout
        connection = http.client.HTTPConnection(run_load.HOST, self.port, timeout=wait)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        connection.request(method, path, body=body, headers=sent | (headers or {}))
        response = connection.getresponse()
        data = response.read()
        connection.close()
        for value in response.headers.get_all("Set-Cookie") or []:
            self.cookie = value.split(";", 1)[0]
        match = CSRF.search(data.decode("utf-8", "replace"))
        if match:
            self.csrf = match.group(1)
        return response.status, dict(response.headers), data

    def log_in(self) -> None:
        self.request("GET", "/login")
        form = {"username": ADMIN, "password": ADMIN_PASSWORD, "csrf_token": self.csrf}
        status, _, _ = self.request(
            "POST",
            "/login",
            urlencode(form),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        if status not in (302, 303):
            raise RuntimeError(f"admin login answered {status}")
        self.request("GET", "/admin/")  # the CSRF token of the new session (rotated at login)

    def upload(self, path: str, field_name: str, file: Path, form: dict[str, str]) -> int:
        """A multipart POST of `file` (streamed from a temporary file) and the form fields."""
        boundary = uuid.uuid4().hex
        with tempfile.TemporaryFile() as body:
            for name, value in (form | {"csrf_token": self.csrf}).items():
                body.write(
                    f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                    f"{value}\r\n".encode()
                )
            body.write(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{field_name}"; '
                f'filename="{file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            )
            with file.open("rb") as source:
                while block := source.read(1 << 20):
                    body.write(block)
            body.write(f"\r\n--{boundary}--\r\n".encode())
            size = body.tell()
            body.seek(0)
            headers = {
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(size),
            }
            status, answer, _ = self.request("POST", path, body, headers, timeout=UPLOAD_TIMEOUT_S)
        location = answer.get("Location", "")
        if status == 303 and "/imports/" in location:  # imported by a task: follow its page
            status = self.open(location.split(str(self.port), 1)[-1], UPLOAD_TIMEOUT_S)
        if status != 303 or 'class="flash error' in self.request("GET", "/admin/")[2].decode():
            raise RuntimeError(f"the upload was refused ({status})")
        return status

    def open(self, path: str, timeout: float | None = None) -> int:
        """GET `path`, following a report's (or an import task's) progress page (its reload
        URL) to the result, for at most `timeout` s (default: the page timeout). A
        download is fetched through its link on the last page when it has one (the link
        names the result the page showed)."""
        stem = path.split("?")[0]
        link = re.search(rf'href="({re.escape(stem)}\?[^"]*)"', self.last_page)
        if link is not None:
            path = link.group(1).replace("&amp;", "&")
        deadline = time.monotonic() + (timeout or self.page_timeout)
        while True:
            status, headers, data = self.request("GET", path)
            text = data.decode("utf-8", "replace")
            if "attachment" not in headers.get("Content-Disposition", ""):
                self.last_page = text
            reload = REFRESH.search(text)
            if reload is None or time.monotonic() > deadline:
                return status
            path = reload.group(1).replace("&amp;", "&")
            time.sleep(1.0)


def admin_pages(campaign_id: int) -> list[str]:
    c = campaign_id
    evaluation = "qrels=reference&measures=map+P.10+ndcg&test=randomization"
    return [
        "/admin/",
        f"/admin/campaigns/{c}",
        f"/admin/campaigns/{c}/progress",
        f"/admin/campaigns/{c}/assignments",
        "/admin/users",
        f"/admin/campaigns/{c}/download/qrels",
        f"/admin/campaigns/{c}/download/log",
        f"/admin/campaigns/{c}/download/pool",
        "/reports/",
        f"/reports/{c}/agreement",
        f"/reports/{c}/agreement.csv",
        f"/reports/{c}/adjudication",
        f"/reports/{c}/evaluation?{evaluation}",
        f"/reports/{c}/evaluation.csv?{evaluation}",
    ]


def admin_at_work(
    port: int,
    url: str,
    load: run_load.LoadCampaign,
    files: dict[str, Path],
    start_at: float,
    stop: threading.Event,
    log: AdminLog,
    workdir: Path,
    page_timeout: float,
) -> None:
    """The admin's actions (see the module docstring), from `start_at` until `stop`."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    browser = Browser(port, page_timeout)
    try:
        browser.log_in()
        started = time.monotonic()
        status = browser.upload(
            f"/admin/campaigns/{load.campaign_id}/upload/runs", "files", files["run"], {}
        )
        log.add("upload run", started, status)
        started = time.monotonic()
        command = [sys.executable, "-m", "workbench", "--db", url, "import", "documents"]
        command += ["--campaign", str(load.campaign_id), str(files["documents"])]
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=False)
        log.add("import documents (CLI)", started, done.returncode)
        if done.returncode:
            log.errors.append(f"import documents: {done.stderr.strip()[-500:]}")
        for page in admin_pages(load.campaign_id):
            if stop.is_set():
                break
            started = time.monotonic()
            log.add(f"GET {page.split('?')[0]}", started, browser.open(page))
    except Exception as error:  # reported with the figures
        log.errors.append(f"{type(error).__name__}: {error}")
    finally:
        stop.set()  # the admin is done: the assessors stop


def window_latencies(
    results: list[run_load.AssessorResult], sent: list[list[float]], start: float, end: float
) -> np.ndarray:
    """Latencies (ms) of the judgements sent between start and end (time.monotonic)."""
    picked = [
        lat
        for r, times in zip(results, sent, strict=True)
        for lat, at in zip(r.latencies_s, times, strict=True)
        if start <= at <= end
    ]
    return np.array(picked) * 1000.0


def read_lock_log(path: Path) -> list[tuple[float, float, str]]:
    """The write lock's holds (seconds, time.monotonic at release, command), longest first."""
    if not path.exists():
        return []
    holds = []
    for line in path.read_text().splitlines():
        held, at, _pid, command = line.split(" ", 3)
        role = "import documents" if " import documents " in command else command[-60:]
        holds.append((float(held), float(at), role))
    return sorted(holds, reverse=True)


def write_timeline(
    path: Path,
    began: float,
    results: list[run_load.AssessorResult],
    sent: list[list[float]],
    log: AdminLog,
    holds: list[tuple[float, float, str]],
    stalls: list[tuple[float, float, str]],
) -> None:
    """JSON lines, one event each, times in seconds since `began` (time.monotonic), sorted:
    {"t", "judgement_ms", "assessor"}, {"t", "end", "action", "status"},
    {"t", "held_s", "by"} and {"t", "stall_s", "where"} (t: when the judgement was sent, the
    action started, the lock was released, the stall began; see stall_probes.py)."""
    events: list[dict[str, object]] = [
        {"t": round(at - began, 4), "judgement_ms": round(lat * 1000.0, 2), "assessor": k}
        for k, (r, times) in enumerate(zip(results, sent, strict=True))
        for lat, at in zip(r.latencies_s, times, strict=True)
    ]
    events += [
        {"t": round(s - began, 4), "end": round(e - began, 4), "action": a, "status": st}
        for a, s, e, st in log.actions
    ]
    events += [{"t": round(at - began, 4), "held_s": held, "by": by} for held, at, by in holds]
    events += [
        {"t": round(at - began, 4), "stall_s": round(took, 4), "where": where}
        for at, took, where in stalls
    ]
    events.sort(key=lambda event: float(str(event["t"])))
    path.write_text("".join(json.dumps(event) + "\n" for event in events))


def percentiles(latencies_ms: np.ndarray) -> dict[str, float]:
    if latencies_ms.size == 0:
        return {"n": 0}
    p50, p99 = np.percentile(latencies_ms, [50, 99])
    return {"n": int(latencies_ms.size), "p50_ms": p50, "p99_ms": p99, "max_ms": latencies_ms.max()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assessors", type=int, default=50)
    parser.add_argument(
        "--seconds", type=float, default=1800.0, help="at most; the admin's work sets the end"
    )
    parser.add_argument(
        "--rate", type=float, default=300.0, help="offered judgements/s (0: closed loop)"
    )
    parser.add_argument("--run-mb", type=float, default=20.0)
    parser.add_argument("--docs-mb", type=float, default=50.0)
    parser.add_argument("--db", help="store URL (default: a new SQLite file in a temp folder)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ramp-up", type=float, default=2.0)
    parser.add_argument(
        "--page-timeout",
        type=float,
        default=PAGE_TIMEOUT_S,
        help="seconds the admin follows a report's progress page before moving on",
    )
    parser.add_argument(
        "--no-admin", action="store_true", help="the assessors alone: the baseline of this machine"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument(
        "--timeline",
        type=Path,
        help="also write every judgement (sent at, latency), admin action and write-lock hold "
        "as JSON lines, times in seconds since the start",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="workbench-admin-load-") as tmp:
        folder = Path(tmp)
        url = args.db or f"sqlite:///{folder / 'load.sqlite'}"
        store = open_store(url, upgrade=True)
        load = run_load.build_campaign(store, args.assessors)
        prepare_campaign(store, load, folder, seed=1)
        qids = sorted({d.split("-D")[0] for a in load.assessors for d in a.docnos})
        generated = time.monotonic()
        files = {"run": folder / "big.run", "documents": folder / "collection.jsonl"}
        run_lines = write_big_run(files["run"], qids, args.run_mb)
        n_documents = write_big_documents(files["documents"], args.docs_mb)
        generated = time.monotonic() - generated
        lock_log = folder / "writelock.log"  # every hold of SQLite's write lock >= 5 ms
        os.environ[WRITE_LOCK_LOG_ENV] = str(lock_log)  # for the server and the import
        server = run_load.Server(url, folder / "server", workers=args.workers, threads=args.threads)
        log = AdminLog()
        results = [run_load.AssessorResult() for _ in load.assessors]
        stop = threading.Event()
        probes = StallProbes(postgres_url=None if url.startswith("sqlite") else url)
        try:
            server.start()
            probes.start()
            machine_before = run_load.machine_cpu_seconds()
            began = time.monotonic()
            admin = threading.Thread(
                target=admin_at_work,
                args=(
                    server.port,
                    url,
                    load,
                    files,
                    began + args.ramp_up,
                    stop,
                    log,
                    folder,
                    args.page_timeout,
                ),
            )
            if not args.no_admin:
                admin.start()
            sent = _with_send_times(results)
            run_load.run_assessors(
                load,
                server.port,
                args.seconds,
                results=results,
                stop=stop,
                rate=args.rate or None,
                ramp_up=args.ramp_up,
            )
            stop.set()
            if admin.is_alive():
                admin.join()
            elapsed = time.monotonic() - began
            machine_cpu = run_load.machine_cpu_seconds() - machine_before
        finally:
            stop.set()
            probes.stop()
            server.stop()
        check = run_load.check_store(store, load, results)
        store.dispose()
        holds = read_lock_log(lock_log)

    all_ms = np.array([x for r in results for x in r.latencies_s]) * 1000.0
    windows = {}
    for action, start, end, _ in log.actions:
        if action.startswith(("upload", "import")):
            windows[action] = percentiles(window_latencies(results, sent, start, end))
    gets = [(s, e) for a, s, e, _ in log.actions if a.startswith("GET")]
    if gets:
        span = (gets[0][0], gets[-1][1])
        windows["report pages"] = percentiles(window_latencies(results, sent, *span))
    lock_holds = {"longest_s": holds[0][0] if holds else None, "holds_logged": len(holds)}
    for action, start, end, _ in log.actions:
        if action.startswith(("upload", "import")):
            during = [h for h in holds if start <= h[1] <= end]
            lock_holds[f"longest during {action}"] = during[0][0] if during else None
    lock_holds["longest 5"] = [f"{h[0]:.3f} s by {h[2]}" for h in holds[:5]]
    pages = Counter(a for a, *_ in log.actions if a.startswith("GET"))
    slowest = max((e - s, a) for a, s, e, _ in log.actions) if log.actions else (0.0, "-")
    figures = {
        "database": url.split(":", 1)[0],
        "assessors": args.assessors,
        "offered_rate": args.rate or "closed loop",
        "admin": not args.no_admin,
        "seconds": elapsed - args.ramp_up,
        "run_mb": args.run_mb,
        "run_lines": run_lines,
        "docs_mb": args.docs_mb,
        "documents": n_documents,
        "files_generated_s": generated,
        "judgements": percentiles(all_ms),
        "judgements_per_s": all_ms.size / max(elapsed - args.ramp_up, 1e-9),
        "during": windows,
        "write_lock_holds": lock_holds if url.startswith("sqlite") else "none (no store lock)",
        "admin_actions": [
            {"action": a, "seconds": round(e - s, 2), "status": st} for a, s, e, st in log.actions
        ],
        "report_pages_opened": sum(pages.values()),
        "slowest_admin_action": {"action": slowest[1], "seconds": slowest[0]},
        "admin_errors": log.errors,
        "machine_busy_percent": 100 * machine_cpu / elapsed / (os.cpu_count() or 1),
        "load_average_1min_after": os.getloadavg()[0],
        "acknowledged": check.acknowledged,
        "stored": check.stored,
        "lost": len(check.lost),
        "doubled": len(check.doubled),
        "unexpected": len(check.unexpected),
        "refused": dict(sum((r.refused for r in results), Counter())),
        "connection_errors": sum(r.connection_errors for r in results),
    }
    for name, value in figures.items():
        if name == "admin_actions":
            continue
        print(f"{name:>24}: {json.dumps(value, default=_number)}")
    print("admin actions:")
    for a, s, e, st in log.actions:
        print(f"  {e - s:8.2f} s  {st}  {a}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=_number) + "\n")
    if args.timeline:
        write_timeline(args.timeline, began, results, sent, log, holds, probes.events())
    return 0 if check.ok and not log.errors else 1


def _number(value: object) -> object:
    return round(float(value), 1) if isinstance(value, (np.floating, float)) else str(value)


def _with_send_times(results: list[run_load.AssessorResult]) -> list[list[float]]:
    """Per assessor, the send time (time.monotonic) of each latency it records: a list that
    grows in step with AssessorResult.latencies_s (its append is wrapped)."""
    sent: list[list[float]] = []
    for result in results:
        times: list[float] = []
        sent.append(times)
        result.latencies_s = _TimedList(times)
    return sent


class _TimedList(list):  # type: ignore[type-arg]
    """A latency list that also records when each request was sent (now - latency)."""

    def __init__(self, times: list[float]) -> None:
        super().__init__()
        self.times = times

    def append(self, latency: float) -> None:  # type: ignore[override]
        self.times.append(time.monotonic() - latency)
        super().append(latency)


if __name__ == "__main__":
    sys.exit(main())
