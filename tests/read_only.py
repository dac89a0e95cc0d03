"""A guard for commands that only read: on SQLite a write transaction (`Store.session()`,
BEGIN IMMEDIATE) holds the store's write lock for as long as the command runs, and every
judgement waits for it; such commands must use `Store.read_session()`."""

from __future__ import annotations

import pytest

from workbench.store import Store


def _write_session(self: Store) -> None:
    raise AssertionError("a command that only reads opened a write transaction")


def forbid_write_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on in the test, opening a write session fails the test."""
    monkeypatch.setattr(Store, "session", _write_session)
