"""Fixtures shared by the whole suite."""

from __future__ import annotations

import functools
import gc
import importlib.util
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401  (see the comment at `share_compiled_sql()` below)
import pytest
import sqlalchemy as sa

import tests.bytecode  # first: the package is compiled once, not once per worker
from tests.sql_cache import share_compiled_sql
from tests.url_builders import share_url_builders
from workbench.services import jobs
from workbench.store import Store, open_store

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("WORKBENCH_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle" / "trec_eval_test"
# CLI commands run inside the suite's process: `workbench import` must not lower its priority
# (tests/test_priority.py checks the default with `os.nice` replaced).
os.environ.setdefault("WORKBENCH_IMPORT_PRIORITY", "normal")
FAST_HASH = "pbkdf2:sha256:1000"
"""The password hash method of the tests' apps and users (production keeps scrypt)."""
# and of the CLI's `user add` and the apps a test makes without PASSWORD_HASH_METHOD: scrypt
# takes 0.1 s of CPU a password (tests/web/test_auth_accounts.py checks the scrypt default)
os.environ.setdefault("WORKBENCH_PASSWORD_HASH_METHOD", FAST_HASH)
MEMORY_TEMP = Path("/dev/shm")
MEMORY_TEMP_MIN_FREE = 4 * 2**30
"""The tests' temporary folders (their stores) go to memory where it has 4 GiB free."""


def _temporary_root_in_memory() -> None:
    """Each test's store is a SQLite file in its tmp_path, closed (a checkpoint and an fsync)
    and deleted after it: on the 2-core machine's disk that kept the cores waiting (a web test
    file 28 s instead of 24 s). Unless $PYTEST_DEBUG_TEMPROOT (pytest's temporary root) is
    set, put pytest's temporary folders in /dev/shm (tmpfs) when it has MEMORY_TEMP_MIN_FREE;
    --basetemp (.ci/run) still decides."""
    if os.environ.get("PYTEST_DEBUG_TEMPROOT") or not MEMORY_TEMP.is_dir():
        return
    if not os.access(MEMORY_TEMP, os.W_OK):
        return
    if shutil.disk_usage(MEMORY_TEMP).free >= MEMORY_TEMP_MIN_FREE:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_TEMP)


_temporary_root_in_memory()
if importlib.util.find_spec("hypothesis"):  # the wheel check's venv has pytest only
    import tests.property_examples  # noqa: F401  (loads the Hypothesis profile: CI or dev)
share_url_builders()  # each test's app reuses the URL builders the first one compiled
share_compiled_sql()  # each test's engines reuse the SQL statements compiled before
# matplotlib, imported above as the report jobs' fork server does (web/job_child.py): a report
# built in a test's process draws its figures in a child forked from it
# (`services.forked.compute_apart`), which imported matplotlib itself (about a second of
# CPU, lost with the child) when this process had not
STORE_FIXTURES = {"database_url", "empty_database_url", "world_url", "_migrated_template"}
"""Fixtures that open a store: the tests that use them run again in the PostgreSQL pass (a
fixture built on the migrated template, e.g. a campaign built once per session and copied
for each test, depends on `_migrated_template`)."""


@pytest.fixture
def oracle_dir() -> Path:
    """trec_eval's own test files in ../shared; tests that need them skip where it is absent."""
    if not ORACLE.is_dir():
        pytest.skip(f"trec_eval oracle not found at {ORACLE} (../shared is absent)")
    return ORACLE


@pytest.fixture
def empty_database_url(tmp_path: Path) -> Iterator[str]:
    """A fresh, empty (unmigrated) database per test, for the migration tests.

    SQLite in tmp_path by default. When $WORKBENCH_TEST_DATABASE_URL names a PostgreSQL server
    (the suite's second pass), a new database is created on it for the test and dropped after.
    """
    with _database(tmp_path, template=None) as url:
        yield url


@pytest.fixture
def database_url(tmp_path: Path, _migrated_template: str) -> Iterator[str]:
    """A fresh database per test, already migrated to head: a copy of one migrated template
    per test session (a file copy on SQLite, CREATE DATABASE ... TEMPLATE on PostgreSQL),
    which is the same schema `open_store(url, upgrade=True)` makes, at a fraction of its
    cost. Opening it with upgrade=True finds nothing to do."""
    with _database(tmp_path, template=_migrated_template) as url:
        yield url


@pytest.fixture(scope="session")
def _migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's migrated template: a SQLite file, or a PostgreSQL database name."""
    server = os.environ.get("WORKBENCH_TEST_DATABASE_URL")
    if not server:
        path = tmp_path_factory.mktemp("template") / "migrated.sqlite"
        open_store(f"sqlite:///{path}", upgrade=True).dispose()
        yield str(path)
        return
    name, url = create_database(server, "wb_template")
    open_store(url, upgrade=True).dispose()
    try:
        yield name
    finally:
        drop_database(server, name)


def template_of(url: str) -> str:
    """The `template` argument of `database_copy` that copies the database at `url`: its file
    on SQLite, its name on PostgreSQL (no connection may stay open on it)."""
    database = sa.engine.make_url(url).database
    assert database, url
    return database


@contextmanager
def database_copy(tmp_path: Path, template: str) -> Iterator[str]:
    """A new database in `tmp_path`, a copy of `template` (see `template_of`): a campaign
    built once per session (on a database of `_migrated_template`) gives each test its own."""
    with _database(tmp_path, template=template) as url:
        yield url


@contextmanager
def _database(tmp_path: Path, template: str | None) -> Iterator[str]:
    """A new database: empty, or a copy of `template` (see `_migrated_template`)."""
    server = os.environ.get("WORKBENCH_TEST_DATABASE_URL")
    if not server:
        path = tmp_path / "test.sqlite"
        if template is not None:
            shutil.copyfile(template, path)
            wal = Path(f"{template}-wal")  # a write-ahead log not yet checkpointed, if any
            if wal.exists():
                shutil.copyfile(wal, f"{path}-wal")
        yield f"sqlite:///{path}"
        return
    name, url = create_database(server, "wb_test", template)
    try:
        yield url
    finally:
        drop_database(server, name)


def create_database(server: str, prefix: str, template: str | None = None) -> tuple[str, str]:
    """A new database on the PostgreSQL `server`, named `prefix` and a random suffix, empty or
    a copy of the database `template`: (its name, its URL)."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    copy = f' TEMPLATE "{template}"' if template is not None else ""
    _on_server(server, f'CREATE DATABASE "{name}"{copy}')
    return name, sa.engine.make_url(server).set(database=name).render_as_string(hide_password=False)


def drop_database(server: str, name: str) -> None:
    """DROP DATABASE `name` on the PostgreSQL `server`, after this process's report-job workers
    stop: one polling it meanwhile printed "database ... does not exist" into the pass's log
    (`pytest_runtest_protocol` stops them only after every fixture's teardown)."""
    jobs.stop_workers()
    _on_server(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _on_server(server: str, statement: str) -> None:
    """Run `statement` outside a transaction (CREATE and DROP DATABASE need that)."""
    with _admin_engine(server).connect() as connection:
        connection.exec_driver_sql(statement)


@functools.cache
def _admin_engine(server: str) -> sa.Engine:
    """This process's one connection to the `server` for CREATE and DROP DATABASE, kept: a
    connection each (two a test) started a server process each (tests/store on PostgreSQL:
    610 server processes before, 297 after)."""
    return sa.create_engine(
        server, isolation_level="AUTOCOMMIT", pool_size=1, max_overflow=0, pool_pre_ping=True
    )


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated, empty store."""
    store = open_store(database_url, upgrade=True)
    yield store
    store.dispose()


def _pass_selects(item: pytest.Item) -> bool:
    """Whether the PostgreSQL pass runs `item`: a test that uses the store and is not a browser
    test. A browser test checks what Chromium draws and does; the server code behind it is run
    on PostgreSQL by the pass's other tests. Measured with coverage.py's per-test contexts over
    the whole pass (2026-11-28): of its 33 browser tests, 29 ran no line of `workbench` that the
    other 986 tests did not, and the other four 15 lines between them, none of them SQL
    (formatting, a flash message, a dict of comments, numpy on a query log's run; the
    adaptive form's resume and the adjudication queue's cannot-judge reasons are now also
    tested through the test client, tests/web/test_adaptive_pools.py and
    test_page_services.py). Run alone
    on two workers, those 33 took 337 s of CPU in the kernel's process accounting (Chromium
    234 s), an eighth of CI's."""
    return bool(STORE_FIXTURES & set(getattr(item, "fixturenames", ()))) and (
        item.get_closest_marker("browser") is None
    )


SLOW_TESTS = REPO / "tests" / "slow_tests.txt"


def listed_slow() -> frozenset[str]:
    """The node ids tests/slow_tests.txt lists: the fast loop's costliest tests, measured by
    scripts/slow_tests.py."""
    lines = SLOW_TESTS.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def measured_slow() -> frozenset[str]:
    """`listed_slow`, or none when $WORKBENCH_SLOW_TESTS is 'ignore' (the script measuring)."""
    return frozenset() if os.environ.get("WORKBENCH_SLOW_TESTS") == "ignore" else listed_slow()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests are `slow`, as are the tests marked so (servers and killed processes,
    reference libraries on large inputs) and those tests/slow_tests.txt lists (measured over
    0.5 s each in the fast loop): `pytest -m "not slow"` is the fast loop, the pure
    core and the service and web tests on temporary SQLite. The PostgreSQL pass
    ($WORKBENCH_TEST_STORE_ONLY=1) runs the tests that use the store, browser tests apart
    (`_pass_selects`).

    The `long` tests run first, then the other slow ones (the order is otherwise kept): on
    every core (pytest-xdist) a long browser test collected last kept one worker busy for
    minutes after the other ran out of tests; run first, the short tests fill in around it."""
    measured = measured_slow()
    for item in items:
        if item.get_closest_marker("browser") or item.nodeid in measured:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("WORKBENCH_TEST_STORE_ONLY") == "1":
        selected = [item for item in items if _pass_selects(item)]
        deselected = [item for item in items if item not in selected]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = selected
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(pytest.mark.slow)
    items.sort(
        key=lambda item: (
            item.get_closest_marker("long") is None,
            item.get_closest_marker("slow") is None,
        )
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """After each test (its fixtures torn down and let go), collect its garbage and move what
    outlives it (the modules, the tests, caches) out of the garbage collector's reach
    (`gc.freeze`): without it every automatic full collection went through all the objects
    that imports and earlier tests left, 0.2 s each, 10 s of CPU per worker in a fast loop;
    here each collection sees one test's objects. Frozen objects are still freed when no
    longer referred to; only cycles among them stay.

    First, the report-job workers its apps started are stopped: an idle worker polls its
    store for IDLE_S, and pytest gives the next test of the same name prefix the same
    (deleted) tmp_path, so a worker left running reached the next test's store (an empty
    file SQLite made at that path: "no such table: report_jobs", then a failed login)."""
    yield
    jobs.stop_workers()
    gc.collect()
    gc.freeze()
