"""The app's store: opened (and migrated) once per app, shared by every request."""

from __future__ import annotations

from flask import Flask, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from workbench.services.store_handle import (
    STORAGE_ERRORS,
    Store,
    default_database_url,
    open_store,
    storage_problem,
)
from workbench.web.settings import EXTENSION as SETTINGS

EXTENSION = "workbench_store"


def init_app(app: Flask) -> None:
    """Open the store at DATABASE_URL (default: SQLite in the instance folder), migrated,
    with the settings' SQLite synchronous mode."""
    url = app.config.get("DATABASE_URL") or default_database_url(app.instance_path)
    app.config["DATABASE_URL"] = url
    synchronous = app.extensions[SETTINGS].sqlite_synchronous
    app.extensions[EXTENSION] = open_store(url, upgrade=True, sqlite_synchronous=synchronous)
    for error in STORAGE_ERRORS:
        app.register_error_handler(error, _storage_error)


def _storage_error(error: Exception) -> ResponseReturnValue:
    """A store that cannot be written (read-only, full disk): 503 and one line in the log."""
    problem = storage_problem(error)
    if problem is None:
        raise error
    current_app.logger.error("store unavailable: %s (%s %s)", problem, request.method, request.path)
    message = f"The store cannot be written: {problem}. Nothing was saved; try again later."
    if request.path.startswith("/api/"):
        return jsonify(error=message), 503
    return message, 503, {"Content-Type": "text/plain; charset=utf-8"}


def get_store() -> Store:
    return current_app.extensions[EXTENSION]
