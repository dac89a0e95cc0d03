"""Helpers shared by the command modules: the store of this invocation, error reporting."""

from __future__ import annotations

import click

from workbench.services.store_handle import Store, open_store


def get_store(ctx: click.Context, *, upgrade: bool = True) -> Store:
    """The store named by --db / $WORKBENCH_DATABASE_URL, migrated to head on first use."""
    obj = ctx.find_root().ensure_object(dict)
    store = obj.get("store")
    if store is None:
        store = open_store(obj.get("database_url"), upgrade=upgrade)
        obj["store"] = store
        ctx.call_on_close(store.dispose)
    return store


def fail(message: str) -> None:
    """Print `message` on stderr and exit with status 1."""
    raise click.ClickException(message)
