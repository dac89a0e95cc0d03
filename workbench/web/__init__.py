"""The web application: `create_app(config)` builds a Flask app over one store.

Blueprints: auth (login), assess (assessors' topics and judging page), admin (campaigns,
uploads, pools, assignments, progress, downloads, users), api (/api/v1 JSON), and the
reports blueprint (agreement, adjudication, evaluation).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from flask import Flask, redirect, url_for
from flask_login import current_user

from workbench import limits
from workbench.paths import resource_dir

SECRET_KEY_ENV = "WORKBENCH_SECRET_KEY"
SECURE_COOKIES_ENV = "WORKBENCH_SECURE_COOKIES"
INSTANCE_ENV = "WORKBENCH_INSTANCE_PATH"
"""The instance folder of `workbench.web.wsgi:app` (the secret key, the default SQLite file)."""
SESSION_HOURS_ENV = "WORKBENCH_SESSION_HOURS"
"""How long a browser session lasts after its login, in hours (default 9: a working day)."""
TRUSTED_PROXIES_ENV = "WORKBENCH_TRUSTED_PROXIES"
"""How many reverse proxies in front of the app set X-Forwarded-For (default 0: none)."""
MAX_UPLOAD_ENV = "WORKBENCH_MAX_UPLOAD_MB"
"""The largest upload in MiB (default 512)."""
JUDGE_RATE_ENV = "WORKBENCH_JUDGE_SUBMITS_PER_SECOND"
"""Judgement submits per second and assessor, after a burst of 100 (default 10; 0: off)."""


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        raise ValueError(f"${name} must be a number; got {text!r}") from None
    if not 0 <= value < 1e9:
        raise ValueError(f"${name} must be a number from 0; got {text!r}")
    return value


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
    secure = os.environ.get(SECURE_COOKIES_ENV) == "1"
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=secure,
        REMEMBER_COOKIE_HTTPONLY=True,
        REMEMBER_COOKIE_SAMESITE="Lax",
        REMEMBER_COOKIE_SECURE=secure,
        WTF_CSRF_CHECK_DEFAULT=False,
        WTF_CSRF_TIME_LIMIT=None,
        MAX_CONTENT_LENGTH=int(
            _env_number(MAX_UPLOAD_ENV, limits.UPLOAD_BODY_BYTES / 2**20) * 2**20
        ),
        API_MAX_BYTES=limits.API_BODY_BYTES,
        FORM_MAX_BYTES=limits.FORM_BODY_BYTES,
        SESSION_HOURS=_env_number(SESSION_HOURS_ENV, 9),
        TRUSTED_PROXIES=int(_env_number(TRUSTED_PROXIES_ENV, 0)),
        LOGIN_MAX_FAILURES=5,
        LOGIN_LOCKOUT_SECONDS=300,
        LOGIN_MAX_WAIT_SECONDS=3600,
        LOGIN_IP_FACTOR=4,
        RATE_JUDGE=(_env_number(JUDGE_RATE_ENV, 10), 100),
        RATE_PASSWORD=(5 / 60, 5),
        TOKEN_CACHE_SECONDS=5.0,
        JUDGE_IDLE_SECONDS=60,
        JUDGE_BREAK_MINUTES=50,
    )
    if config:
        app.config.update(config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key(app.instance_path)

    from workbench.web import (
        adaptive,
        admin,
        api,
        assess,
        auth,
        browse,
        db,
        errors,
        querylogs,
        report_jobs,
        reports,
        security,
    )

    db.init_app(app)
    report_jobs.init_app(app)
    security.init_app(app)
    errors.register_error_handlers(app)
    app.register_blueprint(auth.bp)
    app.register_blueprint(assess.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(reports.bp)
    app.register_blueprint(adaptive.bp)  # its JSON routes are on api.bp
    app.register_blueprint(browse.bp)
    app.register_blueprint(querylogs.bp)
    app.register_blueprint(querylogs.api)

    @app.get("/")
    def index():
        if not current_user.is_authenticated:
            return redirect(url_for("auth.login"))
        if current_user.is_admin:
            return redirect(url_for("admin.campaigns"))
        return redirect(url_for("assess.topics"))

    return app
