"""Every route of the app under each role, CSRF, cookies, login throttling, the secret key.

Roles: anonymous; "assessor" = alice, who owns the assignment {a} in the URLs; "other" = bob,
another assessor; "script" = robot, a script's account (a machine judge) without assignments,
calling with its API token; admin. A route added to the app without a row here fails
test_the_matrix_covers_every_route, and a role of workbench.permissions.ROLES without a column
here fails tests/web/test_permissions.py.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.hardening.conftest import row_counts
from tests.web.conftest import FAST_HASH, PASSWORD, World, get_store_of, make_app
from workbench.services import users as user_service
from workbench.web import SECRET_KEY_ENV

ROLES = ("anonymous", "assessor", "other", "script", "admin")
LOGINS = {"anonymous": None, "assessor": "alice", "other": "bob", "script": None, "admin": "admin"}
ROLE_OF = {"assessor": "assessor", "other": "assessor", "script": "script", "admin": "admin"}
"""The role (workbench.permissions.ROLES) of each column's user."""
PAGE = {"anonymous": 302, "assessor": 200, "other": 200, "script": 200, "admin": 200}
OWN = {"anonymous": 302, "assessor": 200, "other": 404, "script": 404, "admin": 404}
OWN_API = {"anonymous": 401, "assessor": 200, "other": 404, "script": 404, "admin": 404}
USER_API = {"anonymous": 401, "assessor": 200, "other": 200, "script": 200, "admin": 200}
ADMIN_GET = {"anonymous": 302, "assessor": 403, "other": 403, "script": 403, "admin": 200}
ADMIN_POST = {"anonymous": 302, "assessor": 403, "other": 403, "script": 403, "admin": 303}
ADMIN_API = {"anonymous": 401, "assessor": 403, "other": 403, "script": 403, "admin": 200}

# (endpoint, method, url, form or JSON body, expected status per role)
MATRIX: list[tuple[str, str, str, dict | None, dict[str, int]]] = [
    ("index", "GET", "/", None, dict.fromkeys(ROLES, 302)),
    ("static", "GET", "/static/style.css", None, dict.fromkeys(ROLES, 200)),
    ("auth.login", "GET", "/login", None, {**dict.fromkeys(ROLES, 302), "anonymous": 200}),
    (
        "auth.login",
        "POST",
        "/login",
        {"username": "alice", "password": "wrong"},
        dict.fromkeys(ROLES, 401),
    ),
    ("auth.logout", "POST", "/logout", None, dict.fromkeys(ROLES, 302)),
    ("auth.change_password", "GET", "/account/password", None, PAGE),
    (
        "auth.change_password",
        "POST",
        "/account/password",
        {"old": "wrong", "new": "x" * 12},
        {**dict.fromkeys(ROLES, 400), "anonymous": 302},
    ),
    ("assess.topics", "GET", "/assess/", None, PAGE),
    ("assess.judge", "GET", "/assess/{a}", None, OWN),
    ("assess.next_topic", "GET", "/assess/{a}/next-topic", None, OWN),
    ("api.openapi", "GET", "/api/v1/openapi.json", None, dict.fromkeys(ROLES, 200)),
    ("api.me", "GET", "/api/v1/me", None, USER_API),
    ("api.my_assignments", "GET", "/api/v1/assignments", None, USER_API),
    ("api.assignment_state", "GET", "/api/v1/assignments/{a}", None, OWN_API),
    ("api.document", "GET", "/api/v1/assignments/{a}/documents/0", None, OWN_API),
    ("api.next_document", "GET", "/api/v1/assignments/{a}/next", None, OWN_API),
    (
        "api.submit",
        "POST",
        "/api/v1/assignments/{a}/judgements",
        {"docno": "D1", "grade": 1},
        {**OWN_API, "assessor": 201},
    ),
    ("api.documents", "GET", "/api/v1/assignments/{a}/documents?start=0", None, OWN_API),
    (  # nothing judged yet: nothing to undo
        "api.undo_judgement",
        "POST",
        "/api/v1/assignments/{a}/undo",
        {},
        {**OWN_API, "assessor": 400},
    ),
    # the world's campaign does not judge pairwise: its assessor is refused (400)
    ("api.pairs", "GET", "/api/v1/assignments/{a}/pairs", None, {**OWN_API, "assessor": 400}),
    ("api.pair", "GET", "/api/v1/assignments/{a}/pairs/0", None, {**OWN_API, "assessor": 400}),
    (
        "api.submit_preference",
        "POST",
        "/api/v1/assignments/{a}/preferences",
        {"left": "D1", "right": "D2", "choice": "left"},
        {**OWN_API, "assessor": 400},
    ),
    (
        "api.undo_preference",
        "POST",
        "/api/v1/assignments/{a}/preferences/undo",
        {},
        {**OWN_API, "assessor": 400},
    ),
    ("api.campaigns", "GET", "/api/v1/campaigns", None, ADMIN_API),
    ("api.campaign_progress", "GET", "/api/v1/campaigns/{c}/progress", None, ADMIN_API),
    ("api.report_json", "GET", "/api/v1/campaigns/{c}/report?sections=summary", None, ADMIN_API),
    ("api.report", "GET", "/api/v1/campaigns/{c}/report.md?sections=summary", None, ADMIN_API),
    ("api.export", "GET", "/api/v1/campaigns/{c}/export/pool", None, ADMIN_API),
    ("admin.campaigns", "GET", "/admin/", None, ADMIN_GET),
    ("admin.create_campaign", "POST", "/admin/campaigns", {"name": "c2"}, ADMIN_POST),
    ("admin.campaign", "GET", "/admin/campaigns/{c}", None, ADMIN_GET),
    ("admin.upload", "POST", "/admin/campaigns/{c}/upload/topics", None, ADMIN_POST),
    ("uploads.task", "GET", "/admin/campaigns/{c}/imports/999", None, {**ADMIN_GET, "admin": 404}),
    ("admin.build_pool", "POST", "/admin/campaigns/{c}/pools", {"depth": "2"}, ADMIN_POST),
    ("admin.extend_pool", "POST", "/admin/campaigns/{c}/pools/{p}/extend", None, ADMIN_POST),
    ("admin.assignments", "GET", "/admin/campaigns/{c}/assignments", None, ADMIN_GET),
    ("admin.auto_assign", "POST", "/admin/campaigns/{c}/assignments/auto", None, ADMIN_POST),
    ("admin.assign", "POST", "/admin/campaigns/{c}/assignments", None, ADMIN_POST),
    ("admin.reassign", "POST", "/admin/campaigns/{c}/assignments/{a}/reassign", None, ADMIN_POST),
    ("admin.unassign", "POST", "/admin/campaigns/{c}/assignments/{a}/remove", None, ADMIN_POST),
    ("admin.campaign_progress", "GET", "/admin/campaigns/{c}/progress", None, ADMIN_GET),
    ("admin.download", "GET", "/admin/campaigns/{c}/download/pool", None, ADMIN_GET),
    ("admin.users", "GET", "/admin/users", None, ADMIN_GET),
    ("admin.add_user", "POST", "/admin/users", None, ADMIN_POST),
    ("admin.update_user", "POST", "/admin/users/{u}", None, ADMIN_POST),
    ("admin.set_count_withdrawn", "POST", "/admin/campaigns/{c}/withdrawn", None, ADMIN_POST),
    ("admin.set_judging", "POST", "/admin/campaigns/{c}/judging", None, ADMIN_POST),
    ("admin.archive_object", "POST", "/admin/archive/topic/999", None, ADMIN_POST),
    ("admin.confirm_delete", "GET", "/admin/delete/user/{u}", None, ADMIN_GET),
    ("admin.delete_object", "POST", "/admin/delete/user/999", None, ADMIN_POST),
    ("reports.index", "GET", "/reports/", None, ADMIN_GET),
    ("reports.agreement", "GET", "/reports/{c}/agreement", None, ADMIN_GET),
    ("reports.agreement_download", "GET", "/reports/{c}/agreement.csv", None, ADMIN_GET),
    ("reports.evaluation", "GET", "/reports/{c}/evaluation", None, ADMIN_GET),
    (  # nothing judged yet: the report says so in each section
        "reports.evaluation_download",
        "GET",
        "/reports/{c}/evaluation.csv",
        None,
        ADMIN_GET,
    ),
    ("reports.adjudication", "GET", "/reports/{c}/adjudication", None, ADMIN_GET),
    ("reports.decide", "POST", "/reports/{c}/adjudication", None, ADMIN_POST),
    ("reports.apply", "POST", "/reports/{c}/adjudication/apply", None, ADMIN_POST),
    ("browse.topics", "GET", "/admin/campaigns/{c}/topics", None, ADMIN_GET),
    ("browse.documents", "GET", "/admin/campaigns/{c}/documents", None, ADMIN_GET),
    ("browse.document", "GET", "/admin/campaigns/{c}/documents/D1", None, ADMIN_GET),
    ("browse.runs", "GET", "/admin/campaigns/{c}/runs", None, ADMIN_GET),
    ("browse.run", "GET", "/admin/campaigns/{c}/runs/runA", None, ADMIN_GET),
    ("browse.judgements", "GET", "/admin/campaigns/{c}/judgements", None, ADMIN_GET),
    ("querylogs.index", "GET", "/querylogs/{c}", None, ADMIN_GET),
    ("querylogs.import_log", "POST", "/querylogs/{c}/import", None, ADMIN_POST),
    ("querylogs.report", "GET", "/querylogs/{c}/report?name=x", None, {**ADMIN_GET, "admin": 404}),
    (
        "querylogs.agreement",
        "GET",
        "/querylogs/{c}/agreement?name=x",
        None,
        {**ADMIN_GET, "admin": 404},
    ),
    ("querylogs_api.api_logs", "GET", "/api/v1/campaigns/{c}/querylogs", None, ADMIN_API),
    (  # no file uploaded: refused
        "querylogs_api.api_import",
        "POST",
        "/api/v1/campaigns/{c}/querylogs",
        None,
        {**ADMIN_API, "admin": 400},
    ),
    *(
        (
            f"querylogs_api.api_{view}",
            "GET",
            f"/api/v1/campaigns/{{c}}/querylogs/{view}?name=x",
            None,
            {**ADMIN_API, "admin": 404},
        )
        for view in ("report", "agreement", "evaluation", "prefs")
    ),
    (
        "querylogs_api.api_import_state",
        "GET",
        "/api/v1/campaigns/{c}/querylogs/imports/999",
        None,
        {**ADMIN_API, "admin": 404},
    ),
    (
        "adaptive.build",
        "POST",
        "/admin/campaigns/{c}/adaptive-pools",
        {"method": "mm", "budget": "2"},
        ADMIN_POST,
    ),
    # the world's pool {p} is not adaptive: its adaptive page is a 404, the API a 400
    (
        "adaptive.status",
        "GET",
        "/admin/campaigns/{c}/pools/{p}/adaptive",
        None,
        {**ADMIN_GET, "admin": 404},
    ),
    (
        "adaptive.budget",
        "POST",
        "/admin/campaigns/{c}/pools/{p}/adaptive/budget",
        {"budget": "3"},
        ADMIN_POST,
    ),
    (
        "adaptive.stop",
        "POST",
        "/admin/campaigns/{c}/pools/{p}/adaptive/topics/T1/stop",
        None,
        ADMIN_POST,
    ),
    (
        "api.adaptive_status",
        "GET",
        "/api/v1/campaigns/{c}/pools/{p}/adaptive",
        None,
        {**ADMIN_API, "admin": 400},
    ),
    (
        "api.adaptive_budget",
        "POST",
        "/api/v1/campaigns/{c}/pools/{p}/adaptive/budget",
        {"budget": 3},
        {**ADMIN_API, "admin": 400},
    ),
    (
        "api.adaptive_stop",
        "POST",
        "/api/v1/campaigns/{c}/pools/{p}/adaptive/topics/T1/stop",
        {"stopped": True},
        {**ADMIN_API, "admin": 400},
    ),
    (
        "api.adaptive_provenance",
        "GET",
        "/api/v1/campaigns/{c}/adaptive-provenance",
        None,
        ADMIN_API,
    ),
    ("machine.index", "GET", "/machine/{c}", None, ADMIN_GET),
    ("machine.report", "GET", "/machine/{c}/report", None, ADMIN_GET),
    ("machine.set_template", "POST", "/machine/{c}/template", {"template": ""}, ADMIN_POST),
    # refused requests (no model, no judge): the admin is sent back with a message
    *(
        (f"machine.{view}", "POST", f"/machine/{{c}}/{path}", None, ADMIN_POST)
        for view, path in (
            ("add_judge", "judges"),
            ("start_job", "jobs"),
            ("sample", "sample"),
            ("review", "review"),
            ("save_qrels", "qrels"),
        )
    ),
    ("machine.job", "GET", "/machine/{c}/jobs/999", None, {**ADMIN_GET, "admin": 404}),
    ("machine.job_json", "GET", "/machine/{c}/jobs/999.json", None, {**ADMIN_GET, "admin": 404}),
    ("machine.stop_job", "POST", "/machine/{c}/jobs/999/stop", None, {**ADMIN_POST, "admin": 404}),
    (
        "machine.resume_job",
        "POST",
        "/machine/{c}/jobs/999/resume",
        None,
        {**ADMIN_POST, "admin": 404},
    ),
    ("assess.stems", "GET", "/assess/stems?terms=recycling", None, PAGE),
    # routing, gold, practice and the assessor dashboard (issue 26)
    ("quality.dashboard", "GET", "/admin/campaigns/{c}/assessors", None, ADMIN_GET),
    ("quality.dashboard_download", "GET", "/admin/campaigns/{c}/assessors.csv", None, ADMIN_GET),
    ("quality.quality", "GET", "/admin/campaigns/{c}/quality", None, ADMIN_GET),
    (
        "quality.settings",
        "POST",
        "/admin/campaigns/{c}/quality/settings",
        {"gold_share": "0.1"},
        ADMIN_POST,
    ),
    (
        "quality.mark_from",
        "POST",
        "/admin/campaigns/{c}/gold/from",
        {"source": "final"},
        ADMIN_POST,
    ),
    (
        "quality.mark_one",
        "POST",
        "/admin/campaigns/{c}/gold",
        {"qid": "T1", "docno": "D4", "grade": "1"},
        ADMIN_POST,
    ),
    ("quality.unmark", "POST", "/admin/campaigns/{c}/gold/remove", None, ADMIN_POST),
    (
        "quality.set_practice",
        "POST",
        "/admin/campaigns/{c}/practice",
        {"items": "T1\tD1\t1\tOn topic."},
        ADMIN_POST,
    ),
    ("quality.remainder", "GET", "/admin/campaigns/{c}/remainder?assessor=carol", None, ADMIN_GET),
    (
        "quality.reassign_remainder",
        "POST",
        "/admin/campaigns/{c}/remainder",
        {"assessor": "carol", "confirm": "1"},
        ADMIN_POST,
    ),
    # the practice set of a campaign in which one has an assignment (the admin has none)
    ("practice.practice", "GET", "/assess/campaigns/{c}/practice", None, {**OWN, "other": 200}),
    (
        "practice.answer",
        "POST",
        "/assess/campaigns/{c}/practice/999",
        {"grade": "1"},
        {**dict.fromkeys(ROLES, 404), "anonymous": 302},
    ),
    (
        "practice.feedback",
        "GET",
        "/assess/campaigns/{c}/practice/999",
        None,
        {**dict.fromkeys(ROLES, 404), "anonymous": 302},
    ),
    ("practice.my_progress", "GET", "/assess/progress", None, PAGE),
    (
        "practice.ask_for_work",
        "POST",
        "/assess/work",
        None,
        {**dict.fromkeys(ROLES, 303), "anonymous": 302},
    ),
    ("routing_api.policies", "GET", "/api/v1/routing/policies", None, ADMIN_API),
    (
        "routing_api.route_pool",
        "POST",
        "/api/v1/campaigns/{c}/assignments",
        {"policy": "topics", "judges_per_topic": 2},
        {**ADMIN_API, "admin": 201},
    ),
    (
        "routing_api.remainder_plan",
        "GET",
        "/api/v1/campaigns/{c}/remainder?assessor=carol",
        None,
        ADMIN_API,
    ),
    (
        "routing_api.reassign_remainder",
        "POST",
        "/api/v1/campaigns/{c}/remainder",
        {"assessor": "carol", "confirm": True},
        ADMIN_API,
    ),
    ("routing_api.dashboard", "GET", "/api/v1/campaigns/{c}/assessors", None, ADMIN_API),
    ("routing_api.ask_for_work", "POST", "/api/v1/work", {}, USER_API),
    ("routing_api.my_progress", "GET", "/api/v1/progress", None, USER_API),
    (
        "assess.set_guidelines",
        "POST",
        "/assess/campaigns/{c}/guidelines",
        {"guidelines": "Judge *carefully*."},
        ADMIN_POST,
    ),
]
UNSAFE = [row for row in MATRIX if row[1] == "POST"]


def fill(url: str, world: World) -> str:
    return url.format(
        c=world.campaign_id,
        p=world.pool_id,
        a=world.assignment["alice", "T1"],
        u=world.users["carol"],
    )


SESSIONS: dict[str, str] = {}
"""Each role's session cookie, from its first login in this process: every test's world is a
copy of one template, where the cookie (user id, session version, login time) stays valid,
so each route's test reuses it instead of logging in three users again (a third of the
matrix's CPU). The login route itself is a row of the matrix; logins have their own tests."""


def client_as(app: Flask, role: str) -> FlaskClient:
    client = app.test_client()
    if role == "script":  # a machine judge's account: its API token, no password
        with get_store_of(app).session() as session:
            robot = user_service.create_user(
                session, "robot", None, role="script", hash_method=FAST_HASH
            )
            token = user_service.new_api_token(session, robot)
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        return client
    name = LOGINS[role]
    cookie = app.config["SESSION_COOKIE_NAME"]
    if name is not None and role in SESSIONS:
        client.set_cookie(cookie, SESSIONS[role])
    elif name is not None:
        response = client.post("/login", data={"username": name, "password": PASSWORD})
        assert response.status_code == 302, response.text
        session = client.get_cookie(cookie)
        assert session is not None
        SESSIONS[role] = session.value
    return client


def send(client: FlaskClient, method: str, url: str, body: dict | None, **extra):  # type: ignore[no-untyped-def]
    if method == "GET":
        return client.get(url, **extra)
    if url.startswith("/api/"):
        return client.post(url, json=body, **extra)
    return client.post(url, data=body or {}, **extra)


def test_the_matrix_covers_every_route(app: Flask) -> None:
    routes = {
        (rule.endpoint, method)
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
        if method not in {"HEAD", "OPTIONS"}
    }
    assert routes == {(endpoint, method) for endpoint, method, *_ in MATRIX}


@pytest.mark.parametrize(
    ("endpoint", "method", "url", "body", "expected"),
    MATRIX,
    ids=[f"{method} {endpoint}" for endpoint, method, *_ in MATRIX],
)
def test_route_under_each_role(
    app: Flask,
    world: World,
    endpoint: str,
    method: str,
    url: str,
    body,
    expected,  # type: ignore[no-untyped-def]
) -> None:
    """Roles run from the least to the most privileged, so refusals change nothing first."""
    got = {}
    for role in ROLES:
        response = send(client_as(app, role), method, fill(url, world), body)
        got[role] = response.status_code
        if response.status_code == 302 and role == "anonymous" and expected[role] == 302:
            assert response.location.startswith("/login")
        if url.startswith("/api/") and response.status_code >= 400:
            assert "error" in response.json
    assert got == expected


@pytest.mark.parametrize(
    ("endpoint", "method", "url", "body", "expected"),
    UNSAFE,
    ids=[f"{method} {endpoint}" for endpoint, method, *_ in UNSAFE],
)
def test_posts_without_csrf_token_are_refused_and_change_nothing(
    csrf_app: Flask,
    world: World,
    endpoint: str,
    method: str,
    url: str,
    body,
    expected,  # type: ignore[no-untyped-def]
) -> None:
    allowed = [role for role in ROLES if expected[role] < 400 and role != "anonymous"]
    role = "admin" if "admin" in allowed else "assessor"
    client = csrf_app.test_client()
    if LOGINS[role] is not None:  # log in through the form, with its token
        page = client.get("/login").text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token, "the login form carries no CSRF token"
        form = {"username": LOGINS[role], "password": PASSWORD, "csrf_token": token.group(1)}
        assert client.post("/login", data=form).status_code == 302
    with get_store_of(csrf_app).session() as session:
        before = row_counts(session)
    response = send(client, method, fill(url, world), body)
    if url.startswith("/api/"):
        assert response.status_code == 400
        assert "CSRF" in response.json["error"]
    else:
        assert response.status_code == 303
        followed = client.get(response.location or "/", follow_redirects=True)
        assert "not sent from this site" in followed.text
    with get_store_of(csrf_app).session() as session:
        assert row_counts(session) == before
    if endpoint == "auth.logout":  # still logged in
        assert client.get("/api/v1/me").status_code == 200


def test_session_cookie_is_httponly_and_samesite(app: Flask, world: World) -> None:
    client = app.test_client()
    response = client.post("/login", data={"username": "alice", "password": PASSWORD})
    cookies = response.headers.getlist("Set-Cookie")
    session_cookie = [c for c in cookies if c.startswith(app.config["SESSION_COOKIE_NAME"] + "=")]
    assert session_cookie, cookies
    assert "HttpOnly" in session_cookie[0]
    assert re.search(r"SameSite=(Lax|Strict)", session_cookie[0])


def test_login_throttling_locks_a_username_after_repeated_failures(
    app: Flask, world: World
) -> None:
    client = app.test_client()
    limit = app.config["LOGIN_MAX_FAILURES"]
    for _ in range(limit):
        wrong = client.post("/login", data={"username": "alice", "password": "guess"})
        assert wrong.status_code == 401
    locked = client.post("/login", data={"username": "alice", "password": PASSWORD})
    assert locked.status_code == 429
    assert int(locked.headers["Retry-After"]) > 0
    assert client.get("/api/v1/me").status_code == 401
    # another user from the same address is not locked out by alice's failures
    bob = client.post("/login", data={"username": "bob", "password": PASSWORD})
    assert bob.status_code == 302


def test_production_app_never_uses_a_shipped_secret_key(
    world_url, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without $WORKBENCH_SECRET_KEY each instance generates its own random key, kept in a
    file only its owner can read, and reuses it on restart."""
    monkeypatch.delenv(SECRET_KEY_ENV, raising=False)
    keys = []
    for name in ("one", "one", "two"):
        app = make_app(world_url[0], tmp_path / name, SECRET_KEY=None, TESTING=False)
        keys.append(app.config["SECRET_KEY"])
        get_store_of(app).dispose()
    assert keys[0] == keys[1] != keys[2]
    assert all(len(key) >= 32 for key in keys)
    key_file = tmp_path / "one" / "instance" / "secret_key"
    assert key_file.read_text().strip() == keys[0]
    assert stat.S_IMODE(key_file.stat().st_mode) & 0o077 == 0
    monkeypatch.setenv(SECRET_KEY_ENV, "from-the-environment")
    app = make_app(world_url[0], tmp_path / "one", SECRET_KEY=None)
    assert app.config["SECRET_KEY"] == "from-the-environment"
    get_store_of(app).dispose()
