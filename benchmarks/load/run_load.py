"""Load generator: N simulated assessors judging through the JSON API of `workbench serve`.

Starts `workbench serve` (its production configuration: granian, worker processes) on
127.0.0.1 on a free port, over its own SQLite file or `--db URL`; creates a campaign with
one topic per five assessors, each assessor with an API token and one assignment; then every
assessor posts judgements (each with a fresh client_id, cycling over its documents, so later
ones are revisions) as fast as the server answers for `--seconds`. A judgement is
acknowledged by a 200/201 answer; an unanswered one is retried with the same client_id (the
idempotency contract).

Reports judgements/s and p50/p95/p99 latency of acknowledged requests, then checks the store:
every acknowledged client_id is stored exactly once, and nothing else was stored except at
most one in-flight, unacknowledged judgement per assessor.

    python benchmarks/load/run_load.py --assessors 50 --seconds 20 [--db URL] [--workers 2]
        [--threads 2] [--rate R]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import func, select

from workbench.services import (
    assignments,
    campaigns,
    document_imports,
    judging,
    pools,
    run_imports,
    topic_imports,
)
from workbench.services import users as user_service
from workbench.store import Store, open_store
from workbench.store.models import Judgement

HOST = "127.0.0.1"
ASSESSORS_PER_TOPIC = 5
STARTUP_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 10.0
RETRY_PAUSE_S = 0.05


@dataclass(frozen=True)
class LoadAssessor:
    """One simulated assessor: its API token, its assignment and the docnos it judges."""

    username: str
    token: str
    assignment_id: int
    docnos: tuple[str, ...]


@dataclass(frozen=True)
class LoadCampaign:
    campaign_id: int
    assessors: list[LoadAssessor]


def write_files(folder: Path, n_topics: int, docs_per_topic: int) -> dict[str, Path]:
    """Topics, documents and one run that ranks `docs_per_topic` documents per topic."""
    qids = [f"L{t}" for t in range(1, n_topics + 1)]
    topics = folder / "topics.jsonl"
    topics.write_text(
        "".join(json.dumps({"qid": q, "title": f"load topic {q}"}) + "\n" for q in qids)
    )
    documents = folder / "docs.jsonl"
    run = folder / "load.run"
    docnos = {q: [f"{q}-D{i}" for i in range(docs_per_topic)] for q in qids}
    documents.write_text(
        "".join(
            json.dumps({"docno": d, "title": d, "text": f"Text of {d}. " * 20}) + "\n"
            for q in qids
            for d in docnos[q]
        )
    )
    run.write_text(
        "".join(
            f"{q} Q0 {d} {rank} {docs_per_topic - rank} load\n"
            for q in qids
            for rank, d in enumerate(docnos[q], 1)
        )
    )
    return {"topics": topics, "documents": documents, "run": run}


def build_campaign(store: Store, n_assessors: int, docs_per_topic: int = 100) -> LoadCampaign:
    """A fresh campaign (unique name) with n_assessors assessors, each assigned one topic."""
    tag = uuid.uuid4().hex[:8]
    n_topics = max(1, -(-n_assessors // ASSESSORS_PER_TOPIC))
    with tempfile.TemporaryDirectory() as tmp, store.session() as session:
        files = write_files(Path(tmp), n_topics, docs_per_topic)
        campaign = campaigns.create_campaign(
            session, f"load-{tag}", scale="0:Not relevant:0,1:Relevant:1,2:Highly relevant:2"
        )
        topic_imports.import_topics(session, campaign, files["topics"])
        document_imports.import_documents(session, campaign, [files["documents"]])
        run_imports.import_runs(session, campaign, [files["run"]])
        pool = pools.build_pool(session, campaign, strategy="depth", depth=docs_per_topic, seed=1)
        qids = sorted(assignments.topic_sizes(session, pool))
        made = []
        for k in range(n_assessors):
            user = user_service.create_user(
                session, f"load-{tag}-{k}", secrets.token_hex(16), role="assessor"
            )
            token = user_service.new_api_token(session, user)
            assignment = assignments.assign(session, pool, qids[k % len(qids)], user)
            sequence = judging.document_sequence(session, assignment)
            made.append(LoadAssessor(user.username, token, assignment.id, tuple(sequence)))
        return LoadCampaign(campaign.id, made)


def process_cpu_ticks() -> Iterator[tuple[int, str, int]]:
    """(process group, command name, user + system clock ticks) of every process (/proc)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except OSError:  # the process has exited
            continue
        fields = tail.split()
        yield int(fields[2]), head.split("(", 1)[1], int(fields[11]) + int(fields[12])


def postgres_cpu_seconds() -> float:
    """CPU time so far of the PostgreSQL server processes on this machine."""
    ticks = sum(t for _, name, t in process_cpu_ticks() if name.startswith("postgres"))
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """CPU time spent by the whole machine so far, idle and iowait excluded (/proc/stat)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Server:
    """`workbench --db URL serve` in a subprocess (its own process group) on HOST:port."""

    def __init__(
        self,
        database_url: str,
        workdir: Path,
        *,
        port: int = 0,
        workers: int = 2,
        threads: int = 2,
        env: dict[str, str] | None = None,
    ):
        self.database_url = database_url
        self.env = env or {}
        self.workdir = workdir
        self.port = port or free_port()
        self.workers = workers
        self.threads = threads
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        command = [sys.executable, "-m", "workbench", "--db", self.database_url, "serve"]
        command += ["--host", HOST, "--port", str(self.port)]
        command += ["--workers", str(self.workers), "--threads", str(self.threads)]
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = open(self.workdir / "server.log", "ab")  # noqa: SIM115 - owned by the child
        # simulated assessors judge faster than people: no per-assessor submit rate limit
        # unless `env` sets one
        env = {**os.environ, "WORKBENCH_JUDGE_SUBMITS_PER_SECOND": "0", **self.env}
        self.process = subprocess.Popen(
            command, cwd=self.workdir, stdout=log, stderr=log, start_new_session=True, env=env
        )
        log.close()
        self._wait_until_up()
        return self

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_tail()}")
            try:
                connection = http.client.HTTPConnection(HOST, self.port, timeout=1)
                connection.request("GET", "/login")
                if connection.getresponse().status == 200:
                    connection.close()
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not answer within {STARTUP_TIMEOUT_S} s")

    def log_tail(self, n: int = 2000) -> str:
        path = self.workdir / "server.log"
        return path.read_text(errors="replace")[-n:] if path.exists() else ""

    def cpu_seconds(self) -> float:
        """User + system CPU time so far of the server's processes (its process group: the
        granian main process and its workers; Linux /proc)."""
        assert self.process is not None
        ticks = sum(t for pgrp, _, t in process_cpu_ticks() if pgrp == self.process.pid)
        return ticks / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """SIGKILL: the process dies at once, mid-request, without cleanup."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class AssessorResult:
    acknowledged: list[str] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    refused: Counter[int] = field(default_factory=Counter)
    connection_errors: int = 0
    in_flight: str | None = None


class HttpConnection:
    """A minimal HTTP/1.1 client connection on asyncio streams (keep-alive when the server
    keeps it): the load generator's own CPU per request is a small part of the machine."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, request: bytes) -> tuple[int, bytes]:
        """Send one complete request; returns (status, body). Raises OSError or
        asyncio.IncompleteReadError when the connection breaks."""
        if self._streams is None:
            self._streams = await asyncio.open_connection(HOST, self.port)
        reader, writer = self._streams
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise OSError(f"a response without Content-Length: {status_line}")
        body = await reader.readexactly(int(headers["content-length"]))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split(" ", 2)[1]), body

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def post_request(port: int, path: str, token: str, payload: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload


async def judge_loop(
    assessor: LoadAssessor,
    port: int,
    window: tuple[float, float],
    result: AssessorResult,
    seed: int,
    stop: threading.Event,
    interval: float = 0.0,
    start_at: float = 0.0,
) -> None:
    """From `start_at`, post judgements until the end of `window` (time.monotonic) or `stop`;
    retry an unanswered one as is. Latencies are kept of the requests sent within `window`.
    interval > 0 paces new judgements to one per `interval` seconds (random phase); 0 posts
    the next one as soon as the last is answered."""
    measure_from, deadline = window
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    rng = random.Random(seed)
    scheduled = time.monotonic() + rng.uniform(0, interval)
    path = f"/api/v1/assignments/{assessor.assignment_id}/judgements"
    connection = HttpConnection(port)
    i = 0
    pending: bytes | None = None
    while time.monotonic() < deadline and not stop.is_set():
        if pending is None:
            if interval:
                await asyncio.sleep(max(0.0, scheduled - time.monotonic()))
                scheduled += interval
            client_id = f"{assessor.username}-{i}"
            docno = assessor.docnos[i % len(assessor.docnos)]
            payload = {"docno": docno, "grade": rng.randint(0, 2), "client_id": client_id}
            body = json.dumps(payload | {"time_spent_ms": rng.randint(500, 60_000)}).encode()
            pending = post_request(port, path, assessor.token, body)
            result.in_flight = client_id
        start = time.perf_counter()
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                status, _ = await connection.post(pending)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            result.connection_errors += 1
            connection.close()
            await asyncio.sleep(RETRY_PAUSE_S)
            continue
        elapsed = time.perf_counter() - start
        if status in (200, 201):
            result.acknowledged.append(result.in_flight or "")
            if time.monotonic() - elapsed >= measure_from:
                result.latencies_s.append(elapsed)
        else:
            result.refused[status] += 1
        result.in_flight = None
        pending = None
        i += 1
    connection.close()


def run_assessors(
    load: LoadCampaign,
    port: int | Sequence[int],
    seconds: float,
    *,
    seed: int = 0,
    results: list[AssessorResult] | None = None,
    stop: threading.Event | None = None,
    rate: float | None = None,
    ramp_up: float = 0.0,
) -> list[AssessorResult]:
    """Every assessor as a task of one event loop (in this thread); returns their results
    (filled into `results`, one per assessor, when given, so that another thread can watch
    them). Assessor k starts at k * ramp_up / N seconds; all judge for `seconds` after the
    ramp-up, or until `stop` is set; latencies are those of requests sent after the ramp-up.
    With several ports, assessor k talks to ports[k % len(ports)]. rate: the total
    judgements/s offered, spread evenly over the assessors (None: as fast as answered)."""
    interval = len(load.assessors) / rate if rate else 0.0
    stop = stop or threading.Event()
    ports = [port] if isinstance(port, int) else list(port)
    if results is None:
        results = [AssessorResult() for _ in load.assessors]
    n = len(load.assessors)

    async def all_assessors() -> None:
        began = time.monotonic()
        window = (began + ramp_up, began + ramp_up + seconds)
        await asyncio.gather(
            *(
                judge_loop(
                    a,
                    ports[k % len(ports)],
                    window,
                    r,
                    seed + k,
                    stop,
                    interval,
                    start_at=began + k * ramp_up / n,
                )
                for k, (a, r) in enumerate(zip(load.assessors, results, strict=True))
            )
        )

    asyncio.run(all_assessors())
    return results


@dataclass(frozen=True)
class StoreCheck:
    """The store against the acknowledged judgements of a run."""

    acknowledged: int
    stored: int
    lost: list[str]
    doubled: list[str]
    unexpected: list[str]
    in_flight_stored: int

    @property
    def ok(self) -> bool:
        return not (self.lost or self.doubled or self.unexpected)


def check_store(store: Store, load: LoadCampaign, results: list[AssessorResult]) -> StoreCheck:
    """Lost: acknowledged, not stored. Doubled: a client_id stored twice. Unexpected: stored,
    never acknowledged, and not the single in-flight judgement of its assessor."""
    acknowledged = [c for r in results for c in r.acknowledged]
    in_flight = {r.in_flight for r in results if r.in_flight is not None}
    with store.session() as session:
        counts = dict(
            session.execute(
                select(Judgement.client_id, func.count())
                .where(Judgement.campaign_id == load.campaign_id)
                .group_by(Judgement.client_id)
            ).all()
        )
    acked = set(acknowledged)
    return StoreCheck(
        acknowledged=len(acknowledged),
        stored=sum(counts.values()),
        lost=sorted(acked - counts.keys()),
        doubled=sorted(c for c, n in counts.items() if n > 1)
        + sorted(c for c, n in Counter(acknowledged).items() if n > 1),
        unexpected=sorted(counts.keys() - acked - in_flight),
        in_flight_stored=len(counts.keys() & in_flight),
    )


def latency_summary(results: list[AssessorResult]) -> dict[str, float]:
    """p50/p95/p99/max of acknowledged requests, in milliseconds."""
    latencies = np.array([x for r in results for x in r.latencies_s]) * 1000.0
    if latencies.size == 0:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "p99_ms": float("nan")}
    p50, p95, p99 = np.percentile(latencies, [50, 95, 99])
    # An assessor keeps its connection, and so its server worker: the spread of the assessors'
    # mean latencies shows how evenly the connections were spread over the workers.
    means = [1000.0 * float(np.mean(r.latencies_s)) for r in results if r.latencies_s]
    return {
        "p50_ms": p50,
        "p95_ms": p95,
        "p99_ms": p99,
        "max_ms": float(latencies.max()),
        "assessor_mean_min_ms": min(means),
        "assessor_mean_max_ms": max(means),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assessors", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--db", help="store URL (default: a new SQLite file in a temp folder)")
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per server process")
    parser.add_argument(
        "--rate",
        type=float,
        help="offered judgements/s in total, paced per assessor (default: as fast as answered)",
    )
    parser.add_argument(
        "--ramp-up",
        type=float,
        default=2.0,
        help="seconds over which the assessors start, evenly spaced; not measured",
    )
    parser.add_argument("--docs-per-topic", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="workbench-load-") as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'load.sqlite'}"
        store = open_store(url, upgrade=True)
        load = build_campaign(store, args.assessors, args.docs_per_topic)
        server = Server(url, Path(tmp) / "server", workers=args.workers, threads=args.threads)
        try:
            server.start()
            before = (
                server.cpu_seconds(),
                postgres_cpu_seconds(),
                time.process_time(),
                machine_cpu_seconds(),
            )
            started = time.monotonic()
            results = run_assessors(
                load, server.port, args.seconds, rate=args.rate, ramp_up=args.ramp_up
            )
            elapsed = time.monotonic() - started
            after = (
                server.cpu_seconds(),
                postgres_cpu_seconds(),
                time.process_time(),
                machine_cpu_seconds(),
            )
        finally:
            server.stop()
        check = check_store(store, load, results)
        store.dispose()

    spent = [b - a for a, b in zip(before, after, strict=True)]
    server_cpu, postgres_cpu, own_cpu, machine_cpu = spent
    per_judgement = 1000 / max(check.acknowledged, 1)
    refused = sum((r.refused for r in results), Counter())
    figures = {
        "database": url.split(":", 1)[0],
        "assessors": args.assessors,
        "server_workers": args.workers,
        "server_threads": args.threads,
        "offered_rate": args.rate or "closed loop",
        "ramp_up_s": args.ramp_up,
        "seconds": args.seconds,
        "acknowledged": check.acknowledged,
        "judgements_per_s": sum(len(r.latencies_s) for r in results) / args.seconds,
        **latency_summary(results),
        "server_cpu_ms_per_judgement": server_cpu * per_judgement,
        "postgres_cpu_ms_per_judgement": postgres_cpu * per_judgement,
        "client_cpu_ms_per_judgement": own_cpu * per_judgement,
        "machine_cpu_ms_per_judgement": machine_cpu * per_judgement,
        "machine_busy_percent": 100 * machine_cpu / elapsed / (os.cpu_count() or 1),
        "refused": dict(refused),
        "connection_errors": sum(r.connection_errors for r in results),
        "stored": check.stored,
        "lost": len(check.lost),
        "doubled": len(check.doubled),
        "unexpected": len(check.unexpected),
    }
    for name, value in figures.items():
        shown = f"{value:.1f}" if isinstance(value, float) else value
        print(f"{name:>30}: {shown}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if check.ok and not refused else 1


if __name__ == "__main__":
    sys.exit(main())
