"""Fixtures for the web tests: a campaign with topics, documents, runs, a pool and users."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.conftest import FAST_HASH, create_database, drop_database
from workbench.services import (
    assignments,
    campaigns,
    document_imports,
    pools,
    run_imports,
    topic_imports,
)
from workbench.services import users as user_service
from workbench.store import Store, open_store
from workbench.web import create_app
from workbench.web.db import get_store

PASSWORD = "correct horse"
TOPICS = [
    {
        "qid": "T1",
        "title": "solar panel recycling",
        "description": "How are panels recycled?",
        "narrative": "Recycling processes are relevant. <b>markup</b> stays text.",
    },
    {
        "qid": "T2",
        "title": "honeybee colony collapse",
        "description": "Why do colonies die?",
        "narrative": "Causes of colony losses.",
    },
]


def write_campaign_files(folder: Path) -> dict[str, Path]:
    """Two topics, 8 documents, two runs of 6 lines per topic."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = folder / "topics.jsonl"
    topics.write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    documents = folder / "docs.jsonl"
    documents.write_text(
        "".join(
            json.dumps(
                {
                    "docno": f"D{i}",
                    "title": f"Document {i}",
                    "text": f"Text {i} about solar panel recycling <script>alert(1)</script>",
                }
            )
            + "\n"
            for i in range(1, 9)
        )
    )
    runs = []
    for tag, order in [("runA", range(1, 7)), ("runB", range(8, 2, -1))]:
        path = folder / f"{tag}.run"
        path.write_text(
            "".join(
                f"{qid} Q0 D{d} {rank} {10 - rank} {tag}\n"
                for qid in ("T1", "T2")
                for rank, d in enumerate(order, 1)
            )
        )
        runs.append(path)
    qrels = folder / "ref.qrels"
    qrels.write_text("T1 0 D1 2\nT1 0 D2 0\nT2 0 D3 1\n")
    return {
        "topics": topics,
        "documents": documents,
        "runA": runs[0],
        "runB": runs[1],
        "qrels": qrels,
    }


@dataclass
class World:
    campaign_id: int
    pool_id: int
    users: dict[str, int]
    assignment: dict[tuple[str, str], int]  # (username, qid) -> assignment id


def populate(store: Store, folder: Path) -> World:
    """Users admin, alice, bob, carol; campaign 'c1' (0/1/2 keys 0/1/2) with a depth-3 pool;
    alice and bob judge T1 and T2, carol judges nothing."""
    files = write_campaign_files(folder)
    with store.session() as s:
        users = {
            name: user_service.create_user(s, name, PASSWORD, role=role, hash_method=FAST_HASH).id
            for name, role in [
                ("admin", "admin"),
                ("alice", "assessor"),
                ("bob", "assessor"),
                ("carol", "assessor"),
            ]
        }
        campaign = campaigns.create_campaign(
            s, "c1", scale="0:Not relevant:0,1:Relevant:1,2:Highly relevant:2"
        )
        topic_imports.import_topics(s, campaign, files["topics"])
        document_imports.import_documents(s, campaign, [files["documents"]])
        run_imports.import_runs(s, campaign, [files["runA"], files["runB"]])
        pool = pools.build_pool(s, campaign, strategy="depth", depth=3, seed=7)
        made = {}
        for name in ("alice", "bob"):
            user = user_service.get_user(s, name)
            for qid in ("T1", "T2"):
                made[name, qid] = assignments.assign(s, pool, qid, user, order="docno").id
        return World(campaign.id, pool.id, users, made)


SERVER_ENV = "WORKBENCH_TEST_DATABASE_URL"


@pytest.fixture(scope="session")
def world_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, World]]:
    """The populated world built once per session: a SQLite file, or on the PostgreSQL pass a
    template database. Each test gets its own copy (fast, and still isolated)."""
    folder = tmp_path_factory.mktemp("world")
    server = os.environ.get(SERVER_ENV)
    if not server:
        store = open_store(f"sqlite:///{folder / 'world.sqlite'}", upgrade=True)
        world = populate(store, folder / "files")
        store.dispose()
        yield str(folder / "world.sqlite"), world
        return
    name, url = create_database(server, "wb_world")
    store = open_store(url, upgrade=True)
    world = populate(store, folder / "files")
    store.dispose()
    yield name, world
    drop_database(server, name)


@pytest.fixture
def world_url(tmp_path: Path, world_template) -> Iterator[tuple[str, World]]:
    """(database URL, World): a copy of the session's world for this test (a store fixture:
    tests/conftest.py's STORE_FIXTURES selects it for the PostgreSQL pass)."""
    source, world = world_template
    server = os.environ.get(SERVER_ENV)
    if not server:
        target = tmp_path / "world.sqlite"
        shutil.copy(source, target)
        yield f"sqlite:///{target}", world
        return
    name, url = create_database(server, "wb_copy", source)
    yield url, world
    drop_database(server, name)


@contextmanager
def serve_in_thread(app: Flask) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 (a free port) with werkzeug's threaded server in a thread of
    the test, so that the test can reach its store; yields the base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def make_app(url: str, tmp_path: Path, **config: object) -> Flask:
    settings = {
        "DATABASE_URL": url,
        "TESTING": True,
        "SECRET_KEY": "test-key",
        "WTF_CSRF_ENABLED": False,
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "REPORT_JOB_WAIT_SECONDS": 120,  # report pages show the job's result, not its progress
        "PASSWORD_HASH_METHOD": FAST_HASH,
    }
    settings.update(config)
    return create_app(settings)


@pytest.fixture
def app(world_url, tmp_path: Path) -> Iterator[Flask]:
    app = make_app(world_url[0], tmp_path)
    yield app
    get_store_of(app).dispose()


@pytest.fixture
def csrf_app(world_url, tmp_path: Path) -> Iterator[Flask]:
    """The same world with CSRF protection on, as in production."""
    app = make_app(world_url[0], tmp_path, WTF_CSRF_ENABLED=True)
    yield app
    get_store_of(app).dispose()


def get_store_of(app: Flask) -> Store:
    with app.app_context():
        return get_store()


@pytest.fixture
def world(app: Flask, world_url) -> World:
    return world_url[1]


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def login(client: FlaskClient, username: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    """Log in through the form, with its CSRF token (needed when CSRF is on)."""
    token = csrf_token_of(client.get("/login").text)
    data = {"username": username, "password": password, "csrf_token": token}
    return client.post("/login", data=data)


@pytest.fixture
def as_user(app: Flask, world: World):  # type: ignore[no-untyped-def]
    """as_user(name) -> a test client logged in as that user (None: anonymous)."""
    return client_factory(app)


def client_factory(app: Flask):  # type: ignore[no-untyped-def]
    def make(name: str | None) -> FlaskClient:
        client = app.test_client()
        if name is not None:
            response = login(client, name)
            assert response.status_code == 302, response.text
        return client

    return make


def csrf_token_of(page: str) -> str:
    match = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert match, "no csrf-token meta tag"
    return match.group(1)
