"""Apply Alembic migrations programmatically (the schema changes only through them)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from workbench.paths import alembic_ini, resource_dir
from workbench.store.db import READ_ONLY

if TYPE_CHECKING:
    from workbench.store.db import Store


def _scripts_config() -> Config:
    config = Config(str(alembic_ini()))
    config.set_main_option("script_location", str(resource_dir("migrations")))
    return config


def alembic_config(store: Store) -> Config:
    config = _scripts_config()
    config.attributes["engine"] = store.engine
    return config


@functools.cache
def head_revisions() -> frozenset[str]:
    """The migrations' heads, read once per process (Alembic loads every migration script to
    know them; the scripts do not change while a process runs)."""
    return frozenset(ScriptDirectory.from_config(_scripts_config()).get_heads())


def upgrade(store: Store, revision: str = "head") -> None:
    """Migrate the store to `revision`. A store already at head is left alone after one read
    of its version (no migration environment, no transaction): every process and command opens
    the store with upgrade=True."""
    if revision == "head" and current_revisions(store) == head_revisions():
        return
    command.upgrade(alembic_config(store), revision)


def current_revisions(store: Store) -> frozenset[str]:
    """The revisions the store is at (none before the first migration), read in a read
    transaction: on SQLite it does not wait for, or hold, the write lock."""
    with store.engine.execution_options(**{READ_ONLY: True}).connect() as connection:
        return frozenset(MigrationContext.configure(connection).get_current_heads())


def current_revision(store: Store) -> str | None:
    with store.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
