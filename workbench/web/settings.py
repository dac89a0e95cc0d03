"""The web app's settings, in one object.

`create_app` loads every environment variable WORKBENCH_<NAME> into the app config as <NAME>
(Flask's `from_prefixed_env`, values kept as text), lets the config given to `create_app`
override them, and builds `Settings` from the result: each value checked once, at start-up,
with an error naming the variable. The Flask keys derived from it (cookie flags, body limit,
rate limits) are set from `Settings.flask_config()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app

from workbench import limits
from workbench.password_hashing import MAX_WAITING
from workbench.services.users import DEFAULT_HASH_METHOD, check_hash_method

PREFIX = "WORKBENCH"
EXTENSION = "workbench_settings"


def _number(config: Mapping[str, Any], name: str, default: float) -> float:
    value = config.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"${PREFIX}_{name} must be a number; got {value!r}") from None
    if not 0 <= number < 1e9:
        raise ValueError(f"${PREFIX}_{name} must be a number from 0; got {value!r}")
    return number


def _whole(config: Mapping[str, Any], name: str, default: int, *, least: int = 0) -> int:
    number = _number(config, name, default)
    if number < least or number != int(number):
        raise ValueError(
            f"${PREFIX}_{name} must be a whole number from {least}; got {config[name]!r}"
        )
    return int(number)


def _hash_method(config: Mapping[str, Any]) -> str:
    value = str(config.get("PASSWORD_HASH_METHOD") or "").strip()
    try:
        return check_hash_method(value or DEFAULT_HASH_METHOD)
    except ValueError as error:
        raise ValueError(f"${PREFIX}_PASSWORD_HASH_METHOD: {error}") from None


def _flag(config: Mapping[str, Any], name: str) -> bool:
    value = config.get(name)
    return value is True or str(value).strip() == "1"


@dataclass(frozen=True)
class Settings:
    """secure_cookies (SECURE_COOKIES=1: cookies only over HTTPS, and HSTS); session_hours
        (SESSION_HOURS, default 9: a working day); trusted_proxies (TRUSTED_PROXIES, how many
        reverse proxies set X-Forwarded-For; default 0); max_upload_mb (MAX_UPLOAD_MB, default
        512); judge_submits_per_second (JUDGE_SUBMITS_PER_SECOND per assessor and worker after a
        burst of 100; default 10; 0: off); sqlite_synchronous (SQLITE_SYNCHRONOUS: NORMAL or
        FULL, see `store.db.sqlite_synchronous`); password_hash_method (PASSWORD_HASH_METHOD:
        werkzeug's scrypt[:n:r:p] or pbkdf2[:digest[:iterations]] for the passwords this app
        sets and the cost of checking an unknown name; default scrypt); script_queue_ms
        (SCRIPT_QUEUE_MS: behind a trusted proxy, a script's request queued longer is answered 429
        at once, see `web.shedding`; default 0: off); script_concurrency (SCRIPT_CONCURRENCY: how
    many script requests one process serves at once, the next answered 429 at once, see
    `web.shedding`; default 0: off); password_checks_waiting
        (PASSWORD_CHECKS_WAITING: how many logins of one process may wait for its low-priority
        hashing thread before the next is answered 503, see `password_hashing`; default 3)."""

    secure_cookies: bool = False
    session_hours: float = 9.0
    trusted_proxies: int = 0
    max_upload_mb: float = limits.UPLOAD_BODY_BYTES / 2**20
    judge_submits_per_second: float = 10.0
    sqlite_synchronous: str | None = None
    password_hash_method: str = DEFAULT_HASH_METHOD
    script_queue_ms: float = 0.0
    script_concurrency: int = 0
    password_checks_waiting: int = MAX_WAITING

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Settings:
        default = cls()
        synchronous = config.get("SQLITE_SYNCHRONOUS")
        return cls(
            secure_cookies=_flag(config, "SECURE_COOKIES"),
            session_hours=_number(config, "SESSION_HOURS", default.session_hours),
            trusted_proxies=int(_number(config, "TRUSTED_PROXIES", default.trusted_proxies)),
            max_upload_mb=_number(config, "MAX_UPLOAD_MB", default.max_upload_mb),
            judge_submits_per_second=_number(
                config, "JUDGE_SUBMITS_PER_SECOND", default.judge_submits_per_second
            ),
            sqlite_synchronous=str(synchronous) if synchronous else None,
            password_hash_method=_hash_method(config),
            script_queue_ms=_number(config, "SCRIPT_QUEUE_MS", default.script_queue_ms),
            script_concurrency=_whole(config, "SCRIPT_CONCURRENCY", default.script_concurrency),
            password_checks_waiting=_whole(config, "PASSWORD_CHECKS_WAITING", MAX_WAITING, least=1),
        )

    def flask_config(self) -> dict[str, Any]:
        """The Flask and app config keys these settings decide."""
        return {
            "SESSION_COOKIE_SECURE": self.secure_cookies,
            "REMEMBER_COOKIE_SECURE": self.secure_cookies,
            "MAX_CONTENT_LENGTH": int(self.max_upload_mb * 2**20),
            "SESSION_HOURS": self.session_hours,
            "TRUSTED_PROXIES": self.trusted_proxies,
            "RATE_JUDGE": (self.judge_submits_per_second, 100),
            "SCRIPT_QUEUE_MS": self.script_queue_ms,
            "SCRIPT_CONCURRENCY": self.script_concurrency,
        }


def current_settings() -> Settings:
    """The settings of the app handling this request."""
    settings: Settings = current_app.extensions[EXTENSION]
    return settings
