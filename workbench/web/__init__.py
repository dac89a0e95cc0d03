"""The web application: `create_app(config)` builds a Flask app over one store.

Blueprints: auth (login), assess (assessors' topics and judging page), admin (campaigns,
uploads, pools, assignments, progress, downloads, users), api (/api/v1 JSON), and the
reports blueprint (agreement, evaluation; adjudication's views, on it, in web.adjudication).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from types import CodeType
from typing import Any

from flask import Flask, redirect, url_for
from flask_login import current_user
from jinja2.bccache import Bucket, BytecodeCache

from workbench import limits
from workbench.paths import resource_dir
from workbench.permissions import Permission
from workbench.web.settings import EXTENSION as SETTINGS
from workbench.web.settings import PREFIX, Settings

SECRET_KEY_ENV = "WORKBENCH_SECRET_KEY"
INSTANCE_ENV = "WORKBENCH_INSTANCE_PATH"
"""The instance folder of `workbench.web.wsgi:app` (the secret key, the default SQLite file)."""


class SharedTemplateCode(BytecodeCache):
    """The compiled templates of this process's apps (all made by `create_app`, with one Jinja
    configuration): an app made after the first renders its pages without compiling their
    templates again. Jinja checks each template's source checksum: an edited one is compiled
    anew. Code objects are immutable, so apps in several threads share them safely."""

    def __init__(self) -> None:
        self._code: dict[str, tuple[str, CodeType]] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        found = self._code.get(bucket.key)
        if found is not None and found[0] == bucket.checksum:
            bucket.code = found[1]

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            self._code[bucket.key] = (bucket.checksum, bucket.code)


TEMPLATE_CODE = SharedTemplateCode()


def secret_key(instance_path: str) -> str:
    """$WORKBENCH_SECRET_KEY, else a random key generated once into the instance folder."""
    key = os.environ.get(SECRET_KEY_ENV)
    if key:
        return key
    path = Path(instance_path) / "secret_key"
    if path.is_file():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    path.touch(mode=0o600)
    path.write_text(key)
    return key


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The app over the store at DATABASE_URL; INSTANCE_PATH (optional) is the folder for the
    generated secret key and the default SQLite file."""
    config = dict(config or {})
    app = Flask(
        __name__,
        instance_path=config.pop("INSTANCE_PATH", None),
        template_folder=str(resource_dir("templates")),
        static_folder=str(resource_dir("static")),
        instance_relative_config=True,
    )
    app.jinja_options = {**app.jinja_options, "bytecode_cache": TEMPLATE_CODE}
    # WORKBENCH_<NAME> -> config <NAME> (text), then the given config: one Settings object
    app.config.from_prefixed_env(PREFIX, loads=str)
    settings = Settings.of({**app.config, **config})
    app.extensions[SETTINGS] = settings
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        WTF_CSRF_CHECK_DEFAULT=False,
        WTF_CSRF_TIME_LIMIT=None,
        API_MAX_BYTES=limits.API_BODY_BYTES,
        FORM_MAX_BYTES=limits.FORM_BODY_BYTES,
        LOGIN_MAX_FAILURES=5,
        LOGIN_LOCKOUT_SECONDS=300,
        LOGIN_MAX_WAIT_SECONDS=3600,
        LOGIN_IP_FACTOR=4,
        RATE_PASSWORD=(5 / 60, 5),
        JUDGE_IDLE_SECONDS=60,
        JUDGE_BREAK_MINUTES=50,
        **settings.flask_config(),
    )
    app.config.update(config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key(app.instance_path)

    from workbench.web import (
        access,
        adaptive,
        adjudication,
        admin,
        api,
        assess,
        auth,
        browse,
        db,
        errors,
        judging_api,
        machine,
        practice,
        quality,
        querylogs,
        querylogs_api,
        report_jobs,
        reports,
        routing_api,
        security,
        uploads,
    )

    db.init_app(app)
    report_jobs.init_app(app)
    security.init_app(app)
    access.init_app(app)
    errors.register_error_handlers(app)
    app.register_blueprint(auth.bp)
    app.register_blueprint(assess.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(api.bp)
    assert adjudication.bp is reports.bp  # the adjudication views are on the reports blueprint
    app.register_blueprint(reports.bp)
    app.register_blueprint(adaptive.bp)  # its JSON routes are on api.bp
    assert judging_api.bp is api.bp  # its routes are on api.bp too
    app.register_blueprint(browse.bp)
    app.register_blueprint(querylogs.bp)
    app.register_blueprint(querylogs_api.api)
    app.register_blueprint(uploads.bp)
    app.register_blueprint(machine.bp)
    app.register_blueprint(quality.bp)
    app.register_blueprint(practice.bp)
    app.register_blueprint(routing_api.api)

    @app.get("/")
    @access.public
    def index():
        if not current_user.is_authenticated:
            return redirect(url_for("auth.login"))
        if access.may(Permission.ADMINISTER):
            return redirect(url_for("admin.campaigns"))
        return redirect(url_for("assess.topics"))

    return app
