"""What the web and the CLI hold of the store: opaque handles, never models or queries.

The views and commands open the store and its transactions here and pass the `Session` they
get to service functions, which alone query the store and return frozen dataclasses. This is
the one module through which `workbench.web` and `workbench.cli` reach `workbench.store`
(a test checks that they import neither `workbench.store` nor `sqlalchemy` themselves).
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, configure_mappers

from workbench.store.db import (
    ENV_VAR,
    SQLITE_SYNCHRONOUS_ENV,
    Store,
    default_database_url,
    open_store,
    storage_problem,
)

STORAGE_ERRORS: tuple[type[Exception], ...] = (DBAPIError, OSError)
"""Errors a view maps through `storage_problem` (a read-only or full store) to a 503."""


def prepare_models() -> None:
    """Configure the ORM's mappers now, not at the first query: a process that forks children
    (the report jobs' fork server) does it once for all of them."""
    configure_mappers()


def shown_url(store: Store) -> str:
    """The store's URL as messages show it: without its password."""
    return store.engine.url.render_as_string(hide_password=True)


__all__ = [
    "ENV_VAR",
    "SQLITE_SYNCHRONOUS_ENV",
    "STORAGE_ERRORS",
    "Session",
    "Store",
    "default_database_url",
    "open_store",
    "prepare_models",
    "shown_url",
    "storage_problem",
]
