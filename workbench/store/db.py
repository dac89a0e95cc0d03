"""Engine and session setup for any SQLAlchemy URL; SQLite by default.

SQLite connections get WAL journaling, foreign keys and a busy timeout, so that several
web workers and a command-line import can share one file safely. On SQLite a write
transaction (`Store.session()`, `Store.connection()`) starts with BEGIN IMMEDIATE, and its
writer first takes the Store's `WriteLock` (the threads using the Store, then the processes
through an flock), so writers are woken in turn instead of sleep-polling in SQLite's busy
handler; a read transaction (`Store.read_session()`) is deferred and, in WAL mode, never
waits. SQLite's automatic WAL checkpoint is off: a `Checkpointer` thread copies the WAL
into the database outside the write lock. Server databases get a connection pool without
pre-ping (see `make_engine`).
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlalchemy import Connection, CursorResult, Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from workbench.priority import run_thread_as_batch

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # Windows: processes fall back on SQLite's busy timeout
    fcntl = None

ENV_VAR = "WORKBENCH_DATABASE_URL"
SQLITE_BUSY_TIMEOUT_MS = 30_000
POOL_RECYCLE_S = 1800
SQLITE_SYNCHRONOUS_ENV = "WORKBENCH_SQLITE_SYNCHRONOUS"
WRITE_LOCK_LOG_ENV = "WORKBENCH_WRITE_LOCK_LOG"
WRITE_LOCK_LOG_MIN_S = 0.005
CHECKPOINT_EVERY_S = 1.0
CHECKPOINTER_IDLE_S = 30.0
BATCH_PAUSE_MAX_S = 0.25
"""The longest pause of a long job after one of its batches (`Store.batch_connection`)."""
PACE_MEMORY_S = 1.0
"""How long a long job keeps pausing after it last saw other writers (judgements arriving)."""
_JUDGEMENTS_SEEN = text(
    "SELECT (SELECT max(id) FROM judgements), (SELECT max(id) FROM preference_judgements)"
)
"""PostgreSQL, `Store._others_write`: the newest judgement and preference judgement committed
(each the last entry of its primary key's index)."""
READ_ONLY = "workbench_read_only"
"""Execution option of the connections of read transactions (a deferred BEGIN on SQLite)."""


class WriteLock:
    """The write lock of one SQLite file: the threads of this process queue on a reentrant
    lock, and the processes on an exclusive `flock` of `<file>-writelock` (where the OS has
    it), so that writers wake in turn instead of sleep-polling in SQLite's busy handler.
    A writer that has to wait says so: its thread is counted, and its process holds a shared
    `flock` of `<file>-writewait` while it waits, so that `contended()` tells the holder
    whether anyone waits for the lock (`Store.batch_connection` pauses only then).
    With $WORKBENCH_WRITE_LOCK_LOG set (benchmarks/load), each hold of at least
    WRITE_LOCK_LOG_MIN_S is appended to that file.
    """

    def __init__(self, database: str | None) -> None:
        self._threads = threading.RLock()
        self._depth = 0
        self._queued = 0  # threads of this process waiting for the lock
        self._path = f"{_file_of(database)}-writelock" if _file_of(database) else None
        self._file: int | None = None
        self._wait_file: int | None = None
        self._log = os.environ.get(WRITE_LOCK_LOG_ENV) or None
        self._since = 0.0

    def __enter__(self) -> WriteLock:
        if not self._threads.acquire(blocking=False):
            self._queued += 1
            try:
                self._threads.acquire()
            finally:
                self._queued -= 1
        if self._depth == 0 and self._path is not None and fcntl is not None:
            try:
                if self._file is None:
                    # flock needs no write access: whoever may read the store may queue.
                    self._file = os.open(self._path, os.O_RDONLY | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self._wait_for(self._file)
            except BaseException:
                self._threads.release()
                raise
        self._depth += 1
        if self._depth == 1:
            self._since = time.monotonic()
        return self

    def _wait_for(self, lock_file: int) -> None:
        """Take the lock's flock, blocking, while holding a shared flock of the wait file."""
        assert fcntl is not None
        wait_file = self._waiters()
        fcntl.flock(wait_file, fcntl.LOCK_SH)
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
        finally:
            fcntl.flock(wait_file, fcntl.LOCK_UN)

    def _waiters(self) -> int:
        """The file `<file>-writewait` (opened once), shared-locked by each waiting process."""
        assert self._path is not None
        if self._wait_file is None:
            path = self._path.removesuffix("-writelock") + "-writewait"
            self._wait_file = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        return self._wait_file

    def contended(self) -> bool:
        """Whether another thread of this process, or another process, waits for the lock."""
        if self._queued:
            return True
        if self._path is None or fcntl is None:
            return False
        wait_file = self._waiters()
        try:
            fcntl.flock(wait_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(wait_file, fcntl.LOCK_UN)
        return False

    def __exit__(self, *_exc: object) -> None:
        self._depth -= 1
        held = time.monotonic() - self._since if self._depth == 0 else 0.0
        if self._depth == 0 and self._file is not None and fcntl is not None:  # _file => fcntl
            fcntl.flock(self._file, fcntl.LOCK_UN)
        self._threads.release()
        if self._log is not None and held >= WRITE_LOCK_LOG_MIN_S:
            _log_hold(self._log, held)


class Checkpointer:
    """Copies the WAL of a SQLite file into the database on a thread of its own (a PASSIVE
    checkpoint: it never waits, and writers go on meanwhile), at most every
    CHECKPOINT_EVERY_S after a write.

    SQLite's automatic checkpoint runs inside the commit that finds the WAL over its
    threshold, holding the write lock: after a long read transaction has let the WAL grow
    (it cannot be copied past the oldest reader's snapshot), the next commit, often one
    tiny judgement, copied everything written meanwhile (about 1 s per 100 MB), and every
    writer waited. The thread ends when idle for CHECKPOINTER_IDLE_S; a process that ends
    leaves the rest to the last connection's close, which checkpoints the WAL.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._wake = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    def written(self) -> None:
        """A write transaction has ended: checkpoint soon."""
        self._wake.set()
        if self._thread is None or not self._thread.is_alive():
            with self._guard:
                if not self._closing.is_set() and (
                    self._thread is None or not self._thread.is_alive()
                ):
                    self._thread = threading.Thread(
                        target=self._run, name="sqlite-checkpointer", daemon=True
                    )
                    self._thread.start()

    def checkpoint(self) -> None:
        """One PASSIVE checkpoint: copy what no reader still needs from the WAL."""
        connection = self._engine.raw_connection()
        try:
            sqlite = connection.driver_connection
            assert sqlite is not None  # a live pooled connection
            sqlite.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()

    def close(self) -> None:
        self._closing.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        run_thread_as_batch()  # copying an import's gigabyte must not delay the requests
        while self._wake.wait(CHECKPOINTER_IDLE_S) and not self._closing.is_set():
            self._wake.clear()
            with suppress(Exception):  # the next write tries again; the data is in the WAL
                self.checkpoint()
            if self._closing.wait(CHECKPOINT_EVERY_S):
                return


def _log_hold(path: str, held: float) -> None:
    """Append one line to the write lock's log ($WORKBENCH_WRITE_LOCK_LOG, for benchmarks):
    seconds held, time.monotonic() at release (one clock for every process of the machine),
    process id, command line. One write(2) of O_APPEND: lines stay whole."""
    command = " ".join(sys.argv)[-120:].replace("\n", " ")
    line = f"{held:.6f} {time.monotonic():.6f} {os.getpid()} {command}\n".encode()
    try:
        file = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(file, line)
        finally:
            os.close(file)
    except OSError:  # a benchmark's log must never fail a write
        pass


def _file_of(database: str | None) -> str | None:
    """The file of a SQLite database name (a path, or a `file:` URI), None in memory."""
    if database is None or database in ("", ":memory:"):
        return None
    if database.startswith("file:"):
        path = urllib.parse.urlsplit(database).path
        return path if path and path != ":memory:" else None
    return database


def default_database_url(instance_path: str | os.PathLike[str] | None = None) -> str:
    """$WORKBENCH_DATABASE_URL, else a SQLite file `workbench.sqlite` in the instance folder."""
    url = os.environ.get(ENV_VAR)
    if url:
        return url
    folder = Path(instance_path) if instance_path else Path.cwd() / "instance"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'workbench.sqlite'}"


def sqlite_synchronous(mode: str | None = None) -> str:
    """The SQLite synchronous mode: `mode`, else $WORKBENCH_SQLITE_SYNCHRONOUS, else NORMAL;
    NORMAL or FULL.

    In WAL mode NORMAL loses no committed transaction when a process crashes or is killed,
    but the last ones may be lost if the machine loses power; FULL syncs every commit to
    disk (power-safe), at about a third fewer judgements per second under full load
    (benchmarks/load).
    """
    mode = (mode or os.environ.get(SQLITE_SYNCHRONOUS_ENV) or "NORMAL").upper()
    if mode not in ("NORMAL", "FULL"):
        raise ValueError(f"{SQLITE_SYNCHRONOUS_ENV} must be NORMAL or FULL, not {mode!r}")
    return mode


def _configure_sqlite(engine: Engine, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        # Let SQLAlchemy's BEGIN decide transactions (pysqlite's own handling defers them).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.execute("PRAGMA wal_autocheckpoint=0")  # the Checkpointer's work
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        # IMMEDIATE takes the write lock at the start, so concurrent writers wait on the
        # busy timeout instead of failing with "database is locked" on lock upgrade.
        read_only = conn.get_execution_options().get(READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def make_engine(url: str, *, synchronous: str | None = None) -> Engine:
    """An engine for `url`; on SQLite with the pragmas above (`synchronous`: see
    `sqlite_synchronous`)."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        _configure_sqlite(engine, sqlite_synchronous(synchronous))
        return engine
    # No pre-ping: it costs a round trip per request. A connection found broken (the server
    # restarted) invalidates the pool, and a judgement submit retries once
    # (services.judging.submit_judgement).
    return create_engine(url, pool_recycle=POOL_RECYCLE_S)


class ReadSession(Session):
    """A session of `Store.read_session()`: flushing a change raises RuntimeError."""


@event.listens_for(ReadSession, "before_flush")
def _refuse_flush(_session: Session, _context: object, _instances: object) -> None:
    raise RuntimeError("a read session must not write; use Store.session()")


@dataclass
class Store:
    """An engine and its session factories; each session is one transaction: commit or roll
    back. `session()` may write; `read_session()` only reads (a flush raises RuntimeError);
    `connection()` is a write transaction without the ORM."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    read_sessions: sessionmaker[ReadSession]
    write_lock: WriteLock | None = None
    """SQLite: the lock its writers queue on (threads of this Store, then processes)."""
    checkpointer: Checkpointer | None = None
    """A SQLite file: what copies its WAL into the database after writes."""
    _paced_until: float = 0.0
    """`batch_connection`: the monotonic time until which long jobs pause after batches."""
    _judgements_seen: tuple[int | None, ...] | None = None
    """PostgreSQL: the newest judgement and preference ids a long job's previous batch saw."""

    @property
    def is_sqlite(self) -> bool:
        return self.write_lock is not None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction; on SQLite, one thread of this process at a time."""
        if self.write_lock is None:
            with self.sessions() as session, session.begin():
                yield session
            return
        try:
            with self.write_lock, self.sessions() as session, session.begin():
                yield session
        finally:
            self._written()

    @contextmanager
    def connection(self, *, autocommit: bool = False) -> Iterator[Connection]:
        """A Core connection for hot paths that need no ORM objects: a write transaction, or
        with autocommit=True (on a database server) one whose statements each commit on their
        own, which saves the BEGIN and COMMIT round trips. On SQLite it is always a write
        transaction, one thread of this process (and one process) at a time."""
        if self.write_lock is not None:
            try:
                with self.write_lock, self.engine.begin() as connection:
                    yield connection
            finally:
                self._written()
        elif autocommit:
            with self.engine.connect() as connection:
                yield connection.execution_options(isolation_level="AUTOCOMMIT")
        else:
            with self.engine.begin() as connection:
                yield connection

    @contextmanager
    def batch_connection(self) -> Iterator[Connection]:
        """A write transaction for one batch of a long job (an import's steps). While others
        write (`_others_write`: judgements waiting for the write lock or arriving), the job
        then pauses as long as the batch took (at most BATCH_PAUSE_MAX_S), and for
        PACE_MEMORY_S after it last saw them; into an idle store it never pauses.

        On SQLite the job so holds the write lock at most about half the time and the writers
        that queued meanwhile (judgement submits) go first: released locks are not handed
        over, and the job would otherwise take the lock again at once. On PostgreSQL the job
        so writes its WAL at about half its full rate: a judgement's commit flushes all the
        WAL written before it, the job's included."""
        with self.connection() as connection:
            started = time.monotonic()
            yield connection
            busy = self._others_write(connection)
        took = time.monotonic() - started
        now = time.monotonic()
        if busy:
            self._paced_until = now + PACE_MEMORY_S
        if now < self._paced_until:
            time.sleep(min(took, BATCH_PAUSE_MAX_S))

    def _others_write(self, connection: Connection) -> bool:
        """Whether judgements wait or arrive beside this batch's job. On SQLite, a writer
        waits for the write lock (`WriteLock.contended`). On PostgreSQL, an assessor's
        judgement or preference was committed since the job's previous batch: the newest id
        of either table changed (a statement of READ COMMITTED sees every commit before it).
        Writers do not wait for each other there; what a job's WAL delays is each judgement's
        commit, which flushes it. So neither readers nor other writers pace the job: not an
        admin's page, not another database of a shared server (transaction ids and client
        activity, the earlier signal, counted a reader of this database whenever another
        database was written)."""
        if self.write_lock is not None:
            return self.write_lock.contended()
        if self.engine.dialect.name != "postgresql":
            return True  # no way to tell: pace as before
        previous = self._judgements_seen
        self._judgements_seen = tuple(connection.execute(_JUDGEMENTS_SEEN).one())
        return previous is not None and self._judgements_seen != previous

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        """A read-only transaction (a consistent snapshot); never waits for writers on SQLite."""
        with self.read_sessions() as session, session.begin():
            yield session

    @contextmanager
    def statement_read(self) -> Iterator[Session]:
        """A read of one statement (a lookup on every request: the session's user, a token's).
        On a database server it runs without BEGIN and COMMIT (autocommit: a statement alone
        sees one snapshot), two round trips fewer than `read_session`; on SQLite it is a
        `read_session`. A flush raises RuntimeError, as in `read_session`."""
        if self.write_lock is not None:
            with self.read_session() as session:
                yield session
            return
        with self.engine.connect() as connection:
            autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
            with self.read_sessions(bind=autocommit) as session:
                yield session

    def _written(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.written()

    def upgrade(self) -> None:
        """Apply the Alembic migrations up to head."""
        from workbench.store.migrate import upgrade

        upgrade(self)

    def dispose(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.close()
        self.engine.dispose()


_SQLITE_STORAGE_MESSAGES = {
    "attempt to write a readonly database": "the database is read-only",
    "database or disk is full": "the disk holding the database is full",
    "disk i/o error": "the disk holding the database failed (I/O error)",
    "unable to open database file": "the database file cannot be opened",
    "database is locked": (
        "the store is busy: another process held its write lock longer than the wait "
        f"({SQLITE_BUSY_TIMEOUT_MS // 1000} s); try again when it is done"
    ),
}
_SERVER_STORAGE_STATES = {
    "53100": "the database server's disk is full",
    "25006": "the database is read-only (a read-only transaction or standby server)",
}
_OS_STORAGE_ERRORS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
}


def storage_problem(error: BaseException) -> str | None:
    """One line saying why the store cannot be written (read-only database or file system, a
    full disk, a file that cannot be opened, a write lock held too long by another process),
    or None when `error` is something else."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _OS_STORAGE_ERRORS:
            where = f": {current.filename}" if current.filename else ""
            return f"{_OS_STORAGE_ERRORS[current.errno]}{where}"
        state = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if state in _SERVER_STORAGE_STATES:
            return _SERVER_STORAGE_STATES[state]
        if type(current).__module__.startswith("sqlite3"):
            text = str(current).lower()
            for needle, message in _SQLITE_STORAGE_MESSAGES.items():
                if needle in text:
                    return f"{message} ({current})"
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return None


def open_store(
    url: str | None = None, *, upgrade: bool = False, sqlite_synchronous: str | None = None
) -> Store:
    """The store at `url` (default: `default_database_url()`), migrated when `upgrade`."""
    url = url or default_database_url()
    engine = make_engine(url, synchronous=sqlite_synchronous)
    reader = engine.execution_options(**{READ_ONLY: True})
    store = Store(
        url,
        engine,
        sessionmaker(engine, expire_on_commit=False),
        sessionmaker(reader, class_=ReadSession, expire_on_commit=False),
        WriteLock(engine.url.database) if engine.dialect.name == "sqlite" else None,
        Checkpointer(engine)
        if _file_of(engine.url.database) and engine.dialect.name == "sqlite"
        else None,
    )
    if upgrade:
        store.upgrade()
    return store


def cast_result(result: Any) -> CursorResult[Any]:
    """A DML statement's result (a CursorResult, which has a rowcount)."""
    assert isinstance(result, CursorResult)
    return result
