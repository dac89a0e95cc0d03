"""Helpers of the migration tests: a store taken back to an older revision, with a campaign."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from workbench.store import Store, open_store
from workbench.store.migrate import alembic_config


def store_at(database_url: str, revision: str) -> tuple[Store, Config]:
    """A store upgraded to head and downgraded to `revision` (every downgrade runs on the
    way), and the Alembic config that moves it on."""
    store = open_store(database_url, upgrade=True)
    config = alembic_config(store)
    command.downgrade(config, revision)
    return store, config


def insert_campaign(connection: sa.Connection, campaign_id: int = 1) -> None:
    """A campaign row in the schema of the h_* revisions (with guidelines and
    count_withdrawn)."""
    connection.execute(
        sa.text(
            "INSERT INTO campaigns (id, name, description, relevance_level, created_at,"
            " guidelines, count_withdrawn) VALUES (:id, 'c', '', 1, CURRENT_TIMESTAMP, '', :t)"
        ),
        {"id": campaign_id, "t": True},
    )
