"""SQLite's WAL is copied into the database by the store's checkpointer thread, outside the
write lock, never by the commit of a writer (which would make every other writer wait)."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time

import pytest

from workbench.priority import BATCH_NICE
from workbench.store.db import Checkpointer

from .conftest import GUARD_S


@pytest.fixture
def sqlite_file(store) -> str:
    if store.checkpointer is None:
        pytest.skip("a SQLite file's WAL")
    with store.connection() as connection:
        connection.exec_driver_sql("CREATE TABLE filler (b BLOB)")
    return store.engine.url.database


def fill(store, megabytes: int) -> None:
    """Write `megabytes` MB in transactions of 512 KB (each about 128 WAL pages)."""
    for _ in range(megabytes * 2):
        with store.connection() as connection:
            connection.exec_driver_sql("INSERT INTO filler VALUES (randomblob(524288))")


def wal_frames(path: str) -> tuple[int, int]:
    """(frames in the WAL, frames copied into the database) after a PASSIVE checkpoint."""
    with sqlite3.connect(path) as connection:
        _busy, log, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return log, copied


def test_no_commit_checkpoints_the_wal(store, sqlite_file, monkeypatch):
    """With SQLite's automatic checkpoint (every 1,000 pages) a commit would have copied the
    WAL and the WAL would have restarted; here it holds every page written."""
    monkeypatch.setattr(store.checkpointer, "written", lambda: None)  # no new thread
    # and the thread the fixture's write started has ended: at batch priority on a busy
    # machine it could otherwise run its checkpoint in the middle of the fill
    store.checkpointer.close()
    fill(store, 8)  # about 2,000 pages
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 0
    log, copied = wal_frames(sqlite_file)
    assert log >= 2000 and copied == log


def test_the_checkpointer_thread_copies_the_wal_after_writes(store, sqlite_file, monkeypatch):
    # wait for a checkpoint that began after the fill's last write: the thread the fixture's
    # write started (at batch priority, late on a busy machine) may run one before or during
    # the fill, which leaves the fill's pages in the WAL (which then held both fills' pages)
    ran = threading.Condition()
    writes: list[float] = []
    checkpoints: list[float] = []  # when each finished checkpoint began
    real_checkpoint, real_written = Checkpointer.checkpoint, Checkpointer.written

    # only this store's: the class is patched, and another store's checkpointer thread (an
    # earlier test's, idle for up to CHECKPOINTER_IDLE_S) woken meanwhile ran the patched
    # method too, and its checkpoint of another file ended the wait early
    def written(self):
        if self is store.checkpointer:
            writes.append(time.monotonic())  # before the thread is woken
        real_written(self)

    def checkpoint(self):
        began = time.monotonic()
        real_checkpoint(self)
        if self is not store.checkpointer:
            return
        with ran:
            checkpoints.append(began)
            ran.notify_all()

    monkeypatch.setattr(Checkpointer, "written", written)
    monkeypatch.setattr(Checkpointer, "checkpoint", checkpoint)
    fill(store, 1)
    last_write = writes[-1]
    with ran:
        assert ran.wait_for(lambda: any(t >= last_write for t in checkpoints), GUARD_S), (
            "no checkpoint after a write"
        )
    fill(store, 1)  # the WAL restarts: it never grows beyond what is written between two
    log, _copied = wal_frames(sqlite_file)
    assert log < 2 * 128 + 16
    thread = store.checkpointer._thread
    store.dispose()  # ends the thread
    assert thread is not None and not thread.is_alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads have their own nice")
def test_the_checkpointer_thread_runs_at_batch_priority(store, sqlite_file):
    """Copying an import's gigabyte into the database must not take the CPU from requests."""
    fill(store, 1)
    thread = store.checkpointer._thread
    assert thread is not None and thread.is_alive()
    process = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    deadline = time.monotonic() + 5
    while thread.native_id is None and time.monotonic() < deadline:
        time.sleep(0.01)
    lowered = min(process + BATCH_NICE, 19)
    while os.getpriority(os.PRIO_PROCESS, thread.native_id) != lowered:
        assert time.monotonic() < deadline, "the checkpointer kept the process's priority"
        time.sleep(0.01)
