"""Engine and session setup for any SQLAlchemy URL; SQLite by default.

SQLite connections get WAL journaling, foreign keys and a busy timeout, so that several
web workers and a command-line import can share one file safely. On SQLite a write
transaction (`Store.session()`) starts with BEGIN IMMEDIATE, and the threads of one process
queue for it on a process-wide lock (instead of sleep-polling in SQLite's busy handler);
a read transaction (`Store.read_session()`) is deferred and, in WAL mode, never waits.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

ENV_VAR = "WORKBENCH_DATABASE_URL"
SQLITE_BUSY_TIMEOUT_MS = 30_000
READ_ONLY = "workbench_read_only"
"""Execution option of the connections of read transactions (a deferred BEGIN on SQLite)."""

_write_locks: dict[str, threading.RLock] = {}
_write_locks_guard = threading.Lock()


def _write_lock(url: str) -> threading.RLock:
    """The process-wide lock of one database (reentrant: a thread may nest sessions)."""
    with _write_locks_guard:
        return _write_locks.setdefault(url, threading.RLock())


def default_database_url(instance_path: str | os.PathLike[str] | None = None) -> str:
    """$WORKBENCH_DATABASE_URL, else a SQLite file `workbench.sqlite` in the instance folder."""
    url = os.environ.get(ENV_VAR)
    if url:
        return url
    folder = Path(instance_path) if instance_path else Path.cwd() / "instance"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'workbench.sqlite'}"


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        # Let SQLAlchemy's BEGIN decide transactions (pysqlite's own handling defers them).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):  # type: ignore[no-untyped-def]
        # IMMEDIATE takes the write lock at the start, so concurrent writers wait on the
        # busy timeout instead of failing with "database is locked" on lock upgrade.
        read_only = conn.get_execution_options().get(READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


class ReadSession(Session):
    """A session of `Store.read_session()`: flushing a change raises RuntimeError."""


@event.listens_for(ReadSession, "before_flush")
def _refuse_flush(_session: Session, _context: object, _instances: object) -> None:
    raise RuntimeError("a read session must not write; use Store.session()")


@dataclass
class Store:
    """An engine and its session factories; each session is one transaction: commit or roll
    back. `session()` may write; `read_session()` only reads (a flush raises RuntimeError)."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    read_sessions: sessionmaker[ReadSession]

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction; on SQLite, one thread of this process at a time."""
        if not self.is_sqlite:
            with self.sessions() as session, session.begin():
                yield session
            return
        with _write_lock(self.url), self.sessions() as session, session.begin():
            yield session

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        """A read-only transaction (a consistent snapshot); never waits for writers on SQLite."""
        with self.read_sessions() as session, session.begin():
            yield session

    def upgrade(self) -> None:
        """Apply the Alembic migrations up to head."""
        from workbench.store.migrate import upgrade

        upgrade(self)

    def dispose(self) -> None:
        self.engine.dispose()


def open_store(url: str | None = None, *, upgrade: bool = False) -> Store:
    url = url or default_database_url()
    engine = make_engine(url)
    reader = engine.execution_options(**{READ_ONLY: True})
    store = Store(
        url,
        engine,
        sessionmaker(engine, expire_on_commit=False),
        sessionmaker(reader, class_=ReadSession, expire_on_commit=False),
    )
    if upgrade:
        store.upgrade()
    return store
