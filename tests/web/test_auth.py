"""Login, throttling, redirects, cookies and the secret key."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from tests.web.conftest import World, login, make_app


def test_login_and_wrong_password(app: Flask, world: World) -> None:
    client = app.test_client()
    wrong = login(client, "alice", "wrong password")
    assert wrong.status_code == 401
    assert "Unknown username or wrong password." in wrong.text
    assert login(client, "nobody", "whatever!").status_code == 401
    ok = login(client, "alice")
    assert ok.status_code == 302 and ok.location == "/"
    assert client.get("/").location == "/assess/"
    admin = app.test_client()
    login(admin, "admin")
    assert admin.get("/").location == "/admin/"


def test_repeated_failures_are_refused_for_a_while(app: Flask, world: World) -> None:
    client = app.test_client()
    for _ in range(app.config["LOGIN_MAX_FAILURES"]):
        assert login(client, "alice", "wrong password").status_code == 401
    blocked = login(client, "alice")  # even the right password, for now
    assert blocked.status_code == 429
    assert 0 < int(blocked.headers["Retry-After"]) <= app.config["LOGIN_LOCKOUT_SECONDS"]
    assert "Too many failed logins" in blocked.text
    assert login(app.test_client(), "bob").status_code == 302  # other users are not blocked


def test_an_ip_is_refused_after_many_failures_across_names(app: Flask, world: World) -> None:
    client = app.test_client()
    limit = app.config["LOGIN_MAX_FAILURES"] * app.config["LOGIN_IP_FACTOR"]
    for number in range(limit):
        login(client, f"guess{number}", "wrong password")
    assert login(client, "bob").status_code == 429


def test_failures_expire(world_url, tmp_path: Path, world: World) -> None:
    app = make_app(world_url[0], tmp_path, LOGIN_LOCKOUT_SECONDS=0)
    client = app.test_client()
    for _ in range(app.config["LOGIN_MAX_FAILURES"] + 1):
        login(client, "alice", "wrong password")
    assert login(client, "alice").status_code == 302


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/admin/users", "/admin/users"),
        ("//evil.example/x", "/"),
        ("https://evil.example", "/"),
        ("", "/"),
    ],
)
def test_next_only_follows_local_paths(app: Flask, world: World, target: str, expected: str):
    client = app.test_client()
    client.get("/login")
    response = client.post(
        "/login", data={"username": "admin", "password": "correct horse", "next": target}
    )
    assert response.location == expected


def test_session_cookie_flags(app: Flask, world: World) -> None:
    cookie = login(app.test_client(), "alice").headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_secure_cookies_on_request(world_url, tmp_path: Path, world: World, monkeypatch) -> None:
    monkeypatch.setenv("WORKBENCH_SECURE_COOKIES", "1")
    app = make_app(world_url[0], tmp_path)
    assert app.config["SESSION_COOKIE_SECURE"] and app.config["REMEMBER_COOKIE_SECURE"]


def test_security_headers(app: Flask, world: World) -> None:
    headers = app.test_client().get("/login").headers
    assert headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in headers["Content-Security-Policy"]


def test_secret_key_is_generated_once_and_kept(world_url, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("WORKBENCH_SECRET_KEY", raising=False)
    first = make_app(world_url[0], tmp_path, SECRET_KEY=None)
    second = make_app(world_url[0], tmp_path, SECRET_KEY=None)
    key_file = tmp_path / "instance" / "secret_key"
    assert len(first.config["SECRET_KEY"]) == 64
    assert first.config["SECRET_KEY"] == second.config["SECRET_KEY"] == key_file.read_text()
    assert key_file.stat().st_mode & 0o077 == 0
    monkeypatch.setenv("WORKBENCH_SECRET_KEY", "from-the-environment")
    assert make_app(world_url[0], tmp_path, SECRET_KEY=None).config["SECRET_KEY"] == (
        "from-the-environment"
    )


def test_change_password(app: Flask, as_user, world: World) -> None:
    client = as_user("alice")
    wrong = client.post("/account/password", data={"old": "nope", "new": "another one"})
    assert wrong.status_code == 400
    short = client.post("/account/password", data={"old": "correct horse", "new": "short"})
    assert short.status_code == 400 and "too short" in short.text
    ok = client.post("/account/password", data={"old": "correct horse", "new": "another one"})
    assert ok.status_code == 302
    assert login(app.test_client(), "alice", "another one").status_code == 302
    assert login(app.test_client(), "alice").status_code == 401
