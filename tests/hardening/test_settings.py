"""Settings: WORKBENCH_* environment variables through Flask's from_prefixed_env into one
checked Settings object; the config given to create_app overrides them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from workbench.web import create_app
from workbench.web.db import get_store
from workbench.web.settings import EXTENSION, Settings


def app_of(tmp_path: Path, **config: object):  # type: ignore[no-untyped-def]
    settings = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'settings.sqlite'}",
        "SECRET_KEY": "k",
        "INSTANCE_PATH": str(tmp_path / "instance"),
        **config,
    }
    return create_app(settings)


def test_environment_variables_become_one_settings_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_SESSION_HOURS", "2")
    monkeypatch.setenv("WORKBENCH_MAX_UPLOAD_MB", "1")
    monkeypatch.setenv("WORKBENCH_JUDGE_SUBMITS_PER_SECOND", "0")
    monkeypatch.setenv("WORKBENCH_SECURE_COOKIES", "1")
    monkeypatch.setenv("WORKBENCH_SQLITE_SYNCHRONOUS", "full")
    monkeypatch.setenv("WORKBENCH_PASSWORD_CHECKS_WAITING", "5")
    monkeypatch.delenv("WORKBENCH_PASSWORD_HASH_METHOD")  # the suite's (tests/conftest.py)
    app = app_of(tmp_path, TRUSTED_PROXIES=0)
    settings = app.extensions[EXTENSION]
    assert settings == Settings(
        secure_cookies=True,
        session_hours=2.0,
        trusted_proxies=0,
        max_upload_mb=1.0,
        judge_submits_per_second=0.0,
        sqlite_synchronous="full",
        password_checks_waiting=5,
    )
    assert app.permanent_session_lifetime == timedelta(hours=2)
    assert app.config["MAX_CONTENT_LENGTH"] == 2**20
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert app.config["RATE_JUDGE"] == (0.0, 100)
    with app.app_context():
        store = get_store()
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2
        store.dispose()


def test_the_given_config_overrides_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_SESSION_HOURS", "2")
    app = app_of(tmp_path, SESSION_HOURS=5, MAX_CONTENT_LENGTH=1000)
    assert app.extensions[EXTENSION].session_hours == 5.0
    assert app.permanent_session_lifetime == timedelta(hours=5)
    assert app.config["MAX_CONTENT_LENGTH"] == 1000
    with app.app_context():
        get_store().dispose()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SESSION_HOURS", "nine"),
        ("MAX_UPLOAD_MB", "-1"),
        ("PASSWORD_CHECKS_WAITING", "0"),
        ("PASSWORD_CHECKS_WAITING", "1.5"),
    ],
)
def test_a_bad_setting_stops_the_start_naming_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(f"WORKBENCH_{name}", value)
    with pytest.raises(ValueError, match=f"WORKBENCH_{name}"):
        app_of(tmp_path)
