"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from workbench.store import Store, open_store

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle" / "trec_eval_test"
# CLI commands run inside the suite's process: `workbench import` must not lower its priority
# (tests/test_priority.py checks the default with `os.nice` replaced).
os.environ.setdefault("WORKBENCH_IMPORT_PRIORITY", "normal")


@pytest.fixture
def oracle_dir() -> Path:
    """trec_eval's own test files in ../shared; tests that need them skip where it is absent."""
    if not ORACLE.is_dir():
        pytest.skip(f"trec_eval oracle not found at {ORACLE} (../shared is absent)")
    return ORACLE


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database per test.

    SQLite in tmp_path by default. When $WORKBENCH_TEST_DATABASE_URL names a PostgreSQL server
    (the suite's second pass), a new database is created on it for the test and dropped after.
    """
    server = os.environ.get("WORKBENCH_TEST_DATABASE_URL")
    if not server:
        yield f"sqlite:///{tmp_path / 'test.sqlite'}"
        return
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    name = f"wb_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.engine.make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated, empty store."""
    store = open_store(database_url, upgrade=True)
    yield store
    store.dispose()


def _uses_a_store_or_browser(item: pytest.Item) -> bool:
    return "database_url" in getattr(item, "fixturenames", ()) or bool(
        item.get_closest_marker("browser")
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that open a store or a browser are `slow` (`pytest -m "not slow"` is the fast
    loop over the pure core). In the PostgreSQL pass ($WORKBENCH_TEST_STORE_ONLY=1) run only
    tests that use the store."""
    for item in items:
        if _uses_a_store_or_browser(item):
            item.add_marker(pytest.mark.slow)
    if os.environ.get("WORKBENCH_TEST_STORE_ONLY") != "1":
        return
    selected = [item for item in items if "database_url" in getattr(item, "fixturenames", ())]
    deselected = [item for item in items if item not in selected]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
