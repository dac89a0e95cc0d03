"""Operations: `workbench serve` refuses a port in use and its workers die with it; a store
that cannot be written (read-only, full disk) gives one clear line, not a traceback."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import Engine, create_engine, delete, event, func, make_url, select

from tests.hardening.conftest import load_generator
from tests.web.conftest import World, make_app
from workbench.cli import main
from workbench.store import open_store
from workbench.store.models import Document, PoolStatistics
from workbench.web.security import LOGIN_AT

pytestmark = pytest.mark.slow  # starts servers

run_load = load_generator()
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}


def _serve(database: Path, port: int, workdir: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "workbench", "--db", f"sqlite:///{database}", "serve"]
    command += ["--host", run_load.HOST, "--port", str(port), "--workers", "1"]
    return subprocess.run(
        command, cwd=workdir, env=ENV, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("reuse_port", [False, True], ids=["plain", "so_reuseport"])
def test_serve_refuses_a_port_in_use(tmp_path: Path, reuse_port: bool) -> None:
    """Also against a listener with SO_REUSEPORT (as granian binds), with which a second
    granian would share the port."""
    with socket.socket() as other:
        if reuse_port:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind((run_load.HOST, 0))
        other.listen()
        port = other.getsockname()[1]
        done = _serve(tmp_path / "store.sqlite", port, tmp_path)
    assert done.returncode == 1
    assert f"port {port} on {run_load.HOST} is already in use" in done.stderr
    assert "Serving on" not in done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _listening_sockets(port: int) -> set[str]:
    """The inodes of the sockets listening on `port` (IPv4 and IPv6, /proc/net/tcp*)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(fields[9])
    return found


def test_workers_exit_when_the_main_process_is_killed(tmp_path: Path) -> None:
    server = run_load.Server(f"sqlite:///{tmp_path / 'store.sqlite'}", tmp_path, workers=2)
    server.start()
    try:
        workers = _children(server.process.pid)
        assert len(workers) == 2, server.log_tail()
        listening = _listening_sockets(server.port)
        assert listening, f"nothing listens on port {server.port}"
        os.kill(server.process.pid, signal.SIGKILL)  # the main process only
        server.process.wait()
        deadline = time.monotonic() + 15
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers), "workers kept serving after the main died"
        # the server's listening socket is closed (compared by inode: another test's server
        # may meanwhile listen on the freed port)
        assert _listening_sockets(server.port).isdisjoint(listening)
    finally:
        server.kill()  # the process group, in case a worker survived


@pytest.fixture
def read_only(world_url: tuple[str, World]) -> Iterator[tuple[str, World]]:
    """(URL, World): SQLite opened in read-only mode; on PostgreSQL a database whose
    transactions are read-only (SQLSTATE 25006 on a write)."""
    url, world = world_url
    store = open_store(url)
    with store.session() as session:
        session.execute(delete(PoolStatistics))  # a pool whose statistics are not kept yet
    store.engine.dispose()
    if url.startswith("sqlite"):
        yield f"sqlite:///file:{url.removeprefix('sqlite:///')}?mode=ro&uri=true", world
        return
    name = make_url(url).database
    server = create_engine(url, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        read_only_sql = f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'
        connection.exec_driver_sql(read_only_sql)
    server.dispose()
    yield url, world


@pytest.fixture
def sqlite_world(world_url: tuple[str, World]) -> tuple[str, World]:
    if not world_url[0].startswith("sqlite"):
        pytest.skip("SQLite's page limit")
    return world_url


def test_cli_write_while_another_process_holds_the_lock_prints_one_line(
    sqlite_world: tuple[str, World], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from workbench.store import db

    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 200)
    url = sqlite_world[0]
    writer = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=0.1)
    writer.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["--db", url, "campaign", "create", "another"])
        listed = CliRunner().invoke(main, ["--db", url, "campaign", "list"])  # a read goes on
    finally:
        writer.rollback()
        writer.close()
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith("Error: the store is busy: another process held its write")
    assert listed.exit_code == 0, listed.output


def test_cli_on_a_read_only_database_prints_one_line(read_only) -> None:
    url = read_only[0]
    result = CliRunner().invoke(main, ["--db", url, "campaign", "create", "another"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith("Error: the database is read-only")
    listed = CliRunner().invoke(main, ["--db", url, "campaign", "list"])
    assert listed.exit_code == 0 and "c1" in listed.output


def test_web_write_on_a_read_only_database_is_a_503_with_one_log_line(
    read_only, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url, world = read_only
    app: Flask = make_app(url, tmp_path, TESTING=False)
    client = app.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = f"{world.users['alice']}.0"  # id.session version (new user: 0)
        session["_fresh"] = True
        session[LOGIN_AT] = int(time.time())
    caplog.set_level(logging.ERROR)
    answer = client.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D1", "grade": 1},
    )
    assert answer.status_code == 503
    assert "the database is read-only" in json.loads(answer.text)["error"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    assert errors[0].getMessage().startswith("store unavailable: the database is read-only")


def test_the_campaign_page_on_a_read_only_database_is_shown_without_keeping_statistics(
    read_only, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Viewing needs no write: the pool statistics the page computes and cannot keep (a
    read-only store) are computed again next time, with a warning, and the page is shown.
    (The pool's builder kept them: the fixture's world forgets them before it is read-only.)
    Its judging figures cannot be queued as a report job: they are computed in the request,
    with a warning."""
    url, world = read_only
    app: Flask = make_app(url, tmp_path, TESTING=False)
    client = app.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = f"{world.users['admin']}.0"
        session["_fresh"] = True
        session[LOGIN_AT] = int(time.time())
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        page = client.get(f"/admin/campaigns/{world.campaign_id}")
        assert page.status_code == 200 and "<th>Unique</th>" in page.text
        assert 'id="qrels-status"' in page.text and 'id="figures-status"' not in page.text
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [message.split(": ")[0] for message in warned] == [
        "pool statistics not kept",
        "judging figures computed in the request",
    ] * 2, warned
    assert all(": the database is read-only" in message for message in warned)
    for path in ("progress", "assignments"):
        shown = client.get(f"/admin/campaigns/{world.campaign_id}/{path}")
        assert shown.status_code == 200 and 'id="figures-status"' not in shown.text


@pytest.fixture
def full_disk(sqlite_world) -> Iterator[str]:
    """Every SQLite connection may not grow its file: SQLITE_FULL, as on a full disk."""

    def no_growth(connection, _record) -> None:  # type: ignore[no-untyped-def]
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count={pages}")

    event.listen(Engine, "connect", no_growth)
    try:
        yield sqlite_world[0]
    finally:
        event.remove(Engine, "connect", no_growth)


def test_cli_import_on_a_full_disk_prints_one_line(full_disk: str, tmp_path: Path) -> None:
    documents = tmp_path / "big.jsonl"
    documents.write_text(
        "".join(
            json.dumps({"docno": f"X{i}", "title": "t", "text": "lorem ipsum " * 400}) + "\n"
            for i in range(500)
        )
    )
    args = ["--db", full_disk, "import", "documents", "--campaign", "c1", str(documents)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        "Error: the disk holding the database is full (database or disk is full)"
    ]
    store = open_store(full_disk)
    try:
        with store.read_session() as session:
            assert session.scalar(select(func.count()).where(Document.docno == "X1")) == 0
    finally:
        store.dispose()
