"""Store sessions: write transactions serialise per process, read transactions never write."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from workbench.store import Store
from workbench.store.models import User


def test_read_session_refuses_to_write(store: Store) -> None:
    with (
        pytest.raises(RuntimeError, match="read session must not write"),
        store.read_session() as session,
    ):
        session.add(User(username="x", password_hash="-", role="admin"))
        session.flush()
    with store.read_session() as session:
        assert session.scalar(select(func.count(User.id))) == 0


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
