"""Sessions and accounts (issue 11 §3, §4): sessions end on logout, password change, admin
reset and deactivation; CSRF tokens rotate at login; sessions expire; login backoff per
account and address, shared by workers, bounded; trusted proxies; password rules;
case-insensitive usernames; usernames of digits are names; per-user rate limits."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from tests.web.conftest import FAST_HASH, PASSWORD, World, csrf_token_of, get_store_of, make_app
from workbench.services import users as user_service
from workbench.services.errors import NotFound, ServiceError
from workbench.store import open_store
from workbench.store.migrate import upgrade
from workbench.store.models import Assignment, LoginFailure, User
from workbench.web.security import LOGIN_AT

A = {"REMOTE_ADDR": "10.0.0.1"}
B = {"REMOTE_ADDR": "10.0.0.2"}


def login(client: FlaskClient, name: str, password: str = PASSWORD, env: dict | None = None):  # type: ignore[no-untyped-def]
    return client.post(
        "/login", data={"username": name, "password": password}, environ_base=env or A
    )


def logged_in(app: Flask, name: str) -> FlaskClient:
    client = app.test_client()
    assert login(client, name).status_code == 302
    return client


def me(client: FlaskClient) -> int:
    return client.get("/api/v1/me").status_code


def cookie_of(client: FlaskClient, app: Flask) -> str:
    cookie = client.get_cookie(app.config["SESSION_COOKIE_NAME"])
    assert cookie is not None
    return cookie.value


# --- sessions end ---------------------------------------------------------------------------


def test_a_session_cookie_replayed_after_logout_is_refused(app: Flask, world: World) -> None:
    client = logged_in(app, "alice")
    stolen = cookie_of(client, app)
    assert client.post("/logout").status_code == 302
    replay = app.test_client()
    replay.set_cookie(app.config["SESSION_COOKIE_NAME"], stolen)
    assert me(replay) == 401


def test_a_password_change_ends_the_other_sessions_but_not_this_one(
    app: Flask, world: World
) -> None:
    here, elsewhere = logged_in(app, "alice"), logged_in(app, "alice")
    response = here.post("/account/password", data={"old": PASSWORD, "new": "a fresh secret"})
    assert response.status_code == 302
    assert me(elsewhere) == 401
    assert me(here) == 200


def test_an_admin_reset_ends_the_users_sessions(app: Flask, world: World) -> None:
    alice, admin = logged_in(app, "alice"), logged_in(app, "admin")
    url = f"/admin/users/{world.users['alice']}"
    assert admin.post(url, data={"action": "password", "password": "reset by admin"}).status_code
    assert me(alice) == 401
    assert login(app.test_client(), "alice", "reset by admin").status_code == 302


def test_a_session_does_not_come_back_with_a_reactivation(app: Flask, world: World) -> None:
    alice, admin = logged_in(app, "alice"), logged_in(app, "admin")
    url = f"/admin/users/{world.users['alice']}"
    admin.post(url, data={"action": "active", "active": "0"})
    assert me(alice) == 401
    admin.post(url, data={"action": "active", "active": "1"})
    assert me(alice) == 401
    assert me(logged_in(app, "alice")) == 200


def test_the_csrf_token_changes_at_login(csrf_app: Flask, world: World) -> None:
    client = csrf_app.test_client()
    before = csrf_token_of(client.get("/login").text)
    form = {"username": "alice", "password": PASSWORD, "csrf_token": before}
    assert client.post("/login", data=form).status_code == 302
    after = csrf_token_of(client.get("/assess/").text)
    assert after != before
    # the token of the anonymous session no longer works
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    stale = client.post(url, json={"docno": "D1", "grade": 1}, headers={"X-CSRFToken": before})
    assert stale.status_code == 400
    fresh = client.post(url, json={"docno": "D1", "grade": 1}, headers={"X-CSRFToken": after})
    assert fresh.status_code == 201


def test_sessions_last_a_working_day_by_default_and_then_end(app: Flask, world: World) -> None:
    assert app.permanent_session_lifetime.total_seconds() == 9 * 3600
    client = logged_in(app, "alice")
    assert me(client) == 200
    with client.session_transaction() as session:
        session[LOGIN_AT] = int(time.time()) - 9 * 3600 - 1
    assert me(client) == 401


def test_the_session_lifetime_is_configurable(world_url, tmp_path: Path, world: World) -> None:
    app = make_app(world_url[0], tmp_path, SESSION_HOURS=1)
    client = logged_in(app, "alice")
    with client.session_transaction() as session:
        session[LOGIN_AT] = int(time.time()) - 3601
    assert me(client) == 401
    get_store_of(app).dispose()


# --- login backoff --------------------------------------------------------------------------


def test_head_login_is_the_login_page_and_counts_no_failure(csrf_app: Flask, world: World) -> None:
    """HEAD /login is answered as GET: it never runs the login (HEAD is not an unsafe method,
    so it carries no CSRF token), and no number of them locks anyone out."""
    client = csrf_app.test_client()
    page = client.get("/login", environ_base=A)
    for _ in range(csrf_app.config["LOGIN_MAX_FAILURES"] + 2):
        head = client.head("/login", data={"username": "alice", "password": "x"}, environ_base=A)
        assert head.status_code == 200 and head.data == b""
        assert head.headers["Content-Length"] == page.headers["Content-Length"]
    with get_store_of(csrf_app).read_session() as session:
        assert session.scalar(select(func.count()).select_from(LoginFailure)) == 0
    token = csrf_token_of(page.get_data(as_text=True))
    form = {"username": "alice", "password": PASSWORD, "csrf_token": token}
    assert client.post("/login", data=form, environ_base=A).status_code == 302


def test_failures_from_one_address_do_not_lock_the_account_elsewhere(
    app: Flask, world: World
) -> None:
    attacker = app.test_client()
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        assert login(attacker, "alice", "wrong password", A).status_code == 401
    assert login(attacker, "alice", PASSWORD, A).status_code == 429
    assert login(app.test_client(), "alice", PASSWORD, B).status_code == 302


def test_one_address_failing_across_names_is_slowed_alone(app: Flask, world: World) -> None:
    client = app.test_client()
    limit = app.config["LOGIN_MAX_FAILURES"] * app.config["LOGIN_IP_FACTOR"]
    for number in range(limit):
        login(client, f"guess{number}", "wrong password", A)
    assert login(client, "bob", PASSWORD, A).status_code == 429
    assert login(app.test_client(), "bob", PASSWORD, B).status_code == 302


def test_the_wait_doubles_with_each_further_failure(app: Flask, world: World) -> None:
    window = app.config["LOGIN_LOCKOUT_SECONDS"]
    client = app.test_client()
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        login(client, "alice", "wrong password")
    first = login(client, "alice")
    assert 0 < int(first.headers["Retry-After"]) <= window
    with get_store_of(app).session() as session:  # the wait is over
        session.execute(sa.update(LoginFailure).values(last_at=LoginFailure.last_at - window))
    assert login(client, "alice", "wrong again").status_code == 401
    second = login(client, "alice")
    assert second.status_code == 429
    assert window < int(second.headers["Retry-After"]) <= 2 * window


def test_failure_counters_are_shared_by_workers(world_url, tmp_path: Path, world: World) -> None:
    one = make_app(world_url[0], tmp_path / "one")
    two = make_app(world_url[0], tmp_path / "two")
    for _ in range(one.config["LOGIN_MAX_FAILURES"]):
        assert login(one.test_client(), "alice", "wrong password").status_code == 401
    assert login(two.test_client(), "alice").status_code == 429
    for app in (one, two):
        get_store_of(app).dispose()


def test_throttling_state_is_bounded(app: Flask, world: World) -> None:
    """Huge usernames keep fixed-size keys; throttled attempts add nothing; expired keys are
    deleted by the next failure."""
    client = app.test_client()
    for number in range(30):
        login(client, f"{number}" + "x" * 200_000, "wrong password")
    with get_store_of(app).session() as session:
        keys = list(session.scalars(select(LoginFailure.key)))
        # 20 failures reach the address limit; then nothing more is written
        assert len(keys) == app.config["LOGIN_MAX_FAILURES"] * app.config["LOGIN_IP_FACTOR"] + 1
        assert {len(key) for key in keys} == {64}
        session.execute(sa.update(LoginFailure).values(last_at=0.0))
    login(app.test_client(), "bob", "wrong password", B)
    with get_store_of(app).session() as session:
        assert session.scalar(select(func.count()).select_from(LoginFailure)) == 2


def test_trusted_proxies_give_the_client_address(world_url, tmp_path: Path, world: World) -> None:
    app = make_app(world_url[0], tmp_path, TRUSTED_PROXIES=1)
    proxy = {"REMOTE_ADDR": "127.0.0.1"}
    client = app.test_client()
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        client.post(
            "/login",
            data={"username": "alice", "password": "wrong password"},
            environ_base=proxy,
            headers={"X-Forwarded-For": "203.0.113.9"},
        )
    other = app.test_client().post(
        "/login",
        data={"username": "alice", "password": PASSWORD},
        environ_base=proxy,
        headers={"X-Forwarded-For": "198.51.100.7"},
    )
    assert other.status_code == 302  # another client behind the same proxy
    get_store_of(app).dispose()


def test_without_trusted_proxies_forwarded_for_is_ignored(app: Flask, world: World) -> None:
    client = app.test_client()
    for number in range(app.config["LOGIN_MAX_FAILURES"]):
        client.post(
            "/login",
            data={"username": "alice", "password": "wrong password"},
            environ_base=A,
            headers={"X-Forwarded-For": f"203.0.113.{number}"},
        )
    assert login(client, "alice", PASSWORD, A).status_code == 429


# --- accounts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short pw", "too short"),
        ("123456789", "too short"),
        ("1234567890", "most common"),
        ("Password123", "most common"),
        ("qwertyuiop", "most common"),
        ("aaaaaaaaaaaa", "most common"),
        ("newcomer99", "the username"),
    ],
)
def test_password_rules(store, password: str, message: str) -> None:
    with store.session() as session, pytest.raises(ServiceError, match=message):
        user_service.create_user(session, "newcomer99", password)


def test_usernames_are_unique_without_regard_to_case(store) -> None:
    with store.session() as session:
        user_service.create_user(session, "alice", PASSWORD)
        with pytest.raises(ServiceError, match="already exists"):
            user_service.create_user(session, "Alice", PASSWORD)
        with pytest.raises(ServiceError, match="already exists"):
            user_service.create_user(session, "ＡＬＩＣＥ", PASSWORD)  # fullwidth
        assert user_service.get_user(session, "ALICE").username == "alice"
        assert user_service.authenticate(session, "Alice", PASSWORD) is not None


def test_the_store_refuses_names_differing_only_by_case(store) -> None:
    with pytest.raises(sa.exc.IntegrityError), store.session() as session:
        session.add(User(username="Bob", name_key="bob", password_hash="x"))
        session.add(User(username="bob", name_key="bob", password_hash="x"))
        session.flush()


def test_the_migration_renames_later_accounts_that_differ_only_by_case(
    empty_database_url,
) -> None:
    store = open_store(empty_database_url, upgrade=False)
    upgrade(store, "0001")
    users = sa.table(
        "users",
        *(sa.column(name) for name in ("username", "password_hash", "role", "active")),
        sa.column("created_at", sa.DateTime),
    )
    with store.engine.begin() as connection:
        for name in ("alice", "Alice", "bob"):
            connection.execute(
                users.insert().values(
                    username=name,
                    password_hash="h",
                    role="assessor",
                    active=True,
                    created_at=sa.func.now(),
                )
            )
    upgrade(store, "head")
    with store.session() as session:
        names = [u.username for u in session.scalars(select(User).order_by(User.id))]
        assert names == ["alice", "Alice~2", "bob"]
        assert user_service.get_user(session, "ALICE").username == "alice"
        assert all(u.session_version == 0 for u in session.scalars(select(User)))
    store.dispose()


def test_a_username_of_digits_is_a_name_never_an_id(app: Flask, world: World, run_cli) -> None:
    """User id 2 is alice; the user named '2' is another account."""
    assert world.users["alice"] == 2
    with get_store_of(app).session() as session:
        named_two = user_service.create_user(session, "2", PASSWORD).id
        with pytest.raises(NotFound):
            user_service.get_user(session, "3")  # bob's id, nobody's name
    assert run_cli("user", "role", "2", "admin").exit_code == 0
    admin = logged_in(app, "admin")
    admin.post(
        f"/admin/campaigns/{world.campaign_id}/assignments", data={"user": "2", "qids": "T1"}
    )
    with get_store_of(app).session() as session:
        assert session.get(User, named_two).role == "admin"
        assert session.get(User, world.users["alice"]).role == "assessor"
        owners = set(session.scalars(select(Assignment.user_id).where(Assignment.qid == "T1")))
        assert named_two in owners


@pytest.fixture
def run_cli(world_url):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from workbench.cli import main

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(main, ["--db", world_url[0], *args])

    return invoke


# --- rate limits ----------------------------------------------------------------------------


def test_password_attempts_are_rate_limited_per_user(app: Flask, world: World) -> None:
    alice = logged_in(app, "alice")
    burst = app.config["RATE_PASSWORD"][1]
    answers = [
        alice.post("/account/password", data={"old": "wrong", "new": "x" * 12}).status_code
        for _ in range(burst + 1)
    ]
    assert answers == [400] * burst + [429]
    # other users are not slowed by alice's attempts
    bob = logged_in(app, "bob")
    assert bob.post("/account/password", data={"old": "wrong", "new": "x" * 12}).status_code == 400


def test_judgement_submits_are_rate_limited_per_assessor(
    world_url, tmp_path: Path, world: World
) -> None:
    app = make_app(world_url[0], tmp_path, RATE_JUDGE=(0.5, 3))
    alice = logged_in(app, "alice")
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    answers = [alice.post(url, json={"docno": "D1", "grade": 1}) for _ in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert int(answers[-1].headers["Retry-After"]) >= 1
    assert "too many" in answers[-1].json["error"]
    bob = logged_in(app, "bob")
    bob_url = f"/api/v1/assignments/{world.assignment['bob', 'T1']}/judgements"
    assert bob.post(bob_url, json={"docno": "D1", "grade": 1}).status_code == 201
    get_store_of(app).dispose()


def test_a_script_account_is_not_held_to_the_judging_rate(
    world_url, tmp_path: Path, world: World
) -> None:
    """An account of the role `script` (workbench.permissions.ROLES) posts faster than the
    per-user judging rate that holds an assessor; its submits are stored like any other."""
    from workbench.services import assignments, campaigns, pools

    app = make_app(world_url[0], tmp_path, RATE_JUDGE=(0.5, 3))
    store = get_store_of(app)
    with store.session() as session:
        robot = user_service.create_user(
            session, "robot", None, role="script", hash_method=FAST_HASH
        )
        token = user_service.new_api_token(session, robot)
        campaign = campaigns.get_campaign(session, world.campaign_id)
        pool = pools.get_pool(session, campaign, None)
        assignment_id = assignments.assign(session, pool, "T1", robot, order="docno").id
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    url = f"/api/v1/assignments/{assignment_id}/judgements"
    answers = [
        client.post(url, json={"docno": docno, "grade": 1}, headers=headers).status_code
        for docno in ("D1", "D2", "D3", "D1", "D2", "D3", "D1", "D2")
    ]
    assert answers == [201] * 8
    alice = logged_in(app, "alice")
    alice_url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    assert [
        alice.post(alice_url, json={"docno": "D1", "grade": 1}).status_code for _ in range(4)
    ] == [201, 201, 201, 429]
    # a browser session of a script account cannot be opened: it has no password
    assert client.post("/login", data={"username": "robot", "password": ""}).status_code == 401
    store.dispose()
