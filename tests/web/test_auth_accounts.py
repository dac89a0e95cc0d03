"""Accounts as the web and the CLI see them (services.users' Account functions), the login
throttle's service, and the password-hash method as a setting of each app and a parameter of
the CLI (never a process-global)."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from flask import Flask
from sqlalchemy import func, select
from werkzeug.security import check_password_hash, generate_password_hash

from tests.web.conftest import FAST_HASH, PASSWORD, World, get_store_of, login, make_app
from workbench.cli import main
from workbench.services import users as user_service
from workbench.services.errors import ServiceError
from workbench.services.login_throttle import LoginThrottle, login_keys
from workbench.store import Store, open_store
from workbench.store.models import LoginFailure, User
from workbench.web import create_app
from workbench.web.settings import EXTENSION

OTHER_HASH = "pbkdf2:sha256:1500"


def stored_hash(url: str, name: str) -> str:
    store = open_store(url)
    with store.read_session() as session:
        found = session.scalar(select(User.password_hash).where(User.username == name))
    store.dispose()
    assert found is not None
    return found


# --- the password-hash method -----------------------------------------------------------


@pytest.mark.parametrize(
    "method", ["scrypt", "scrypt:16384:8:1", "pbkdf2", "pbkdf2:sha256", "pbkdf2:sha256:1000"]
)
def test_accepted_hash_methods_are_werkzeugs(method: str) -> None:
    assert user_service.check_hash_method(method) == method
    hashed = generate_password_hash("a password", method=method)
    assert check_password_hash(hashed, "a password")


@pytest.mark.parametrize(
    "method", ["", "md5", "scrypt:1", "pbkdf2:nothash:5", "pbkdf2:sha256:0", "pbkdf2:a:1:2"]
)
def test_other_hash_methods_are_refused(method: str) -> None:
    with pytest.raises(ValueError, match="unknown password hash method"):
        user_service.check_hash_method(method)


def test_each_app_hashes_with_its_own_setting(
    world_url, tmp_path: Path, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two apps in one process, one configured by WORKBENCH_PASSWORD_HASH_METHOD: each sets
    passwords (own change, admin reset) with its own method."""
    url = world_url[0]
    monkeypatch.setenv("WORKBENCH_PASSWORD_HASH_METHOD", OTHER_HASH)
    other = create_app(
        {
            "DATABASE_URL": url,
            "TESTING": True,
            "SECRET_KEY": "k",
            "WTF_CSRF_ENABLED": False,
            "INSTANCE_PATH": str(tmp_path / "other"),
        }
    )
    monkeypatch.delenv("WORKBENCH_PASSWORD_HASH_METHOD")
    fast = make_app(url, tmp_path / "fast")
    assert other.extensions[EXTENSION].password_hash_method == OTHER_HASH
    assert fast.extensions[EXTENSION].password_hash_method == FAST_HASH

    new = "a much longer password"
    for app, name in ((other, "alice"), (fast, "bob")):
        client = app.test_client()
        assert login(client, name).status_code == 302
        changed = client.post("/account/password", data={"old": PASSWORD, "new": new})
        assert changed.status_code == 302
    admin = other.test_client()
    assert login(admin, "admin").status_code == 302
    reset = admin.post(
        f"/admin/users/{world.users['carol']}", data={"action": "password", "password": new}
    )
    assert reset.status_code in (302, 303)

    assert stored_hash(url, "alice").startswith(f"{OTHER_HASH}$")
    assert stored_hash(url, "carol").startswith(f"{OTHER_HASH}$")
    assert stored_hash(url, "bob").startswith(f"{FAST_HASH}$")
    assert login(fast.test_client(), "alice", new).status_code == 302  # any method checks
    for app in (other, fast):
        get_store_of(app).dispose()


def test_a_bad_hash_method_setting_stops_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_PASSWORD_HASH_METHOD", "md5")
    with pytest.raises(ValueError, match=r"\$WORKBENCH_PASSWORD_HASH_METHOD: unknown"):
        create_app(
            {
                "DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite'}",
                "SECRET_KEY": "k",
                "INSTANCE_PATH": str(tmp_path / "instance"),
            }
        )


def test_the_cli_hashes_with_its_parameter(world_url, world: World) -> None:
    url = world_url[0]

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(main, ["--db", url, *args], input="a long password\n", env=env)

    added = run("user", "add", "dave", "--password-stdin", "--password-hash", OTHER_HASH)
    assert added.exit_code == 0, added.output
    assert stored_hash(url, "dave").startswith(f"{OTHER_HASH}$")
    env = {"WORKBENCH_PASSWORD_HASH_METHOD": FAST_HASH}
    changed = run("user", "password", "dave", "--password-stdin", env=env)
    assert changed.exit_code == 0, changed.output
    assert stored_hash(url, "dave").startswith(f"{FAST_HASH}$")
    refused = run("user", "password", "dave", "--password-stdin", "--password-hash", "md5")
    assert refused.exit_code == 2 and "unknown password hash method 'md5'" in refused.output
    assert stored_hash(url, "dave").startswith(f"{FAST_HASH}$")  # unchanged


def test_the_cli_defaults_to_scrypt(world_url, world: World) -> None:
    result = CliRunner().invoke(
        main,
        ["--db", world_url[0], "user", "add", "erin", "--password-stdin"],
        input="a long password\n",
        env={"WORKBENCH_PASSWORD_HASH_METHOD": None},
    )
    assert result.exit_code == 0, result.output
    assert stored_hash(world_url[0], "erin").startswith("scrypt:")


def test_the_demo_hashes_its_users_passwords_with_the_clis_parameter(database_url: str) -> None:
    """`workbench demo` sets passwords as `user add` does: --password-hash, else
    $WORKBENCH_PASSWORD_HASH_METHOD, else scrypt (the served app's setting)."""
    made = CliRunner().invoke(
        main, ["--db", database_url, "demo", "--no-serve", "--password-hash", OTHER_HASH]
    )
    assert made.exit_code == 0, made.output
    for name in ("admin", "alice", "bob", "carol"):
        assert stored_hash(database_url, name).startswith(f"{OTHER_HASH}$"), name
    refused = CliRunner().invoke(
        main, ["--db", database_url, "demo", "--no-serve", "--password-hash", "md5"]
    )
    assert refused.exit_code == 2 and "unknown password hash method 'md5'" in refused.output


# --- accounts -------------------------------------------------------------------------------


def test_accounts_are_frozen_copies(app: Flask, world: World) -> None:
    store = get_store_of(app)
    with store.session() as session:
        token = user_service.new_api_token(session, user_service.get_user(session, "bob"))
    with store.read_session() as session:
        listed = user_service.accounts(session, role="assessor")
        admin = user_service.account(session, world.users["admin"])
        by_token = user_service.account_by_token(session, token)
    assert [a.username for a in listed] == ["alice", "bob", "carol"]
    assert [a.has_token for a in listed] == [False, True, False]
    assert (admin.username, admin.role, admin.active) == ("admin", "admin", True)
    assert by_token == listed[1]
    with pytest.raises(dataclasses.FrozenInstanceError):
        admin.role = "assessor"  # type: ignore[misc]


def test_a_session_account_needs_the_current_version_and_an_active_user(
    app: Flask, world: World
) -> None:
    store = get_store_of(app)
    alice = world.users["alice"]
    with store.read_session() as session:
        version = user_service.account(session, alice).session_version
        assert user_service.session_account(session, alice, version) is not None
        assert user_service.session_account(session, alice, version + 1) is None
        assert user_service.session_account(session, 2**31, 0) is None
        assert user_service.session_account(session, 0, 0) is None
    with store.session() as session:
        user_service.log_out_everywhere(session, alice)
    with store.read_session() as session:
        assert user_service.session_account(session, alice, version) is None
        assert user_service.session_account(session, alice, version + 1) is not None
    with store.session() as session:
        user_service.set_active(session, user_service.get_user(session, "alice"), False)
    with store.read_session() as session:
        now = user_service.account(session, alice).session_version
        assert user_service.session_account(session, alice, now) is None


def _log_in(session, username: str, password: str, **options: str):
    """A login as the login page makes it: the attempt read, then the password checked."""
    attempt = user_service.login_attempt(session, username, password, **options)
    return user_service.check_login(attempt, password)


def test_log_in_and_change_own_password(app: Flask, world: World) -> None:
    store = get_store_of(app)
    bob = world.users["bob"]
    with store.session() as session:
        assert _log_in(session, "BOB", PASSWORD, hash_method=FAST_HASH).id == bob
        assert _log_in(session, "bob", "wrong", hash_method=FAST_HASH) is None
        assert _log_in(session, "b" * 10_000, PASSWORD, hash_method=FAST_HASH) is None
        before = user_service.account(session, bob)
        wrong = user_service.change_own_password(
            session, bob, "wrong", "a brand new password", hash_method=FAST_HASH
        )
        assert wrong is None
        with pytest.raises(ServiceError, match="too short"):
            user_service.change_own_password(session, bob, PASSWORD, "short")
        changed = user_service.change_own_password(
            session, bob, PASSWORD, "a brand new password", hash_method=FAST_HASH
        )
        assert changed is not None
        assert changed.session_version == before.session_version + 1
    with store.read_session() as session:
        assert _log_in(session, "bob", "a brand new password") is not None
        assert _log_in(session, "bob", PASSWORD) is None


def test_a_login_beyond_the_waiting_checks_is_answered_503_and_counts_nothing(
    world_url, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With PASSWORD_CHECKS_WAITING=1 and the process's hashing thread taken by another
    check, a login is answered 503 with Retry-After and the form again: no session starts and
    no failure is counted; once the thread is free the same login succeeds."""
    from workbench import password_hashing

    app = make_app(world_url[0], tmp_path, PASSWORD_CHECKS_WAITING=1)
    entered, release = threading.Event(), threading.Event()
    real = password_hashing.check_password_hash

    def held(password_hash: str, password: str) -> bool:
        if password == "hold the thread":
            entered.set()
            release.wait(30)
            return False
        return real(password_hash, password)

    monkeypatch.setattr(password_hashing, "check_password_hash", held)
    holder = threading.Thread(
        target=password_hashing.password_matches, args=("x", "hold the thread")
    )
    holder.start()
    try:
        assert entered.wait(30)
        client = app.test_client()
        busy = login(client, "alice")
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
        assert "Many people are signing in at this moment" in busy.text
        assert 'name="password"' in busy.text
        assert client.get("/assess/").status_code == 302  # not signed in
        with get_store_of(app).read_session() as session:
            assert session.scalar(select(func.count()).select_from(LoginFailure)) == 0
    finally:
        release.set()
        holder.join(30)
    assert login(client, "alice").status_code == 302
    assert client.get("/assess/").status_code == 200
    get_store_of(app).dispose()


# --- the login throttle ---------------------------------------------------------------------


def test_login_keys_are_fixed_length_and_ignore_the_names_case() -> None:
    alice = login_keys("Alice", "10.0.0.1", 5, 20)
    assert alice == login_keys("alice", "10.0.0.1", 5, 20)
    assert [limit for _, limit in alice] == [5, 20]
    assert alice[0] != login_keys("alice", "10.0.0.2", 5, 20)[0]
    assert alice[1] == login_keys("bob", "10.0.0.1", 5, 20)[1]  # the address alone
    huge = login_keys("x" * 200_000, "10.0.0.1", 5, 20)
    assert [len(key) for key, _ in huge] == [64, 64]


def test_the_wait_doubles_after_the_limit_up_to_the_maximum(store: Store) -> None:
    throttle = LoginThrottle(store, window=300, max_wait=3600)
    assert [throttle.wait(n, 5) for n in (0, 4, 5, 6, 7, 8, 9, 40)] == [
        0.0,
        0.0,
        300,
        600,
        1200,
        2400,
        3600,
        3600,
    ]


def test_failures_are_counted_in_the_store_and_a_success_forgets_the_account(
    store: Store,
) -> None:
    throttle = LoginThrottle(store, window=300, max_wait=3600)
    keys = login_keys("alice", "10.0.0.1", 2, 8)
    assert throttle.retry_after(keys) == 0
    throttle.failed(keys)
    assert throttle.retry_after(keys) == 0
    throttle.failed(keys)
    assert 299 <= throttle.retry_after(keys) <= 300
    with store.read_session() as session:
        counted = {row.key: row.failures for row in session.scalars(select(LoginFailure))}
    assert counted == {keys[0][0]: 2, keys[1][0]: 2}
    throttle.succeeded(keys)
    assert throttle.retry_after(keys) == 0
    with store.read_session() as session:
        assert list(session.scalars(select(LoginFailure.key))) == [keys[1][0]]
