"""Two `workbench serve` instances on one PostgreSQL behind a real nginx (deploy/nginx.conf).

Each app server has its own instance folder and the one configured secret; nginx sends each
request to the next server. What one server does holds on the other: a session and its CSRF
token, the judging rate limit, login throttling, a revoked token, a session ended by logging
out; nginx stamps each request's arrival (by which scripts' requests queued too long are
shed); a report job runs once; concurrent *next* requests of an adaptive pool from both
never reveal a document twice; an upload taken by one is imported once.

It runs in CI's PostgreSQL pass (`.ci/run`); on SQLite it is skipped.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from sqlalchemy import func, select

from tests.hardening.conftest import load_benchmark, load_generator
from tests.web.conftest import PASSWORD, World, populate
from workbench.services import adaptive_pools, assignments, campaigns
from workbench.services import users as user_service
from workbench.store import Store, open_store
from workbench.store.models import PoolEntry, ReportJob, Run, RunVersion

pytestmark = pytest.mark.slow
run_load = load_generator()
proxy_module = load_benchmark("proxy")
Nginx, NGINX = proxy_module.Nginx, proxy_module.NGINX
GUARD_S = 180.0
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')
ADAPTIVE_BUDGET = 6
SCRIPT_QUEUE_MS = 5_000
"""Scripts' requests queued longer are shed: long enough that none is under CI's load."""


@dataclass
class Deployment:
    store: Store
    world: World
    servers: list[str]  # the app servers' base URLs
    proxy: str  # nginx's
    adaptive_assignment: int
    adaptive_pool: int


@pytest.fixture
def deployment(database_url: str, tmp_path: Path) -> Iterator[Deployment]:
    if not database_url.startswith("postgresql"):
        pytest.skip("app servers share one PostgreSQL (CI's PostgreSQL pass)")
    if not Path(NGINX).exists():
        pytest.skip("needs nginx (Debian's package; .ci/run installs it)")
    store = open_store(database_url, upgrade=True)  # migrated once, before the servers
    world = populate(store, tmp_path / "files")
    with store.session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            session, campaign, method="mm", budget=ADAPTIVE_BUDGET, depth=6, batch=2, seed=3
        )
        alice = user_service.get_user(session, "alice")
        adaptive_assignment = assignments.assign(session, pool, "T1", alice).id
        adaptive_pool = pool.id
    env = {
        "WORKBENCH_SECRET_KEY": secrets.token_hex(32),  # the one secret of both servers
        "WORKBENCH_QUERYLOG_KEY": secrets.token_hex(32),
        "WORKBENCH_TRUSTED_PROXIES": "1",
        "WORKBENCH_JUDGE_SUBMITS_PER_SECOND": "0.001",  # a burst of 100, then hardly any
        "WORKBENCH_SCRIPT_QUEUE_MS": str(SCRIPT_QUEUE_MS),
    }
    servers = [
        run_load.Server(database_url, tmp_path / f"server{k}", workers=1, threads=4, env=env)
        for k in (1, 2)
    ]
    nginx = Nginx(tmp_path / "nginx", run_load.free_port(), [s.port for s in servers])
    try:
        for server in servers:
            server.start()
        nginx.start()
        assert servers[0].workdir != servers[1].workdir  # separate instance folders
        yield Deployment(
            store,
            world,
            [f"http://{run_load.HOST}:{s.port}" for s in servers],
            f"http://{run_load.HOST}:{nginx.port}",
            adaptive_assignment,
            adaptive_pool,
        )
    finally:
        nginx.stop()
        for server in servers:
            server.stop()
        store.dispose()


def logged_in(base: str, name: str, password: str = PASSWORD) -> tuple[requests.Session, str]:
    """A browser's session logged in at `base` (the login form and its CSRF token), and the
    CSRF token of the logged-in session (from a page's meta tag)."""
    browser = requests.Session()
    page = browser.get(f"{base}/login", timeout=30)
    token = CSRF.search(page.text)
    assert token, page.text
    form = {"username": name, "password": password, "csrf_token": token.group(1)}
    answer = browser.post(f"{base}/login", data=form, timeout=30, allow_redirects=False)
    assert answer.status_code in (302, 303), answer.text
    return browser, csrf_of(browser, base)


def login_attempt(base: str, name: str, password: str) -> int:
    """The status of one login through the form (with its CSRF token) at `base`."""
    browser = requests.Session()
    token = CSRF.search(browser.get(f"{base}/login", timeout=30).text)
    assert token
    form = {"username": name, "password": password, "csrf_token": token.group(1)}
    return browser.post(f"{base}/login", data=form, timeout=30, allow_redirects=False).status_code


def csrf_of(browser: requests.Session, base: str) -> str:
    found = CSRF.search(browser.get(f"{base}/", timeout=30).text)
    assert found
    return found.group(1)


def assigned_docnos(client: requests.Session, base: str, assignment: int) -> list[str]:
    """The docnos of an assignment, in its order (the judging API's documents)."""
    total = client.get(f"{base}/api/v1/assignments/{assignment}", timeout=30).json()["total"]
    url = f"{base}/api/v1/assignments/{assignment}/documents"
    return [client.get(f"{url}/{k}", timeout=30).json()["docno"] for k in range(total)]


def judgement(docno: str, grade: int = 1) -> dict[str, object]:
    return {"docno": docno, "grade": grade, "client_id": uuid.uuid4().hex}


def test_two_app_servers_behind_nginx_act_as_one(deployment: Deployment) -> None:
    one, two = deployment.servers
    proxy = deployment.proxy
    world = deployment.world
    t1 = world.assignment["alice", "T1"]

    # A session and its CSRF token made by one server are good on the other.
    alice, token = logged_in(one, "alice")
    for base in (one, two, proxy):
        assert alice.get(f"{base}/api/v1/me", timeout=30).json()["username"] == "alice"
    alice_docnos = assigned_docnos(alice, one, t1)
    for base, docno in zip((two, one, proxy), alice_docnos, strict=False):
        stored = alice.post(
            f"{base}/api/v1/assignments/{t1}/judgements",
            json=judgement(docno),
            headers={"X-CSRFToken": token},
            timeout=30,
        )
        assert stored.status_code == 201, stored.text
    refused = alice.post(
        f"{two}/api/v1/assignments/{t1}/judgements",
        json=judgement(alice_docnos[0]),
        timeout=30,
    )
    assert refused.status_code == 400 and "CSRF" in refused.json()["error"]

    # The judging rate limit (a burst of 100) holds over both servers together.
    with deployment.store.session() as session:
        bob_token = user_service.new_api_token(session, user_service.get_user(session, "bob"))
    bob = requests.Session()
    bob.headers["Authorization"] = f"Bearer {bob_token}"
    bob_t1 = world.assignment["bob", "T1"]
    docnos = assigned_docnos(bob, one, bob_t1)
    statuses = [
        bob.post(
            f"{(one, two)[k % 2]}/api/v1/assignments/{bob_t1}/judgements",
            json=judgement(docnos[k % len(docnos)]),
            timeout=30,
        ).status_code
        for k in range(130)
    ]
    assert statuses.count(201) == 100 and statuses.count(429) == 30, statuses

    # nginx stamps each request with when it arrived (X-Request-Start): a script's request
    # that claims to have waited a minute is shed by an app server that trusts the stamp,
    # and through nginx the client's own stamp is replaced, so it is answered.
    forged = {"X-Request-Start": f"t={time.time() - 60:.3f}"}
    shed = bob.get(f"{one}/api/v1/me", headers=forged, timeout=30)
    assert shed.status_code == 429 and shed.headers["Retry-After"] == "1", shed.text
    assert "busy" in shed.json()["error"]
    assert bob.get(f"{proxy}/api/v1/me", headers=forged, timeout=30).status_code == 200

    # Login throttling counts failures from both servers (5 per account and address).
    for base in (one, two, one, two, proxy):
        assert login_attempt(base, "carol", "wrong password") == 401
    assert login_attempt(two, "carol", PASSWORD) == 429
    assert login_attempt(proxy, "carol", PASSWORD) == 429

    # A token replaced through one server is refused by the other at once.
    with deployment.store.session() as session:
        old = user_service.new_api_token(session, user_service.get_user(session, "carol"))
    assert (
        requests.get(
            f"{one}/api/v1/me", headers={"Authorization": f"Bearer {old}"}, timeout=30
        ).status_code
        == 200
    )
    admin, admin_csrf = logged_in(two, "admin")
    carol_id = world.users["carol"]
    replaced = admin.post(
        f"{two}/admin/users/{carol_id}",
        data={"action": "token", "csrf_token": admin_csrf},
        timeout=30,
    )
    assert replaced.status_code == 200 and "shown only once" in replaced.text, replaced.text
    for base in (one, two):
        answer = requests.get(
            f"{base}/api/v1/me", headers={"Authorization": f"Bearer {old}"}, timeout=30
        )
        assert answer.status_code == 401

    # A session ended on one server (logout) is ended on the other.
    assert alice.post(f"{one}/logout", data={"csrf_token": token}, timeout=30).status_code == 200
    assert alice.get(f"{two}/api/v1/me", timeout=30).status_code == 401

    # The agreement report asked of both servers at once is one job, computed once.
    report = f"/reports/{world.campaign_id}/agreement"
    start = threading.Barrier(2)
    pages: dict[str, str] = {}

    def ask(base: str) -> None:
        start.wait()
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            page = admin.get(f"{base}{report}", timeout=60).text
            if 'id="agreement-topics"' in page:
                pages[base] = page
                return
            time.sleep(0.3)

    askers = [threading.Thread(target=ask, args=(base,)) for base in (one, two)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert set(pages) == {one, two}
    with deployment.store.read_session() as session:
        jobs = session.execute(
            select(ReportJob.generation, ReportJob.status).where(ReportJob.kind == "agreement")
        ).all()
    assert jobs == [(1, "done")]

    # Concurrent `next` requests of an adaptive pool, from both servers, reveal each
    # document once: the reveals are numbered 1..budget, each once.
    alice_api = requests.Session()
    with deployment.store.session() as session:
        alice_token = user_service.new_api_token(session, user_service.get_user(session, "alice"))
    alice_api.headers["Authorization"] = f"Bearer {alice_token}"
    adaptive = deployment.adaptive_assignment
    errors: list[str] = []

    def judge_queue(base: str) -> None:
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            following = alice_api.get(f"{base}/api/v1/assignments/{adaptive}/next", timeout=60)
            if following.status_code != 200:
                errors.append(f"{base} next: {following.status_code} {following.text[:200]}")
                return
            state = following.json()
            if state["done"] and state["judged"] >= ADAPTIVE_BUDGET:
                return
            stored = alice_api.post(
                f"{base}/api/v1/assignments/{adaptive}/judgements",
                json=judgement(state["docno"]),
                timeout=60,
            )
            if stored.status_code not in (200, 201):
                errors.append(f"{base} judge: {stored.status_code} {stored.text[:200]}")
                return

    judges = [threading.Thread(target=judge_queue, args=(base,)) for base in (one, two) * 2]
    for judge in judges:
        judge.start()
    for judge in judges:
        judge.join()
    assert not errors, errors
    with deployment.store.read_session() as session:
        builds = session.scalars(
            select(PoolEntry.build)
            .where(
                PoolEntry.pool_id == deployment.adaptive_pool,
                PoolEntry.qid == "T1",
                PoolEntry.sampled.is_(True),
            )
            .order_by(PoolEntry.build)
        ).all()
    assert builds == list(range(1, ADAPTIVE_BUDGET + 1))

    # An upload taken by one server is imported once, its page followed through nginx.
    upload = b"".join(
        f"{qid} Q0 D{d} {rank} {10 - rank} runC\n".encode()
        for qid in ("T1", "T2")
        for rank, d in enumerate((2, 4, 6), 1)
    )
    admin_proxy, proxy_csrf = logged_in(proxy, "admin")
    answer = admin_proxy.post(
        f"{proxy}/admin/campaigns/{world.campaign_id}/upload/runs",
        data={"csrf_token": proxy_csrf},
        files={"files": ("runC.txt", upload)},
        timeout=60,
        allow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    location = answer.headers["Location"]
    deadline = time.monotonic() + GUARD_S
    while "/imports/" in location:  # the task's page, from whichever server answers
        assert time.monotonic() < deadline
        time.sleep(0.3)
        page = admin_proxy.get(f"{proxy}{location}", timeout=60, allow_redirects=False)
        location = page.headers.get("Location", location) if page.status_code == 303 else location
    campaign_page = admin_proxy.get(f"{proxy}{location}", timeout=60).text
    assert "runs: 1 added" in campaign_page
    with deployment.store.read_session() as session:
        assert session.scalar(select(func.count()).where(Run.tag == "runC")) == 1
        run_id = session.scalar(select(Run.id).where(Run.tag == "runC"))
        versions = (
            session.execute(select(RunVersion.state).where(RunVersion.run_id == run_id))
            .scalars()
            .all()
        )
    assert versions == ["live"]
