"""Accounts: create, authenticate, change role or password, and API tokens.

Passwords are hashed with werkzeug.security; an API token is shown once and only its
SHA-256 digest is stored (users.api_token_hash), so a token is looked up by its digest.
"""

from __future__ import annotations

import functools
import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from workbench import limits
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import User

ROLES = ("admin", "assessor")
MIN_PASSWORD_LENGTH = 8
PASSWORD_HASH_METHOD = "scrypt"
"""werkzeug's method for new password hashes (tests may pick a cheaper one)."""


@functools.cache
def _dummy_hash(method: str) -> str:
    """A valid hash nobody's password matches: unknown users cost as much as wrong passwords."""
    return generate_password_hash(secrets.token_urlsafe(16), method=method)


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ServiceError(f"unknown role {role!r}: expected one of {', '.join(ROLES)}")
    return role


def _check_password(password: str) -> str:
    if "\x00" in password:
        raise ServiceError("a password cannot contain a NUL character")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServiceError(f"password too short: at least {MIN_PASSWORD_LENGTH} characters")
    return password


def token_digest(token: str) -> str:
    """The stored form of an API token: hex SHA-256 of the token text."""
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(session: Session, username: str, password: str, *, role: str = "assessor") -> User:
    username = username.strip()
    if not username or len(username) > limits.USERNAME or not username.isprintable():
        raise ServiceError(f"username must be 1 to {limits.USERNAME} printable characters")
    if session.scalar(select(User).where(User.username == username)) is not None:
        raise ServiceError(f"user {username!r} already exists")
    user = User(
        username=username,
        password_hash=generate_password_hash(
            _check_password(password), method=PASSWORD_HASH_METHOD
        ),
        role=_check_role(role),
    )
    session.add(user)
    session.flush()
    return user


def get_user(session: Session, name_or_id: str | int) -> User:
    """The user with this id or username; NotFound otherwise."""
    if "\x00" in str(name_or_id):
        raise NotFound(f"no user {name_or_id!r}")
    if isinstance(name_or_id, int) or str(name_or_id).isdigit():
        user = session.get(User, int(name_or_id))
        if user is not None:
            return user
    user = session.scalar(select(User).where(User.username == str(name_or_id)))
    if user is None:
        raise NotFound(f"no user {name_or_id!r}")
    return user


def list_users(session: Session, *, role: str | None = None) -> list[User]:
    query = select(User).order_by(User.username)
    if role is not None:
        query = query.where(User.role == _check_role(role))
    return list(session.scalars(query))


def authenticate(session: Session, username: str, password: str) -> User | None:
    """The active user whose password matches, else None (same cost for unknown names)."""
    username = username.strip()
    valid = "\x00" not in username and "\x00" not in password
    user = session.scalar(select(User).where(User.username == username)) if valid else None
    if user is None:
        check_password_hash(_dummy_hash(PASSWORD_HASH_METHOD), password)
        return None
    if not check_password_hash(user.password_hash, password) or not user.active:
        return None
    return user


def set_password(session: Session, user: User, password: str) -> None:
    user.password_hash = generate_password_hash(
        _check_password(password), method=PASSWORD_HASH_METHOD
    )


def set_role(session: Session, user: User, role: str) -> None:
    user.role = _check_role(role)


def set_active(session: Session, user: User, active: bool) -> None:
    user.active = active


def new_api_token(session: Session, user: User) -> str:
    """Give `user` a new API token (replacing any old one) and return it; it is not stored."""
    token = secrets.token_urlsafe(32)
    user.api_token_hash = token_digest(token)
    session.flush()
    return token


def user_by_token(session: Session, token: str) -> User | None:
    """The active user holding this API token, else None."""
    if not token or "\x00" in token:
        return None
    user = session.scalar(select(User).where(User.api_token_hash == token_digest(token)))
    return user if user is not None and user.active else None
