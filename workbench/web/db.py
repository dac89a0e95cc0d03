"""The app's store: opened (and migrated) once per app, shared by every request."""

from __future__ import annotations

from flask import Flask, current_app

from workbench.store.db import Store, default_database_url, open_store

EXTENSION = "workbench_store"


def init_app(app: Flask) -> None:
    """Open the store at DATABASE_URL (default: SQLite in the instance folder), migrated."""
    url = app.config.get("DATABASE_URL") or default_database_url(app.instance_path)
    app.config["DATABASE_URL"] = url
    app.extensions[EXTENSION] = open_store(url, upgrade=True)


def get_store() -> Store:
    return current_app.extensions[EXTENSION]
