"""Store sessions: write transactions serialise (on SQLite across processes too), read
transactions never write."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import func, select

from workbench.store import Store, db, open_store
from workbench.store.db import SQLITE_SYNCHRONOUS_ENV
from workbench.store.models import Campaign, Judgement, PreferenceJudgement, User


def test_read_session_refuses_to_write(store: Store) -> None:
    with (
        pytest.raises(RuntimeError, match="read session must not write"),
        store.read_session() as session,
    ):
        session.add(User(username="x", password_hash="-", role="admin"))
        session.flush()
    with store.read_session() as session:
        assert session.scalar(select(func.count(User.id))) == 0


def test_a_statement_read_sees_committed_rows_and_refuses_to_write(store: Store) -> None:
    """`statement_read` (autocommit on a database server): a lookup sees what is committed,
    not what an open write transaction holds, and a flush is refused as in a read session."""
    with store.session() as session:
        session.add(User(username="a", password_hash="-", role="admin"))
        with store.statement_read() as reader:
            assert reader.scalar(select(func.count(User.id))) == 0
    with store.statement_read() as reader:
        assert reader.scalar(select(User.username)) == "a"
    with (
        pytest.raises(RuntimeError, match="read session must not write"),
        store.statement_read() as reader,
    ):
        reader.add(User(username="b", password_hash="-", role="admin"))
        reader.flush()
    with store.read_session() as session:
        assert session.scalars(select(User.username)).all() == ["a"]


def test_read_session_sees_committed_writes_without_waiting(store: Store) -> None:
    with store.session() as session:
        session.add(User(username="a", password_hash="-", role="admin"))
        with store.read_session() as reader:  # a reader while a write transaction is open
            assert reader.scalar(select(func.count(User.id))) == 0
    with store.read_session() as reader:
        assert reader.scalar(select(User.username)) == "a"


def test_write_sessions_of_threads_never_overlap(store: Store) -> None:
    inside = 0
    most = 0
    guard = threading.Lock()

    def write(i: int) -> None:
        nonlocal inside, most
        with store.session() as session:
            with guard:
                inside += 1
                most = max(most, inside)
            session.add(User(username=f"u{i}", password_hash="-", role="assessor"))
            session.flush()
            time.sleep(0.01)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with store.read_session() as session:
        assert session.scalar(select(func.count(User.id))) == 6
    if store.is_sqlite:
        assert most == 1


_JUDGE = """
import sys
from pathlib import Path
from workbench.store import open_store
from workbench.store.models import User
store = open_store(sys.argv[1])
Path(sys.argv[2]).touch()
with store.session() as session:
    session.add(User(username="judge", password_hash="-", role="assessor"))
"""


def test_a_batched_job_lets_writers_queued_in_other_processes_go_between_its_batches(
    tmp_path: Path,
) -> None:
    """An import's batch (`batch_connection`) pauses on SQLite when a writer waits for the
    lock, so that a judgement submit that queued for the write lock during a batch (in a
    server process) is written before the next batch: a released flock is not handed over to
    its waiter, and the waiter says it waits (`WriteLock.contended`)."""
    database = tmp_path / "shared.sqlite"
    store = open_store(f"sqlite:///{database}", upgrade=True)
    queued = tmp_path / "queued"
    seen: list[bool] = []
    judge = None
    for n in range(3):
        with store.batch_connection() as connection:
            seen.append(bool(connection.scalar(select(func.count(User.id)))))
            if n == 0:
                judge = subprocess.Popen([sys.executable, "-c", _JUDGE, store.url, str(queued)])
                while not queued.exists() and judge.poll() is None:
                    time.sleep(0.01)
                assert store.write_lock is not None
                _until(store.write_lock.contended)  # the judge waits for the lock
    assert judge is not None and judge.wait(timeout=60) == 0
    assert seen == [False, True, True]


def _busy(seconds: float) -> None:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        pass


def _add_user(store: Store, name: str) -> None:
    with store.session() as session:
        session.add(User(username=name, password_hash="-", role="assessor"))


def _judge(store: Store, *, preference: bool = False) -> None:
    """An assessor's judgement (or preference) committed, as a judging request does."""
    with store.session() as session:
        user = session.scalar(select(User).where(User.username == "judge"))
        campaign = session.scalar(select(Campaign).where(Campaign.name == "paced"))
        if user is None or campaign is None:
            user = User(username="judge", password_hash="-", role="assessor")
            campaign = Campaign(name="paced")
            session.add_all([user, campaign])
            session.flush()
        if preference:
            session.add(
                PreferenceJudgement(
                    campaign_id=campaign.id,
                    qid="1",
                    first="a",
                    second="b",
                    shown_left="a",
                    user_id=user.id,
                )
            )
        else:
            session.add(Judgement(campaign_id=campaign.id, qid="1", docno="d", user_id=user.id))


def _until(condition, guard_s: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + guard_s
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_a_batch_pauses_only_while_others_write(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into an idle store a long job's batches never pause (an import ran at half speed when
    they always did). When a judgement waits for the write lock (SQLite) or was committed
    since the job's previous batch (PostgreSQL), the job pauses as long as the batch took, at
    most BATCH_PAUSE_MAX_S, and goes on pausing for PACE_MEMORY_S after it last saw one. The
    body is timed, not slept, so that only the pauses call time.sleep."""
    monkeypatch.setattr(db, "PACE_MEMORY_S", 0.8)
    real_sleep = time.sleep
    pauses: list[float] = []
    _judge(store)  # the campaign and its judge exist before the job starts
    monkeypatch.setattr(db.time, "sleep", pauses.append)
    for _ in range(3):
        with store.batch_connection():
            _busy(0.02)
    assert pauses == []
    writer = threading.Thread(target=_judge, args=(store,))
    with store.batch_connection():
        writer.start()
        if store.write_lock is not None:  # the judge waits for the write lock
            _until(store.write_lock.contended)
        else:  # the judge's transaction commits beside the batch
            writer.join()
        _busy(0.05)
    writer.join()
    with store.batch_connection():  # nobody else now, but within PACE_MEMORY_S
        _busy(db.BATCH_PAUSE_MAX_S + 0.05)
    assert len(pauses) == 2
    assert 0.05 <= pauses[0] < db.BATCH_PAUSE_MAX_S
    assert pauses[1] == db.BATCH_PAUSE_MAX_S
    real_sleep(0.85)
    with store.batch_connection():
        _busy(0.02)
    assert len(pauses) == 2  # the others stopped: no pause


def test_only_judgements_pace_a_batch_on_postgresql(
    store: Store, empty_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's writers do not wait for each other; what a long job delays is each
    judgement's commit. Between its batches, a writer of another database on the same server
    (another campaign's store, the parallel test run's other worker), a reader of this
    database (an admin's page, a script polling a task) or an admin's write here never pace
    the job; a judgement or a preference does."""
    if store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite's writers queue on its write lock (the test above)")
    _judge(store)
    pauses: list[float] = []
    monkeypatch.setattr(db.time, "sleep", pauses.append)
    other = sa.create_engine(empty_database_url)
    try:
        with other.begin() as connection:
            connection.exec_driver_sql("CREATE TABLE t (n integer)")
        for n in range(3):
            with store.batch_connection():
                with other.begin() as connection:  # a transaction id between the batches
                    connection.exec_driver_sql(f"INSERT INTO t VALUES ({n})")
                with store.read_session() as session:  # a reader of this database meanwhile
                    session.scalar(select(func.count(User.id)))
                _busy(0.02)
        with store.batch_connection():
            _add_user(store, f"admin-made-{n}")  # this database's writer, not a judgement
            _busy(0.02)
        assert pauses == []
        for preference in (False, True):
            with store.batch_connection():
                _judge(store, preference=preference)
                _busy(0.02)
        assert len(pauses) == 2
    finally:
        other.dispose()


def test_connection_is_a_write_transaction_that_rolls_back_on_error(store: Store) -> None:
    users = User.__table__
    with store.connection() as connection:
        connection.execute(users.insert(), {"username": "a", "password_hash": "-", "role": "admin"})
    with pytest.raises(ZeroDivisionError), store.connection() as connection:
        connection.execute(users.insert(), {"username": "b", "password_hash": "-", "role": "admin"})
        raise ZeroDivisionError
    with store.read_session() as session:
        assert list(session.scalars(select(User.username))) == ["a"]


_HOLD_WRITE_LOCK = """
import sys, time
from pathlib import Path
from workbench.store import open_store
store = open_store(sys.argv[1])
with store.connection():
    Path(sys.argv[2]).touch()
    time.sleep(float(sys.argv[3]))
"""


def test_sqlite_writers_of_other_processes_queue_on_the_lock_file(tmp_path: Path) -> None:
    """While another process is in a write transaction, this one holds no flock of the
    `<file>-writelock` file and waits for it (woken at release, no busy polling)."""
    database = tmp_path / "shared.sqlite"
    store = open_store(f"sqlite:///{database}", upgrade=True)
    inside = tmp_path / "inside"
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD_WRITE_LOCK, store.url, str(inside), "0.6"]
    )
    try:
        deadline = time.monotonic() + 30
        while not inside.exists():
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        lock_file = os.open(f"{database}-writelock", os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(lock_file)
        started = time.monotonic()
        with store.session() as session:
            waited = time.monotonic() - started
            session.add(User(username="after", password_hash="-", role="admin"))
    finally:
        assert child.wait(timeout=30) == 0
        store.dispose()
    assert waited > 0.3


@pytest.mark.parametrize(("setting", "expected"), [(None, 1), ("full", 2), ("NORMAL", 1)])
def test_sqlite_synchronous_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, expected: int
) -> None:
    if setting is None:
        monkeypatch.delenv(SQLITE_SYNCHRONOUS_ENV, raising=False)
    else:
        monkeypatch.setenv(SQLITE_SYNCHRONOUS_ENV, setting)
    store = open_store(f"sqlite:///{tmp_path / 'sync.sqlite'}")
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == expected
    store.dispose()


def test_sqlite_synchronous_setting_refuses_other_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SQLITE_SYNCHRONOUS_ENV, "OFF")
    with pytest.raises(ValueError, match="NORMAL or FULL"):
        open_store(f"sqlite:///{tmp_path / 'sync.sqlite'}")
    monkeypatch.delenv(SQLITE_SYNCHRONOUS_ENV)
    store = open_store(f"sqlite:///{tmp_path / 'sync.sqlite'}", sqlite_synchronous="full")
    with store.engine.connect() as connection:  # given by the caller (the app's settings)
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2
    store.dispose()


def test_autocommit_connection_commits_each_statement_on_a_server(store: Store) -> None:
    """On a database server each statement commits on its own; on SQLite the block is still
    one write transaction (rolled back here by the error)."""
    users = User.__table__
    with pytest.raises(ZeroDivisionError), store.connection(autocommit=True) as connection:
        connection.execute(users.insert(), {"username": "a", "password_hash": "-", "role": "admin"})
        raise ZeroDivisionError
    with store.read_session() as session:
        stored = list(session.scalars(select(User.username)))
    assert stored == ([] if store.is_sqlite else ["a"])
