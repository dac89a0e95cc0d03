"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.store import Store, open_store

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle" / "trec_eval_test"


@pytest.fixture
def oracle_dir() -> Path:
    """trec_eval's own test files in ../shared; tests that need them skip where it is absent."""
    if not ORACLE.is_dir():
        pytest.skip(f"trec_eval oracle not found at {ORACLE} (../shared is absent)")
    return ORACLE


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """A fresh database per test: SQLite in tmp_path, or $WORKBENCH_TEST_DATABASE_URL."""
    return os.environ.get("WORKBENCH_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'test.sqlite'}"


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated, empty store."""
    store = open_store(database_url, upgrade=True)
    yield store
    store.dispose()
