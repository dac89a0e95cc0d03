"""Apply Alembic migrations programmatically (the schema changes only through them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config

from workbench.paths import alembic_ini, resource_dir

if TYPE_CHECKING:
    from workbench.store.db import Store


def alembic_config(store: Store) -> Config:
    config = Config(str(alembic_ini()))
    config.set_main_option("script_location", str(resource_dir("migrations")))
    config.attributes["engine"] = store.engine
    return config


def upgrade(store: Store, revision: str = "head") -> None:
    command.upgrade(alembic_config(store), revision)


def current_revision(store: Store) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with store.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
