"""Engine and session setup for any SQLAlchemy URL; SQLite by default.

SQLite connections get WAL journaling, foreign keys and a busy timeout, so that several
web workers and a command-line import can share one file safely.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

ENV_VAR = "WORKBENCH_DATABASE_URL"
SQLITE_BUSY_TIMEOUT_MS = 30_000


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
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


@dataclass
class Store:
    """An engine and its session factory. `session()` is one transaction: commit or roll back."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
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
    store = Store(url, engine, sessionmaker(engine, expire_on_commit=False))
    if upgrade:
        store.upgrade()
    return store
