"""`workbench serve` in its production configuration: granian with several worker processes."""

from __future__ import annotations

import http.client
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.hardening.conftest import load_generator
from tests.web.conftest import FAST_HASH, PASSWORD
from workbench.services import users as user_service
from workbench.store import open_store

run_load = load_generator()
pytestmark = pytest.mark.slow  # starts `workbench serve` in a subprocess


def _request(port: int, method: str, path: str, **kwargs) -> http.client.HTTPResponse:  # type: ignore[no-untyped-def]
    """One request on a new connection (so that the kernel may hand it to any worker)."""
    connection = http.client.HTTPConnection(run_load.HOST, port, timeout=10)
    connection.request(method, path, **kwargs)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_a_browser_session_is_valid_on_every_worker(database_url: str, tmp_path: Path) -> None:
    """The secret key is written once before the workers start, so a session cookie signed by
    one worker is accepted by the others; every worker serves the same store."""
    store = open_store(database_url, upgrade=True)
    with store.session() as session:
        user_service.create_user(session, "ann", PASSWORD, role="assessor", hash_method=FAST_HASH)
    store.dispose()
    server = run_load.Server(database_url, tmp_path / "server", workers=3, threads=1).start()
    try:
        login_page = http.client.HTTPConnection(run_load.HOST, server.port, timeout=10)
        login_page.request("GET", "/login")
        response = login_page.getresponse()
        page = response.read().decode()
        cookie = response.getheader("Set-Cookie", "").split(";", 1)[0]
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token and cookie
        form = {"username": "ann", "password": PASSWORD, "csrf_token": token.group(1)}
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
        login_page.request("POST", "/login", urlencode(form), headers)
        response = login_page.getresponse()
        response.read()
        assert response.status in (302, 303)
        session_cookie = response.getheader("Set-Cookie", "").split(";", 1)[0]
        statuses = [
            _request(server.port, "GET", "/assess/", headers={"Cookie": session_cookie}).status
            for _ in range(24)
        ]
        anonymous = _request(server.port, "GET", "/assess/").status
    finally:
        server.stop()
    log = server.log_tail(20_000)
    assert "worker-3" in log, log
    assert statuses == [200] * 24
    assert anonymous == 302
