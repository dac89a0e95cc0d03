"""Accounts: users, failed logins and per-user rate buckets."""

from __future__ import annotations

import datetime as dt
import unicodedata
from typing import Any

from sqlalchemy import Boolean, DateTime, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from workbench import limits
from workbench.store.models.base import Base, utcnow


def username_key(username: str) -> str:
    """The form under which usernames are unique: NFKC-normalised and case-folded, so that
    'Alice' and 'alice' are one name."""
    return unicodedata.normalize("NFKC", username.strip()).casefold()


def _username_key_default(context: Any) -> str:
    return username_key(context.get_current_parameters()["username"])


class User(Base):
    """A person who logs in. role is 'admin' (organiser, may adjudicate) or 'assessor'.

    name_key is the case-folded username (unique: 'Alice' and 'alice' cannot coexist);
    session_version is bumped to end every browser session of the user.
    """

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(limits.USERNAME), unique=True)
    name_key: Mapped[str] = mapped_column(
        String(limits.USERNAME_KEY), unique=True, index=True, default=_username_key_default
    )
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default="assessor")
    api_token_hash: Mapped[str | None] = mapped_column(String(128), unique=True, default=None)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    archived_at: Mapped[dt.datetime | None] = mapped_column(DateTime, default=None)


class LoginFailure(Base):
    """Recent failed logins of one throttling key (a digest of an account and address, or of
    an address), shared by every worker process. last_at is seconds since the epoch."""

    __tablename__ = "login_failures"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    last_at: Mapped[float] = mapped_column(Float, index=True)


class RateBucket(Base):
    """A token bucket of one action and user (`services.rate_limits`, PostgreSQL only; an
    UNLOGGED table there): tokens left at `at` (epoch seconds of the database's clock), and
    whether the last request took one."""

    __tablename__ = "rate_buckets"

    action: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tokens: Mapped[float] = mapped_column(Float)
    granted: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[float] = mapped_column(Float)
