"""Accounts: create, authenticate, change role or password, and API tokens.

Passwords are hashed with werkzeug.security, by the method the caller passes (the app's
setting PASSWORD_HASH_METHOD, the CLI's --password-hash; default scrypt). An API token is
shown once and only its SHA-256 digest is stored (users.api_token_hash), so a token is
looked up by its digest.
Usernames are unique without regard to case: ``users.name_key`` holds the case-folded name.
Each user has a session version (``users.session_version``): a browser session carries the
version it was opened under and ends when the version changes, which logging out, a new
password, deactivation and reactivation do.

The web and the CLI see a user as an `Account` (a frozen copy); the functions taking and
returning `User` rows are for the services and for code holding a session.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import limits, permissions
from workbench.password_hashing import MAX_WAITING, hash_password, password_matches
from workbench.permissions import Permission
from workbench.services.errors import ServiceError, found
from workbench.store.models import User, username_key


def administering() -> list[str]:
    """The roles that administer (the last active holder of one cannot be removed)."""
    return permissions.holders(Permission.ADMINISTER)


FIRST_ADMIN_COMMAND = "workbench user add admin --role admin"
"""What makes the first admin of a new store (it asks for the password): `workbench serve`
prints it, and the login page shows it, while no active admin exists."""


def has_active_admin(session: Session) -> bool:
    """Whether some active user may administer (else nobody can reach the admin pages)."""
    found = session.scalar(
        select(User.id).where(User.role.in_(administering()), User.active.is_(True)).limit(1)
    )
    return found is not None


MIN_PASSWORD_LENGTH = 10
COMMON_PASSWORDS_FILE = Path(__file__).with_name("common_passwords.txt")
DEFAULT_HASH_METHOD = "scrypt"
"""werkzeug's method for new password hashes unless the caller names another."""


@dataclass(frozen=True)
class Account:
    """A user as the web and the CLI see it: a copy of the row, safe after its session."""

    id: int
    username: str
    role: str
    active: bool
    session_version: int
    has_token: bool
    archived_at: dt.datetime | None = None  # the users page lists the archived apart

    @classmethod
    def of(cls, user: User) -> Account:
        return cls(
            user.id,
            user.username,
            user.role,
            bool(user.active),
            user.session_version or 0,
            user.api_token_hash is not None,
            user.archived_at,
        )


def check_hash_method(method: str) -> str:
    """`method` if werkzeug hashes with it: scrypt[:n:r:p] or pbkdf2[:digest[:iterations]];
    ValueError otherwise."""
    name, *params = method.split(":")
    numbers = all(p.isdecimal() and int(p) > 0 for p in params)
    if name == "scrypt" and len(params) in (0, 3) and numbers:
        return method
    if name == "pbkdf2" and len(params) <= 2:
        digest_ok = not params or params[0] in hashlib.algorithms_guaranteed
        if digest_ok and all(p.isdecimal() and int(p) > 0 for p in params[1:]):
            return method
    raise ValueError(
        f"unknown password hash method {method!r}: expected scrypt[:n:r:p] or "
        "pbkdf2[:digest[:iterations]]"
    )


@functools.cache
def _dummy_hash(method: str) -> str:
    """A valid hash nobody's password matches: unknown users cost as much as wrong passwords."""
    return hash_password(secrets.token_urlsafe(16), method)


def _check_role(role: str) -> str:
    if role not in permissions.ROLES:
        raise ServiceError(f"unknown role {role!r}: expected one of {', '.join(permissions.ROLES)}")
    return role


@functools.cache
def common_passwords() -> frozenset[str]:
    """The shipped list of most used passwords (case-folded), which are refused."""
    lines = COMMON_PASSWORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().casefold() for line in lines if line and line[0] != "#")


def _check_password(password: str, username: str = "") -> str:
    """At least MIN_PASSWORD_LENGTH characters, at most limits.PASSWORD, no NUL, and neither a
    common password, one character repeated, nor the username."""
    if "\x00" in password:
        raise ServiceError("a password cannot contain a NUL character")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServiceError(f"password too short: at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > limits.PASSWORD:
        raise ServiceError(f"password too long: at most {limits.PASSWORD} characters")
    folded = password.casefold()
    if folded in common_passwords() or len(set(folded)) == 1:
        raise ServiceError("this password is among the most common ones: choose another")
    if username and folded == username_key(username):
        raise ServiceError("the password cannot be the username")
    return password


def token_digest(token: str) -> str:
    """The stored form of an API token: hex SHA-256 of the token text."""
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(
    session: Session,
    username: str,
    password: str | None,
    *,
    role: str = "assessor",
    hash_method: str = DEFAULT_HASH_METHOD,
) -> User:
    """A new user; the name is unique without regard to case ('Alice' and 'alice' clash).
    Without a password (None) the account cannot log in in a browser: a script account that
    uses an API token (its hash is of a random secret nobody knows)."""
    username = username.strip()
    if not username or len(username) > limits.USERNAME or not username.isprintable():
        raise ServiceError(f"username must be 1 to {limits.USERNAME} printable characters")
    if _by_name(session, username) is not None:
        raise ServiceError(f"user {username!r} already exists (names ignore case)")
    user = User(
        username=username,
        name_key=username_key(username),
        password_hash=hash_password(
            secrets.token_urlsafe(32) if password is None else _check_password(password, username),
            hash_method,
        ),
        role=_check_role(role),
    )
    session.add(user)
    session.flush()
    return user


def _by_name(session: Session, username: str) -> User | None:
    key = username_key(username)
    if not key or len(key) > limits.USERNAME_KEY or "\x00" in key:
        return None
    return session.scalar(select(User).where(User.name_key == key))


def get_user(session: Session, username: str) -> User:
    """The user of this name (case-insensitive), never looked up as an id; NotFound otherwise."""
    return found(_by_name(session, username), f"no user {username!r}")


def user_by_id(session: Session, user_id: int) -> User:
    """The user with this id; NotFound otherwise."""
    user = session.get(User, user_id) if 0 < user_id <= limits.INT32_MAX else None
    return found(user, f"no user with id {user_id}")


def list_users(session: Session, *, role: str | None = None) -> list[User]:
    query = select(User).order_by(User.username)
    if role is not None:
        query = query.where(User.role == _check_role(role))
    return list(session.scalars(query))


def _candidate(session: Session, username: str, password: str) -> User | None:
    """The user a login of `username` is checked against, None when the name is unknown or
    the password cannot be anyone's (a NUL, or longer than limits.PASSWORD)."""
    valid = "\x00" not in password and len(password) <= limits.PASSWORD
    return _by_name(session, username) if valid else None


def authenticate(
    session: Session,
    username: str,
    password: str,
    *,
    hash_method: str = DEFAULT_HASH_METHOD,
    max_waiting: int = MAX_WAITING,
) -> User | None:
    """The active user whose password matches, else None (an unknown name costs a check
    against a `hash_method` hash, as a wrong password does). The check runs in the process's
    low-priority hashing thread: `password_hashing.HashingBusy` when `max_waiting` checks
    already wait for it."""
    user = _candidate(session, username, password)
    stored = _dummy_hash(hash_method) if user is None else user.password_hash
    if not password_matches(stored, password, max_waiting=max_waiting) or user is None:
        return None
    return user if user.active else None


def set_password(
    session: Session, user: User, password: str, *, hash_method: str = DEFAULT_HASH_METHOD
) -> None:
    """A new password; every open browser session of the user ends."""
    user.password_hash = hash_password(_check_password(password, user.username), hash_method)
    end_sessions(session, user)


def end_sessions(session: Session, user: User) -> None:
    """End every browser session of `user` (logout everywhere): bump the session version."""
    user.session_version = (user.session_version or 0) + 1
    session.flush()


def _keep_an_admin(session: Session, user: User, action: str) -> None:
    """Refuse to `action` the last active admin: nobody could then reach the admin pages."""
    if user.role not in administering() or not user.active:
        return
    others = session.scalar(
        select(func.count())
        .select_from(User)
        .where(User.role.in_(administering()), User.active.is_(True), User.id != user.id)
    )
    if not others:
        raise ServiceError(
            f"{user.username!r} is the last active admin: make another user admin before "
            f"you {action} this one"
        )


def set_role(session: Session, user: User, role: str) -> None:
    """A new role; the last active admin cannot be demoted."""
    if not permissions.role_may(_check_role(role), Permission.ADMINISTER):
        _keep_an_admin(session, user, "demote")
    user.role = role


def set_active(session: Session, user: User, active: bool) -> None:
    """Deactivate or reactivate; either ends the user's browser sessions (a session opened
    before a deactivation does not come back with the reactivation). The last active admin
    cannot be deactivated."""
    if not active:
        _keep_an_admin(session, user, "deactivate")
    if user.active != active:
        user.active = active
        end_sessions(session, user)


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


# ------------------------------------------------------------ accounts (web and CLI)


def accounts(session: Session, *, role: str | None = None) -> list[Account]:
    """Every user (of `role`), by username."""
    return [Account.of(user) for user in list_users(session, role=role)]


def account(session: Session, user_id: int) -> Account:
    """The user with this id; NotFound otherwise."""
    return Account.of(user_by_id(session, user_id))


def session_account(session: Session, user_id: int, version: int) -> Account | None:
    """The user of a browser session opened at session version `version`, if the user is
    active and the version is still theirs; else None (the session has ended)."""
    user = session.get(User, user_id) if 0 < user_id <= limits.INT32_MAX else None
    if user is None or not user.active or user.session_version != version:
        return None
    return Account.of(user)


def account_by_token(session: Session, token: str) -> Account | None:
    """The active user holding this API token, else None."""
    user = user_by_token(session, token)
    return Account.of(user) if user is not None else None


@dataclass(frozen=True)
class LoginAttempt:
    """What a login's password is checked against, read in one short transaction: the
    user's hash (a hash nobody's password matches for an unknown name) and the account the
    login opens (None: unknown or deactivated). The check itself (`check_login`) runs after
    the transaction, so that no transaction waits for the hashing thread."""

    password_hash: str
    account: Account | None


def login_attempt(
    session: Session, username: str, password: str, *, hash_method: str = DEFAULT_HASH_METHOD
) -> LoginAttempt:
    """The attempt of `username` (names longer than limits.USERNAME are not looked up, and
    cost a check as an unknown name does)."""
    user = _candidate(session, username if len(username) <= limits.USERNAME else "", password)
    if user is None:
        return LoginAttempt(_dummy_hash(hash_method), None)
    return LoginAttempt(user.password_hash, Account.of(user) if user.active else None)


def check_login(
    attempt: LoginAttempt, password: str, *, max_waiting: int = MAX_WAITING
) -> Account | None:
    """The attempt's account when `password` matches its hash, else None; the check runs in
    the hashing thread (`password_hashing.HashingBusy` when `max_waiting` checks wait)."""
    matched = password_matches(attempt.password_hash, password, max_waiting=max_waiting)
    return attempt.account if matched else None


def log_out_everywhere(session: Session, user_id: int) -> None:
    """End every browser session of the user (`end_sessions`)."""
    end_sessions(session, user_by_id(session, user_id))


def change_own_password(
    session: Session,
    user_id: int,
    old: str,
    new: str,
    *,
    hash_method: str = DEFAULT_HASH_METHOD,
) -> Account | None:
    """Set the user's password to `new` if `old` is their password (the account, at its new
    session version); None when `old` is wrong. ServiceError for a refused new password."""
    user = user_by_id(session, user_id)
    checked = authenticate(
        session, user.username, old, hash_method=hash_method, max_waiting=sys.maxsize
    )
    if checked is None:
        return None
    set_password(session, user, new, hash_method=hash_method)
    return Account.of(user)
