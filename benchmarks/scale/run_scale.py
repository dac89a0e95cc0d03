"""A TREC-size campaign in a store, and what its assessors and admins see of it.

Fills a new store (SQLite, or `--db` a PostgreSQL database) with a campaign of TREC size:
250 topics, 150 runs of 1,000 documents per topic (37.5 million run lines), 1 million
documents, a depth-100 pool (about 2,650 documents per topic: each run scores a topic's
4,000 candidates as a shared latent relevance times its quality plus noise), 3 judges per
topic among 75 assessors and about 2 million judgements (every pooled document judged by its
three judges; grades follow the latent relevance, with disagreement); final labels by the
majority rule with ties to the higher grade. The campaign is made the way an organiser makes
it (topics, documents and runs imported in short transactions, the pool built, assignments),
the judgements written in bulk. `--fraction 0.1` makes a tenth of it (25 topics, 100,000
documents, the same 150 runs), for a first run.

Then, against `workbench serve` (`--workers`, `--threads`) on that store, it measures what
the issue sets as targets on the 2-core machine:

- every admin page's first byte <= 1 s (campaign, progress, assignments, users, the judgement
  log, browse topics, documents, runs), each loaded --page-repeats times, the slowest kept;
- report jobs finished within 60 s: the agreement page and the evaluation with a
  randomisation test, from the first request until the page shows the result;
- every assessor request p99 <= 100 ms: `crowd.py`'s assessors (log in, open the judging page,
  judge at think times) on the campaign's assignments, plus scripts posting as fast as allowed.

Every figure is printed beside its target with the phase times of the fill, the load average
and the CPU of the server, PostgreSQL and the generator; `--json FILE` writes them.

    python benchmarks/scale/run_scale.py [--db URL] [--fraction 0.1] [--seconds 60]
        [--assessors 75] [--think 2,6] [--scripts 0] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import re
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "load"))
from crowd import Member, run_crowd  # noqa: E402
from run_load import HOST, Server, postgres_cpu_seconds  # noqa: E402

from workbench.services import (  # noqa: E402
    adjudication,
    adjudication_steps,
    assignments,
    campaigns,
    document_imports,
    pools,
    run_imports,
    topic_imports,
)
from workbench.services import users as user_service  # noqa: E402
from workbench.store import Store, open_store  # noqa: E402
from workbench.store.models import Judgement, PoolEntry  # noqa: E402
from workbench.store.runs import bulk_insert  # noqa: E402

TOPICS, RUNS, DEPTH, CANDIDATES, JUDGES_PER_TOPIC, ASSESSORS = 250, 150, 1000, 4000, 3, 75
POOL_DEPTH = 100
NOISE = 1.5
PASSWORD = "scale-password-1"
FAST_HASH = "pbkdf2:sha256:1000"
"""The benchmark accounts' password hash: cheap, so that logging 75 judges in measures the
pages, not scrypt (the crowd benchmark logs in with the app's scrypt)."""
CSRF = re.compile(rb'name="csrf_token" value="([^"]+)"')
TARGETS = {"assessor_p99_ms": 100.0, "admin_first_byte_s": 1.0, "report_job_s": 60.0}
JUDGEMENT_BATCH = 20_000


@dataclass(frozen=True)
class Files:
    topics: Path
    documents: Path
    runs: list[Path]


def generate(folder: Path, n_topics: int, n_documents: int, seed: int = 1) -> Files:
    """Topics, documents (each a candidate of one topic) and RUNS run files (cached)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / "complete"
    runs = [folder / f"run{r:03d}.txt" for r in range(RUNS)]
    files = Files(folder / "topics.tsv", folder / "docs.jsonl", runs)
    if done.exists():
        return files
    rng = np.random.default_rng(seed)
    per_topic = n_documents // n_topics
    qids = [str(401 + t) for t in range(n_topics)]
    words = np.array(
        [
            "solar",
            "panel",
            "recycling",
            "battery",
            "lithium",
            "mining",
            "water",
            "policy",
            "court",
            "ruling",
            "trade",
            "tariff",
            "vaccine",
            "trial",
            "election",
            "campaign",
            "bridge",
            "collapse",
            "drought",
            "harvest",
            "museum",
            "theft",
        ]
    )
    files.topics.write_text("".join(f"{q}\t{' '.join(rng.choice(words, 3))} {q}\n" for q in qids))
    with files.documents.open("w") as out:
        for q in qids:
            text = rng.choice(words, size=(per_topic, 30))
            for d in range(per_topic):
                docno = f"SCALE-{q}-{d:05d}"
                body = " ".join(text[d].tolist())
                out.write(json.dumps({"docno": docno, "title": f"{q} {d}", "text": body}) + "\n")
    quality = rng.uniform(0.3, 2.0, RUNS)
    latent = rng.standard_normal((n_topics, per_topic))
    outs = [run.open("w") for run in runs]
    try:
        for t, q in enumerate(qids):
            scores = latent[t][None, :] * quality[:, None]
            scores = scores + NOISE * rng.standard_normal((RUNS, per_topic))
            top = np.argsort(-scores, axis=1)[:, : min(DEPTH, per_topic)]
            for r in range(RUNS):
                lines = [
                    f"{q} Q0 SCALE-{q}-{d:05d} {rank} {scores[r, d]:.4f} run{r:03d}\n"
                    for rank, d in enumerate(top[r].tolist(), 1)
                ]
                outs[r].write("".join(lines))
    finally:
        for out in outs:
            out.close()
    np.save(folder / "latent.npy", latent)
    done.touch()
    return files


@dataclass
class Campaign:
    campaign_id: int
    judges: list[Member]  # each judge with its first assignment
    judgements: int
    pool_size: int
    phases: dict[str, float]


def fill(store: Store, files: Files, folder: Path, seed: int = 2) -> Campaign:
    """The campaign, made as an organiser makes it; the judgements written in bulk."""
    phases: dict[str, float] = {}

    def timed(name: str, since: float) -> float:
        now = time.monotonic()
        phases[name] = round(now - since, 1)
        print(f"  {name}: {phases[name]} s", flush=True)
        return now

    mark = time.monotonic()
    name = f"scale-{uuid.uuid4().hex[:8]}"
    with store.session() as session:
        campaign = campaigns.create_campaign(
            session, name, scale="0:Not relevant:0,1:Relevant:1,2:Highly relevant:2"
        )
        topic_imports.import_topics(session, campaign, files.topics)
        campaign_id = campaign.id
        user_service.create_user(
            session, "scale-admin", PASSWORD, role="admin", hash_method=FAST_HASH
        )
    mark = timed("topics", mark)
    document_imports.import_documents_in_steps(store, campaign_id, [files.documents])
    mark = timed("documents", mark)
    for start in range(0, len(files.runs), 10):
        run_imports.import_runs_in_steps(store, campaign_id, files.runs[start : start + 10])
    mark = timed("runs", mark)
    with store.session() as session:
        campaign_row = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(session, campaign_row, strategy="depth", depth=POOL_DEPTH, seed=1)
        pool_id = pool.id
    mark = timed("pool", mark)
    with store.session() as session:
        campaign_row = campaigns.get_campaign(session, campaign_id)
        pool = pools.get_pool(session, campaign_row, None)
        users = [
            user_service.create_user(
                session, f"{name}-judge-{k}", PASSWORD, role="assessor", hash_method=FAST_HASH
            )
            for k in range(ASSESSORS)
        ]
        qids = sorted(assignments.topic_sizes(session, pool))
        made: list[tuple[int, str, int]] = []  # assignment, qid, user id
        for t, qid in enumerate(qids):
            for j in range(JUDGES_PER_TOPIC):
                user = users[(t * JUDGES_PER_TOPIC + j) % len(users)]
                assignment = assignments.assign(session, pool, qid, user, order="docno")
                made.append((assignment.id, qid, user.id))
        user_names = {user.id: user.username for user in users}
    mark = timed("assignments", mark)
    written = _judge_everything(store, campaign_id, pool_id, made, folder, seed)
    mark = timed("judgements", mark)
    adjudication_steps.apply_rule_in_steps(
        store, campaign_id, adjudication.MergeSpec("majority", tie="higher")
    )
    mark = timed("final labels", mark)
    with store.read_session() as session:
        pool_size = len(session.scalars(select_entries(pool_id)).all())
        docnos: dict[str, tuple[str, ...]] = {}
        for qid, docno in session.execute(
            select_entries(pool_id, with_qid=True).order_by(PoolEntry.qid, PoolEntry.docno)
        ):
            docnos[qid] = (*docnos.get(qid, ()), docno)
    first: dict[int, Member] = {}
    for assignment_id, qid, user_id in made:
        if user_id not in first:
            first[user_id] = Member(user_names[user_id], PASSWORD, assignment_id, docnos[qid])
    return Campaign(campaign_id, list(first.values()), written, pool_size, phases)


def filled(store: Store) -> Campaign:
    """The campaign an earlier run filled into this store (`--filled`): the newest campaign
    named scale-*, its judges as `fill` gives them, nothing written."""
    from sqlalchemy import func, select

    from workbench.store.models import Assignment, Pool, User
    from workbench.store.models import Campaign as CampaignRow

    with store.read_session() as session:
        campaign_id = session.scalar(
            select(func.max(CampaignRow.id)).where(CampaignRow.name.like("scale-%"))
        )
        if campaign_id is None:
            raise SystemExit("--filled: the store holds no campaign filled by this benchmark")
        pool_id = session.scalar(select(func.min(Pool.id)).where(Pool.campaign_id == campaign_id))
        assert pool_id is not None
        docnos: dict[str, tuple[str, ...]] = {}
        for qid, docno in session.execute(
            select_entries(pool_id, with_qid=True).order_by(PoolEntry.qid, PoolEntry.docno)
        ):
            docnos[qid] = (*docnos.get(qid, ()), docno)
        first: dict[int, Member] = {}
        for assignment_id, qid, user_id, username in session.execute(
            select(Assignment.id, Assignment.qid, Assignment.user_id, User.username)
            .join(User, User.id == Assignment.user_id)
            .where(Assignment.pool_id == pool_id)
            .order_by(Assignment.id)
        ):
            if user_id not in first:
                first[user_id] = Member(username, PASSWORD, assignment_id, docnos[qid])
        judgements = session.scalar(
            select(func.count()).where(Judgement.campaign_id == campaign_id)
        )
    pool_size = sum(len(d) for d in docnos.values())
    return Campaign(campaign_id, list(first.values()), judgements or 0, pool_size, {})


def select_entries(pool_id: int, *, with_qid: bool = False):  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    columns = (PoolEntry.qid, PoolEntry.docno) if with_qid else (PoolEntry.id,)
    return select(*columns).where(PoolEntry.pool_id == pool_id)


def _judge_everything(
    store: Store,
    campaign_id: int,
    pool_id: int,
    made: list[tuple[int, str, int]],
    folder: Path,
    seed: int,
) -> int:
    """Every pooled document judged by each of its topic's judges: grade 2, 1 or 0 by the
    latent relevance plus each judge's own noise (so that they disagree)."""
    from sqlalchemy import select

    rng = np.random.default_rng(seed)
    latent = np.load(folder / "latent.npy")
    with store.read_session() as session:
        entries = session.execute(
            select(PoolEntry.qid, PoolEntry.docno)
            .where(PoolEntry.pool_id == pool_id)
            .order_by(PoolEntry.id)  # the judges' noise drawn in one order on every engine
        ).all()
    by_topic: dict[str, list[str]] = {}
    for qid, docno in entries:
        by_topic.setdefault(qid, []).append(docno)
    columns = (
        "campaign_id",
        "qid",
        "docno",
        "user_id",
        "grade",
        "comment",
        "time_spent_ms",
        "client_id",
        "created_at",
    )
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows: list[tuple] = []
    written = 0
    for _assignment, qid, user_id in made:
        docnos = by_topic[qid]
        index = np.array([int(d.rsplit("-", 1)[1]) for d in docnos])
        value = latent[int(qid) - 401][index] + 0.7 * rng.standard_normal(len(docnos))
        grades = np.digitize(value, [0.8, 1.6])
        spent = rng.integers(5_000, 60_000, len(docnos))
        rows.extend(
            (campaign_id, qid, docno, user_id, int(g), "", int(s), None, now)
            for docno, g, s in zip(docnos, grades.tolist(), spent.tolist(), strict=True)
        )
        if len(rows) >= JUDGEMENT_BATCH:
            written += _write(store, columns, rows)
            rows = []
    return written + _write(store, columns, rows)


def _write(store: Store, columns: tuple[str, ...], rows: list[tuple]) -> int:
    with store.batch_connection() as connection:
        bulk_insert(connection, Judgement.__table__, columns, rows)
    return len(rows)


class Browser:
    """An admin's session over http.client: log in, then time each page's first byte."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookie = ""

    def _request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, float, float, bytes, dict]:
        """(status, first byte s, whole s, body, headers) on a new connection."""
        connection = http.client.HTTPConnection(HOST, self.port, timeout=600)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        start = time.perf_counter()
        connection.request(method, path, body=body, headers={**sent, **(headers or {})})
        response = connection.getresponse()
        first = time.perf_counter() - start
        data = response.read()
        whole = time.perf_counter() - start
        answer = {k.lower(): v for k, v in response.getheaders()}
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        connection.close()
        return response.status, first, whole, data, answer

    def log_in(self, username: str, password: str) -> None:
        _, _, _, page, _ = self._request("GET", "/login")
        token = CSRF.search(page)
        assert token
        form = urlencode(
            {"username": username, "password": password, "csrf_token": token[1].decode()}
        ).encode()
        status, *_ = self._request(
            "POST", "/login", form, {"Content-Type": "application/x-www-form-urlencoded"}
        )
        assert status in (302, 303), status

    def first_byte(self, path: str) -> tuple[int, float, float]:
        status, first, whole, _, _ = self._request("GET", path)
        return status, first, whole

    def until_shown(self, path: str, marker: bytes, guard_s: float) -> float:
        """Seconds from the first request of `path` until its page contains `marker`."""
        start = time.perf_counter()
        while time.perf_counter() - start < guard_s:
            status, _, _, body, _ = self._request("GET", path)
            if marker in body:
                return time.perf_counter() - start
            error = re.search(rb'class="flash error">([^<]*)<', body)
            if status >= 400 or error:
                shown = error[1].decode() if error else body[:300].decode(errors="replace")
                raise RuntimeError(f"{path}: {status} {shown}")
            time.sleep(0.5)
        return float("inf")


def admin_pages(campaign_id: int) -> dict[str, str]:
    c = campaign_id
    return {
        "campaign": f"/admin/campaigns/{c}",
        "progress": f"/admin/campaigns/{c}/progress",
        "assignments": f"/admin/campaigns/{c}/assignments",
        "users": "/admin/users",
        "judgement log": f"/admin/campaigns/{c}/judgements",
        "browse topics": f"/admin/campaigns/{c}/topics",
        "browse documents": f"/admin/campaigns/{c}/documents",
        "browse documents (words)": f"/admin/campaigns/{c}/documents?q=solar+panel",
        "browse runs": f"/admin/campaigns/{c}/runs",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a PostgreSQL database URL (default: a new SQLite file)")
    parser.add_argument("--fraction", type=float, default=1.0, help="of topics and documents")
    parser.add_argument("--data-dir", type=Path, default=HERE.parent / "data")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--page-repeats", type=int, default=3)
    parser.add_argument("--report-guard", type=float, default=1800.0, help="give up after (s)")
    parser.add_argument("--assessors", type=int, default=ASSESSORS, help="judges in the load")
    parser.add_argument("--scripts", type=int, default=0)
    parser.add_argument("--think", default="2,6")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--skip", default="", help="phases to skip: pages,reports,assessors")
    parser.add_argument(
        "--filled",
        action="store_true",
        help="measure the campaign an earlier run filled into --db (give its --fraction)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    n_topics = max(1, round(TOPICS * args.fraction))
    n_documents = n_topics * CANDIDATES
    folder = args.data_dir / f"scale-t{n_topics}-d{n_documents}-r{RUNS}-v1"
    load_before = os.getloadavg()
    started = time.monotonic()
    if args.filled and not args.db:
        parser.error("--filled needs --db, the store filled by an earlier run")
    if not args.filled:
        print(f"generating {folder} ...", flush=True)
        files = generate(folder, n_topics, n_documents)
    generated = round(time.monotonic() - started, 1)
    skip = set(filter(None, args.skip.split(",")))
    figures: dict[str, object] = {
        "topics": n_topics,
        "documents": n_documents,
        "runs": RUNS,
        "run_lines": n_topics * RUNS * DEPTH,
        "generated_s": generated,
    }
    with tempfile.TemporaryDirectory(prefix="workbench-scale-") as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'scale.sqlite'}"
        figures["database"] = url.split(":", 1)[0]
        store = open_store(url, upgrade=True)
        if args.filled:
            campaign = filled(store)
        else:
            print("filling the store ...", flush=True)
            campaign = fill(store, files, folder)
        figures |= {
            "fill_s": campaign.phases,
            "pool_size": campaign.pool_size,
            "judgements": campaign.judgements,
        }
        server = Server(url, Path(tmp) / "server", workers=args.workers, threads=args.threads)
        try:
            server.start()
            cpu_before = (server.cpu_seconds(), postgres_cpu_seconds(), time.process_time())
            admin = Browser(server.port)
            admin.log_in("scale-admin", PASSWORD)
            if "pages" not in skip:
                pages = {}
                for label, path in admin_pages(campaign.campaign_id).items():
                    timings = [admin.first_byte(path) for _ in range(args.page_repeats)]
                    statuses = {status for status, _, _ in timings}
                    pages[label] = {
                        "status": sorted(statuses),
                        "first_byte_s": round(max(t[1] for t in timings), 3),
                        "whole_s": round(max(t[2] for t in timings), 3),
                    }
                    print(f"  {label}: {pages[label]}", flush=True)
                figures["admin_pages"] = pages
            if "reports" not in skip:
                c = campaign.campaign_id
                reports = {
                    "agreement": admin.until_shown(
                        f"/reports/{c}/agreement", b'id="agreement-topics"', args.report_guard
                    ),
                    "evaluation (randomisation test)": admin.until_shown(
                        f"/reports/{c}/evaluation?test=randomization&allow_incomplete=1",
                        b'id="report-head"',  # the report is computed
                        args.report_guard,
                    ),
                }
                figures["report_jobs_s"] = {k: round(v, 1) for k, v in reports.items()}
                print(f"  reports: {figures['report_jobs_s']}", flush=True)
            if "assessors" not in skip:
                think = tuple(float(x) for x in args.think.split(","))
                crowd = campaign.judges[: args.assessors]
                tally = run_crowd(crowd, [], server.port, args.seconds, 10.0, think)  # type: ignore[arg-type]
                from crowd import over_time, percentiles, slowest

                kinds = ("crowd submit", "document", "state")
                every = [x for kind in kinds for x in tally.latencies[kind]]
                latencies = {k: percentiles(v) for k, v in sorted(tally.latencies.items())}
                figures["assessors"] = {
                    "n": len(crowd),
                    "think_s": list(think),
                    "seconds": args.seconds,
                    "latency": latencies,
                    "every_judging_request": percentiles(every),
                    # where the tail comes from: each 10 s of the measured minute
                    "judging_latency_over_time": over_time(tally.timeline, kinds, 10.0),
                    # the logins' ramp-up before it (not measured), every kind, per 2 s
                    "ramp_up_latency_over_time": over_time(
                        tally.ramp_up, tuple({kind for _, kind, _ in tally.ramp_up}), 2.0
                    ),
                    "ramp_up_slowest": slowest(tally.ramp_up, 10),
                    "measured_slowest": slowest(tally.timeline, 10),
                    "refused": dict(tally.refused),
                    "broken": tally.broken,
                }
            spent = (server.cpu_seconds(), postgres_cpu_seconds(), time.process_time())
            used = (round(b - a, 1) for a, b in zip(cpu_before, spent, strict=True))
            figures["cpu_s"] = dict(zip(("server", "postgres", "generator"), used, strict=True))
        finally:
            server.stop()
            store.dispose()
    figures["load_average_before_after"] = [round(load_before[0], 2), round(os.getloadavg()[0], 2)]
    figures["targets"] = TARGETS
    print(json.dumps(figures, indent=2, default=float))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
