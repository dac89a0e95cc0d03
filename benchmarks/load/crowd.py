"""An open-loop crowd against several `workbench serve` instances behind nginx on one store.

N assessors, each with a password and one assignment, do what the judging page does: log in
(the login form and its CSRF token), load the judging page, its style sheet and script, the
assignment's state and its first two documents; then, at think times drawn uniformly from
[THINK_MIN, THINK_MAX] seconds (open loop: the next judgement is due at the previous one's due
time plus the think time, whatever the answers took), post a judgement (session cookie and
X-CSRFToken) and load the document after the next one (the page prefetches one ahead).
Beside them S scripts (API tokens, accounts of the role `assessor`) post judgements as fast as
allowed: on a 429 they wait its `Retry-After`, then send the same judgement again.

A judgement is acknowledged by a 200/201; an unanswered one is sent again with the same
client_id. Reported: the latency percentiles of every kind of judging request (the crowd's
submits and documents, the state, the scripts' submits), counted from the ramp-up's end, also
per window of time (`--window`) and the slowest requests with when they were sent; the
acknowledged judgements checked against the store (none lost, none doubled); the CPU of the
app servers, PostgreSQL, nginx, this generator and the whole machine, and the load average.

    python benchmarks/load/crowd.py --db postgresql+psycopg://... --assessors 1000 --scripts 50
        --seconds 300 [--servers 2] [--workers 2] [--threads 4] [--ramp-up 60]
        [--think 5,30] [--judge-rate 10] [--script-queue-ms 0] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy import Nginx
from run_load import (
    HOST,
    RETRY_PAUSE_S,
    Server,
    free_port,
    machine_cpu_seconds,
    postgres_cpu_seconds,
    process_cpu_ticks,
    write_files,
)

from workbench import password_hashing
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

PASSWORD = "crowd-password-1"
ASSESSORS_PER_TOPIC = 5
MAX_ATTEMPTS = 20
TIMEOUT_S = 60.0
"""How long a member waits for an answer (a browser waits that long; a shorter wait made the
first full-size run a storm of abandoned and repeated logins)."""
BACKOFF_MAX_S = 10.0
GRACE_S = 60.0
"""How long after the measured window the members may finish; those still waiting are then
stopped and counted."""
CSRF = re.compile(rb'name="csrf-token" content="([^"]+)"')
LOGIN_CSRF = re.compile(rb'name="csrf_token" value="([^"]+)"')


@dataclass(frozen=True)
class Member:
    """An assessor of the crowd or a script: name, credential, assignment and its docnos."""

    username: str
    credential: str  # the password (crowd) or the API token (script)
    assignment_id: int
    docnos: tuple[str, ...]


def build_crowd(
    store: Store, n_assessors: int, n_scripts: int, docs_per_topic: int, hash_method: str
) -> tuple[int, list[Member], list[Member]]:
    """A campaign with a topic per five members; assessors with passwords, scripts with
    tokens, each assigned one topic."""
    tag = uuid.uuid4().hex[:8]
    total = n_assessors + n_scripts
    n_topics = max(1, -(-total // ASSESSORS_PER_TOPIC))
    with tempfile.TemporaryDirectory() as tmp, store.session() as session:
        files = write_files(Path(tmp), n_topics, docs_per_topic)
        campaign = campaigns.create_campaign(
            session, f"crowd-{tag}", scale="0:Not relevant:0,1:Relevant:1,2:Highly relevant:2"
        )
        topic_imports.import_topics(session, campaign, files["topics"])
        document_imports.import_documents(session, campaign, [files["documents"]])
        run_imports.import_runs(session, campaign, [files["run"]])
        pool = pools.build_pool(session, campaign, strategy="depth", depth=docs_per_topic, seed=1)
        qids = sorted(assignments.topic_sizes(session, pool))
        crowd, scripts = [], []
        for k in range(total):
            script = k >= n_assessors
            password = None if script else PASSWORD
            user = user_service.create_user(
                session, f"crowd-{tag}-{k}", password, role="assessor", hash_method=hash_method
            )
            credential = user_service.new_api_token(session, user) if script else PASSWORD
            assignment = assignments.assign(session, pool, qids[k % len(qids)], user)
            docnos = tuple(judging.document_sequence(session, assignment))
            member = Member(user.username, credential, assignment.id, docnos)
            (scripts if script else crowd).append(member)
        return campaign.id, crowd, scripts


class Connection:
    """One kept-alive HTTP/1.1 connection (asyncio streams) with a cookie jar: what one
    browser tab, or one script, holds."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body); raises OSError, TimeoutError or IncompleteReadError when
        the connection breaks (the caller sends again)."""
        if self._streams is None:
            self._streams = await asyncio.open_connection(HOST, self.port)
        reader, writer = self._streams
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        async with asyncio.timeout(TIMEOUT_S):
            head = await reader.readuntil(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            answer: dict[str, str] = {}
            for line in header_lines:
                name, _, value = line.partition(":")
                name, value = name.strip().lower(), value.strip()
                if name == "set-cookie":
                    cookie, _, _ = value.partition(";")
                    key, _, content = cookie.partition("=")
                    self.cookies[key.strip()] = content.strip()
                elif name:
                    answer[name] = value
            length = int(answer.get("content-length", "0"))
            data = await reader.readexactly(length) if length else b""
        if answer.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split(" ", 2)[1]), answer, data

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


@dataclass
class Tally:
    """What the generator saw: latencies (s) per request kind, acknowledged client_ids,
    refusals, broken connections, the client_ids still unanswered at the end."""

    latencies: defaultdict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    timeline: list[tuple[float, str, float]] = field(default_factory=list)  # (at, kind, s)
    acknowledged: list[str] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    broken: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # how connections broke
    gave_up: int = 0  # members stopped after MAX_ATTEMPTS unanswered attempts
    unfinished: int = 0  # members still waiting GRACE_S after the measured window
    in_flight: set[str] = field(default_factory=set)
    measure_from: float = 0.0
    ramp_up: list[tuple[float, str, float]] = field(default_factory=list)
    """The requests sent before `measure_from` (at < 0 s): not measured, shown apart."""
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    """In every client_id of this run: a second run on the same store (`run_scale.py
    --filled`) must not send the first one's client_ids (a stored client_id for another
    document is refused with 400)."""

    def record(self, kind: str, started: float, elapsed: float) -> None:
        if started >= self.measure_from:
            self.latencies[kind].append(elapsed)
            self.timeline.append((started - self.measure_from, kind, elapsed))
        else:
            self.ramp_up.append((started - self.measure_from, kind, elapsed))


async def answered(
    connection: Connection, tally: Tally, kind: str, method: str, path: str, **kwargs: object
) -> tuple[int, dict[str, str], bytes]:
    """The request, sent again after a broken connection until it is answered (at most
    MAX_ATTEMPTS times, the pause doubling from RETRY_PAUSE_S to BACKOFF_MAX_S); its latency
    (the answered attempt) recorded under `kind`."""
    pause = RETRY_PAUSE_S
    for _ in range(MAX_ATTEMPTS):
        started = time.monotonic()
        try:
            status, headers, body = await connection.request(method, path, **kwargs)  # type: ignore[arg-type]
        except (
            OSError,
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
        ) as error:
            tally.broken += 1
            tally.errors[f"{type(error).__name__}: {str(error)[:80]}"] += 1
            connection.close()
            await asyncio.sleep(pause)
            pause = min(2 * pause, BACKOFF_MAX_S)
            continue
        tally.record(kind, started, time.monotonic() - started)
        return status, headers, body
    tally.gave_up += 1
    raise GaveUp(f"{method} {path}: no answer after {MAX_ATTEMPTS} attempts")


class GaveUp(Exception):
    """A member's request went unanswered MAX_ATTEMPTS times: the member stops."""


async def assessor(
    member: Member,
    port: int,
    start_at: float,
    deadline: float,
    think: tuple[float, float],
    tally: Tally,
    seed: int,
) -> None:
    """One assessor in the browser: log in, open the judging page, judge at think times."""
    rng = random.Random(seed)
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    tab = Connection(port)
    _, _, page = await answered(tab, tally, "login page", "GET", "/login")
    token = LOGIN_CSRF.search(page)
    assert token, page[:200]
    form = urlencode(
        {"username": member.username, "password": member.credential, "csrf_token": token[1]}
    ).encode()
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    while True:  # a login refused as busy (503) is sent again after Retry-After, as a person would
        status, answer, _ = await answered(
            tab, tally, "login", "POST", "/login", body=form, headers=form_type
        )
        if status != 503:
            break
        tally.refused["login 503"] += 1
        await asyncio.sleep(int(answer.get("retry-after", "1")))
    if status not in (302, 303):
        tally.refused[f"login {status}"] += 1
        return
    judging_page = f"/assess/{member.assignment_id}"
    _, _, page = await answered(tab, tally, "judging page", "GET", judging_page)
    csrf = CSRF.search(page)
    assert csrf, page[:200]
    for asset in ("/static/style.css", "/static/judge.js"):
        await answered(tab, tally, "static", "GET", asset)
    api = f"/api/v1/assignments/{member.assignment_id}"
    _, _, state = await answered(tab, tally, "state", "GET", api)
    position = json.loads(state)["position"]
    total = len(member.docnos)
    for p in (position, position + 1):
        await answered(tab, tally, "document", "GET", f"{api}/documents/{p % total}")
    headers = {"Content-Type": "application/json", "X-CSRFToken": csrf[1].decode()}
    due = time.monotonic()
    k = 0
    while True:
        due += rng.uniform(*think)
        if due >= deadline:
            break
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        client_id = f"{member.username}-{tally.run}-{k}"
        body = json.dumps(
            {
                "docno": member.docnos[(position + k) % total],
                "grade": rng.randint(0, 2),
                "client_id": client_id,
                "time_spent_ms": rng.randint(5_000, 30_000),
            }
        ).encode()
        tally.in_flight.add(client_id)
        while True:
            status, answer, _ = await answered(
                tab, tally, "crowd submit", "POST", f"{api}/judgements", body=body, headers=headers
            )
            if status != 429:
                break
            tally.refused["crowd 429"] += 1
            await asyncio.sleep(int(answer.get("retry-after", "1")))
        tally.in_flight.discard(client_id)
        if status in (200, 201):
            tally.acknowledged.append(client_id)
        else:
            tally.refused[f"crowd submit {status}"] += 1
        following = f"{api}/documents/{(position + k + 2) % total}"
        await answered(tab, tally, "document", "GET", following)
        k += 1
    tab.close()


async def script(
    member: Member, port: int, start_at: float, deadline: float, tally: Tally, seed: int
) -> None:
    """A script posting judgements as fast as allowed, waiting out each 429's Retry-After."""
    rng = random.Random(seed)
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    connection = Connection(port)
    headers = {"Authorization": f"Bearer {member.credential}", "Content-Type": "application/json"}
    path = f"/api/v1/assignments/{member.assignment_id}/judgements"
    k = 0
    while time.monotonic() < deadline:
        client_id = f"{member.username}-{tally.run}-{k}"
        docno = member.docnos[k % len(member.docnos)]
        body = json.dumps({"docno": docno, "grade": rng.randint(0, 2), "client_id": client_id})
        body = body.encode()
        tally.in_flight.add(client_id)
        while True:
            status, answer, _ = await answered(
                connection, tally, "script submit", "POST", path, body=body, headers=headers
            )
            if status != 429:
                break
            tally.refused["script 429"] += 1
            wait = int(answer.get("retry-after", "1"))
            if time.monotonic() + wait >= deadline:
                tally.in_flight.discard(client_id)
                connection.close()
                return
            await asyncio.sleep(wait)
        tally.in_flight.discard(client_id)
        if status in (200, 201):
            tally.acknowledged.append(client_id)
        else:
            tally.refused[f"script submit {status}"] += 1
        k += 1
    connection.close()


def run_crowd(
    crowd: list[Member],
    scripts: list[Member],
    port: int,
    seconds: float,
    ramp_up: float,
    think: tuple[float, float],
) -> Tally:
    """The crowd (logging in evenly over the ramp-up) and the scripts (from its end) as tasks
    of one event loop; latencies counted from the ramp-up's end."""
    tally = Tally()

    async def everyone() -> None:
        began = time.monotonic()
        tally.measure_from = began + ramp_up
        deadline = began + ramp_up + seconds
        spacing = ramp_up / max(len(crowd), 1)
        tasks = [
            assessor(m, port, began + k * spacing, deadline, think, tally, k)
            for k, m in enumerate(crowd)
        ]
        tasks += [
            script(m, port, began + ramp_up, deadline, tally, 100_000 + k)
            for k, m in enumerate(scripts)
        ]
        running = [asyncio.ensure_future(task) for task in tasks]
        done, late = await asyncio.wait(running, timeout=deadline + GRACE_S - time.monotonic())
        for task in late:
            task.cancel()
        tally.unfinished = len(late)
        await asyncio.gather(*late, return_exceptions=True)
        for task in done:
            error = task.exception()
            if error is not None and not isinstance(error, GaveUp):
                raise error

    asyncio.run(everyone())
    return tally


def stored_client_ids(store: Store, campaign_id: int) -> Counter[str]:
    from sqlalchemy import func, select

    with store.read_session() as session:
        rows = session.execute(
            select(Judgement.client_id, func.count())
            .where(Judgement.campaign_id == campaign_id)
            .group_by(Judgement.client_id)
        ).all()
    return Counter({client_id: n for client_id, n in rows})


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ms = np.array(values) * 1000.0
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return {"n": len(values), "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "max_ms": ms.max()}


def over_time(
    timeline: list[tuple[float, str, float]], kinds: tuple[str, ...], window: float
) -> list[dict[str, float]]:
    """The judging requests' latency percentiles per `window` seconds of the measured time
    (by when each request was sent): where in the run a tail comes from."""
    by_window: defaultdict[int, list[float]] = defaultdict(list)
    for at, kind, elapsed in timeline:
        if kind in kinds:
            by_window[int(at // window)].append(elapsed)
    return [
        {"from_s": k * window, **percentiles(values)} for k, values in sorted(by_window.items())
    ]


def slowest(timeline: list[tuple[float, str, float]], n: int) -> list[dict[str, float | str]]:
    """The n slowest measured requests of any kind, with when they were sent."""
    ranked = sorted(timeline, key=lambda entry: -entry[2])[:n]
    return [{"at_s": round(at, 2), "kind": kind, "ms": round(1000 * s)} for at, kind, s in ranked]


def cpu_of(names: tuple[str, ...]) -> float:
    ticks = sum(t for _, name, t in process_cpu_ticks() if name.startswith(names))
    return ticks / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="the store's URL (PostgreSQL)")
    parser.add_argument("--assessors", type=int, default=1000)
    parser.add_argument("--scripts", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=300.0, help="measured, after ramp-up")
    parser.add_argument("--ramp-up", type=float, default=60.0, help="the crowd logs in")
    parser.add_argument("--think", default="5,30", help="think time range in seconds")
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="processes per app server")
    parser.add_argument("--threads", type=int, default=4, help="threads per process")
    parser.add_argument("--docs-per-topic", type=int, default=100)
    parser.add_argument(
        "--judge-rate",
        type=float,
        default=10.0,
        help="the servers' WORKBENCH_JUDGE_SUBMITS_PER_SECOND (default 10, the app's)",
    )
    parser.add_argument(
        "--script-queue-ms",
        type=float,
        default=0.0,
        help="the servers' WORKBENCH_SCRIPT_QUEUE_MS (default 0, the app's: scripts never shed)",
    )
    parser.add_argument(
        "--script-concurrency",
        type=int,
        default=0,
        help="the servers' WORKBENCH_SCRIPT_CONCURRENCY (default 0, the app's: no limit on a "
        "process's script requests in progress)",
    )
    parser.add_argument(
        "--password-checks-waiting",
        type=int,
        default=password_hashing.MAX_WAITING,
        help="the servers' WORKBENCH_PASSWORD_CHECKS_WAITING (default the app's: logins of a "
        "process waiting for its low-priority hashing thread before the next is answered 503)",
    )
    parser.add_argument(
        "--password-hash",
        default=user_service.DEFAULT_HASH_METHOD,
        help="werkzeug method of the crowd's passwords (default scrypt, as the app's)",
    )
    parser.add_argument(
        "--window", type=float, default=10.0, help="seconds per line of the latency over time"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    think = tuple(float(x) for x in args.think.split(","))
    assert len(think) == 2 and 0 < think[0] <= think[1]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.assessors)), hard))

    store = open_store(args.db, upgrade=True)
    made = time.monotonic()
    campaign_id, crowd, scripts = build_crowd(
        store, args.assessors, args.scripts, args.docs_per_topic, args.password_hash
    )
    print(f"campaign built in {time.monotonic() - made:.0f} s", flush=True)
    env = {
        "WORKBENCH_SECRET_KEY": uuid.uuid4().hex * 2,
        "WORKBENCH_TRUSTED_PROXIES": "1",
        "WORKBENCH_JUDGE_SUBMITS_PER_SECOND": str(args.judge_rate),
        "WORKBENCH_SCRIPT_QUEUE_MS": str(args.script_queue_ms),
        "WORKBENCH_SCRIPT_CONCURRENCY": str(args.script_concurrency),
        "WORKBENCH_PASSWORD_CHECKS_WAITING": str(args.password_checks_waiting),
    }
    with tempfile.TemporaryDirectory(prefix="workbench-crowd-") as tmp:
        servers = [
            Server(
                args.db,
                Path(tmp) / f"server{k}",
                workers=args.workers,
                threads=args.threads,
                env=env,
            )
            for k in range(args.servers)
        ]
        connections = 4 * (args.assessors + args.scripts) + 64  # clients and upstream
        upstream = [s.port for s in servers]
        nginx = Nginx(Path(tmp) / "nginx", free_port(), upstream, connections=connections)
        try:
            for server in servers:
                server.start()
            nginx.start()
            before = {
                "servers": sum(s.cpu_seconds() for s in servers),
                "postgres": postgres_cpu_seconds(),
                "nginx": cpu_of(("nginx",)),
                "generator": time.process_time(),
                "machine": machine_cpu_seconds(),
            }
            load_before = os.getloadavg()
            started = time.monotonic()
            tally = run_crowd(crowd, scripts, nginx.port, args.seconds, args.ramp_up, think)
            elapsed = time.monotonic() - started
            spent = {
                "servers": sum(s.cpu_seconds() for s in servers) - before["servers"],
                "postgres": postgres_cpu_seconds() - before["postgres"],
                "nginx": cpu_of(("nginx",)) - before["nginx"],
                "generator": time.process_time() - before["generator"],
                "machine": machine_cpu_seconds() - before["machine"],
            }
            load_after = os.getloadavg()
        finally:
            nginx.stop()
            for server in servers:
                server.stop()
    stored = stored_client_ids(store, campaign_id)
    store.dispose()
    acknowledged = Counter(tally.acknowledged)
    lost = sorted(set(acknowledged) - set(stored))
    doubled = sorted(
        {c for c, n in stored.items() if n > 1} | {c for c, n in acknowledged.items() if n > 1}
    )
    unexpected = sorted(set(stored) - set(acknowledged) - tally.in_flight)
    judging_kinds = ("crowd submit", "document", "state", "script submit")
    every = [x for kind in judging_kinds for x in tally.latencies[kind]]
    figures = {
        "assessors": args.assessors,
        "scripts": args.scripts,
        "judge_rate_per_s": args.judge_rate,
        "script_queue_ms": args.script_queue_ms,
        "app_servers": f"{args.servers} x {args.workers} workers x {args.threads} threads",
        "seconds_measured": args.seconds,
        "ramp_up_s": args.ramp_up,
        "think_s": list(think),
        "acknowledged": len(tally.acknowledged),
        "crowd_judgements_per_s": len(tally.latencies["crowd submit"]) / args.seconds,
        "script_judgements_per_s": len(tally.latencies["script submit"]) / args.seconds,
        "latency": {kind: percentiles(tally.latencies[kind]) for kind in sorted(tally.latencies)},
        "every_judging_request": percentiles(every),
        "judging_latency_over_time": over_time(tally.timeline, judging_kinds, args.window),
        "slowest_requests": slowest(tally.timeline, 20),
        "refused": dict(tally.refused),
        "broken_connections": tally.broken,
        "connection_errors": dict(tally.errors.most_common(8)),
        "members_gave_up": tally.gave_up,
        "members_unfinished": tally.unfinished,
        "lost": len(lost),
        "doubled": len(doubled),
        "unexpected": len(unexpected),
        "cpu_s": {k: round(v, 1) for k, v in spent.items()},
        "elapsed_s": round(elapsed, 1),
        "machine_busy_percent": round(100 * spent["machine"] / elapsed / (os.cpu_count() or 1)),
        "generator_cpu_percent_of_a_core": round(100 * spent["generator"] / elapsed),
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
    }
    print(json.dumps(figures, indent=2, default=float))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=float) + "\n")
    return 0 if not (lost or doubled or unexpected) else 1


if __name__ == "__main__":
    sys.exit(main())
