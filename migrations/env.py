"""Alembic environment: runs on the engine the workbench hands over (or the default URL)."""

from __future__ import annotations

from alembic import context

from workbench.store.db import default_database_url, make_engine
from workbench.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations() -> None:
    engine = config.attributes.get("engine") or make_engine(default_database_url())
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations()
