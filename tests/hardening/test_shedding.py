"""Scripts yield to people when the servers are saturated (`web.shedding`): behind a trusted
proxy, a token request that waited longer than SCRIPT_QUEUE_MS (by the proxy's arrival
stamp) is answered 429 with Retry-After at once and stores nothing; browser sessions are
never shed; without the setting or a trusted proxy the stamp is ignored. With
SCRIPT_CONCURRENCY, a process serves at most that many token requests at once."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.web.conftest import FAST_HASH, World, get_store_of, login, make_app
from workbench.services import users as user_service
from workbench.store.models import Judgement
from workbench.web.shedding import EXTENSION, queued_seconds


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("t=1000.250", 0.75),
        ("1000.5", 0.5),
        (" t=999 ", 2.0),
        (None, None),
        ("", None),
        ("t=", None),
        ("t=abc", None),
        ("t=-5", None),
        ("t=0", None),
        ("t=inf", None),
        ("t=nan", None),
        ("t=" + "1" * 40, None),
    ],
)
def test_the_arrival_stamp_is_read_or_ignored(stamp: str | None, expected: float | None) -> None:
    waited = queued_seconds(stamp, 1001.0)
    assert waited == expected if expected is None else math.isclose(waited or 0, expected)


def stamp(seconds_ago: float) -> dict[str, str]:
    return {"X-Request-Start": f"t={time.time() - seconds_ago:.3f}"}


def stored(app, world: World, name: str) -> int:  # type: ignore[no-untyped-def]
    """How many judgements `name` has in the store."""
    with get_store_of(app).read_session() as session:
        counted = select(func.count()).where(Judgement.user_id == world.users[name])
        return session.scalar(counted) or 0


def script_token(app, name: str) -> str:  # type: ignore[no-untyped-def]
    with get_store_of(app).session() as session:
        return user_service.new_api_token(session, user_service.get_user(session, name))


def test_a_script_request_queued_too_long_is_shed_and_stores_nothing(
    world_url, tmp_path: Path, world: World
) -> None:
    app = make_app(world_url[0], tmp_path, TRUSTED_PROXIES=1, SCRIPT_QUEUE_MS=50)
    token = script_token(app, "bob")
    client = app.test_client()
    bearer = {"Authorization": f"Bearer {token}"}
    assignment = world.assignment["bob", "T1"]
    url = f"/api/v1/assignments/{assignment}/judgements"
    shed = client.post(url, json={"docno": "D1", "grade": 1}, headers={**bearer, **stamp(2)})
    assert shed.status_code == 429 and shed.headers["Retry-After"] == "1"
    assert "busy" in shed.json["error"]
    assert stored(app, world, "bob") == 0
    # the same request, stamped as just arrived (or not stamped), is stored
    fresh = client.post(url, json={"docno": "D1", "grade": 1}, headers={**bearer, **stamp(0)})
    assert fresh.status_code == 201, fresh.json
    unstamped = client.post(url, json={"docno": "D2", "grade": 0}, headers=bearer)
    assert unstamped.status_code == 201
    assert stored(app, world, "bob") == 2
    # a shed request is refused before its token is looked up: a wrong token is shed too
    wrong = client.get("/api/v1/me", headers={"Authorization": "Bearer nope", **stamp(2)})
    assert wrong.status_code == 429
    get_store_of(app).dispose()


def test_a_browser_session_is_never_shed(world_url, tmp_path: Path, world: World) -> None:
    app = make_app(world_url[0], tmp_path, TRUSTED_PROXIES=1, SCRIPT_QUEUE_MS=50)
    alice = app.test_client()
    assert login(alice, "alice").status_code == 302
    assignment = world.assignment["alice", "T1"]
    url = f"/api/v1/assignments/{assignment}/judgements"
    answer = alice.post(url, json={"docno": "D1", "grade": 1}, headers=stamp(5))
    assert answer.status_code == 201, answer.json
    assert stored(app, world, "alice") == 1
    get_store_of(app).dispose()


@pytest.mark.parametrize(
    "config",
    [{"TRUSTED_PROXIES": 0, "SCRIPT_QUEUE_MS": 50}, {"TRUSTED_PROXIES": 1}],
    ids=["no trusted proxy", "off by default"],
)
def test_the_stamp_is_ignored_without_a_trusted_proxy_or_the_setting(
    world_url, tmp_path: Path, world: World, config: dict[str, int]
) -> None:
    app = make_app(world_url[0], tmp_path, **config)
    with get_store_of(app).session() as session:
        robot = user_service.create_user(
            session, "robot", None, role="assessor", hash_method=FAST_HASH
        )
        token = user_service.new_api_token(session, robot)
    answer = app.test_client().get(
        "/api/v1/me", headers={"Authorization": f"Bearer {token}", **stamp(60)}
    )
    assert answer.status_code == 200 and answer.json["username"] == "robot"
    get_store_of(app).dispose()


def test_the_setting_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_url
) -> None:
    monkeypatch.setenv("WORKBENCH_SCRIPT_QUEUE_MS", "75")
    app = make_app(world_url[0], tmp_path)
    assert app.config["SCRIPT_QUEUE_MS"] == 75.0
    get_store_of(app).dispose()
    monkeypatch.setenv("WORKBENCH_SCRIPT_QUEUE_MS", "soon")
    with pytest.raises(ValueError, match="WORKBENCH_SCRIPT_QUEUE_MS must be a number"):
        make_app(world_url[0], tmp_path / "again")


def test_a_script_request_beyond_the_process_slots_is_shed_and_a_browser_is_not(
    world_url, tmp_path: Path, world: World
) -> None:
    app = make_app(world_url[0], tmp_path, SCRIPT_CONCURRENCY=1)
    token = script_token(app, "bob")
    bearer = {"Authorization": f"Bearer {token}"}
    script, alice = app.test_client(), app.test_client()
    assert login(alice, "alice").status_code == 302
    url = f"/api/v1/assignments/{world.assignment['bob', 'T1']}/judgements"
    slots = app.extensions[EXTENSION]
    assert slots.take()  # another script's request in progress in this process
    shed = script.post(url, json={"docno": "D1", "grade": 1}, headers=bearer)
    assert shed.status_code == 429 and shed.headers["Retry-After"] == "1"
    assert "busy" in shed.json["error"]
    assert stored(app, world, "bob") == 0
    # shed before the token is looked up: a wrong token is shed too
    assert script.get("/api/v1/me", headers={"Authorization": "Bearer nope"}).status_code == 429
    alice_url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    assert alice.post(alice_url, json={"docno": "D1", "grade": 1}).status_code == 201
    slots.give_back()
    # a failed request gives its slot back as a stored one does
    assert script.get("/api/v1/me", headers={"Authorization": "Bearer nope"}).status_code == 401
    for docno in ("D1", "D2"):
        answer = script.post(url, json={"docno": docno, "grade": 1}, headers=bearer)
        assert answer.status_code == 201, answer.json
    assert stored(app, world, "bob") == 2
    get_store_of(app).dispose()


def test_a_slot_is_held_while_a_script_request_is_served(
    world_url, tmp_path: Path, world: World
) -> None:
    app = make_app(world_url[0], tmp_path, SCRIPT_CONCURRENCY=1)
    bearer = {"Authorization": f"Bearer {script_token(app, 'bob')}"}
    inside, release = threading.Event(), threading.Event()
    me = app.view_functions["api.me"]

    def held(*args: object, **kwargs: object) -> object:
        inside.set()
        assert release.wait(30)
        return me(*args, **kwargs)

    app.view_functions["api.me"] = held
    answers: list[int] = []
    first = threading.Thread(
        target=lambda: answers.append(
            app.test_client().get("/api/v1/me", headers=bearer).status_code
        )
    )
    first.start()
    assert inside.wait(30)
    assert app.test_client().get("/api/v1/me", headers=bearer).status_code == 429
    release.set()
    first.join(30)
    assert answers == [200]
    app.view_functions["api.me"] = me
    assert app.test_client().get("/api/v1/me", headers=bearer).status_code == 200
    get_store_of(app).dispose()


def test_the_slots_are_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_url
) -> None:
    monkeypatch.setenv("WORKBENCH_SCRIPT_CONCURRENCY", "2")
    app = make_app(world_url[0], tmp_path)
    assert app.config["SCRIPT_CONCURRENCY"] == 2 and app.extensions[EXTENSION].take()
    get_store_of(app).dispose()
    monkeypatch.setenv("WORKBENCH_SCRIPT_CONCURRENCY", "1.5")
    with pytest.raises(ValueError, match="SCRIPT_CONCURRENCY must be a whole number from 0"):
        make_app(world_url[0], tmp_path / "again")
