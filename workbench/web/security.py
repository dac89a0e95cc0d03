"""Login, roles, CSRF and login throttling.

Browser sessions use Flask-Login; scripts send `Authorization: Bearer <token>` and are then
authenticated by token only (the session cookie is ignored) and exempt from CSRF. Every
other state-changing request must carry the CSRF token (form field or X-CSRFToken header).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import LoginManager, UserMixin, current_user, login_required
from flask_wtf.csrf import CSRFError, CSRFProtect

from workbench.services import users as user_service
from workbench.services.errors import NotFound
from workbench.store.models import User
from workbench.web.db import get_store

login_manager = LoginManager()
csrf = CSRFProtect()
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


@dataclass(frozen=True)
class CurrentUser(UserMixin):
    """The logged-in user as the views see it (a detached copy of the row)."""

    id: int
    username: str
    role: str

    @classmethod
    def of(cls, user: User) -> CurrentUser:
        return cls(user.id, user.username, user.role)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


@login_manager.user_loader
def _load_user(user_id: str) -> CurrentUser | None:
    if bearer_token() is not None:
        return None  # token requests never ride on a session cookie
    with get_store().read_session() as session:
        user = session.get(User, int(user_id))
        return CurrentUser.of(user) if user is not None and user.active else None


class TokenCache:
    """API token -> user for `ttl` seconds, at most `size` tokens; thread-safe.

    Saves a transaction per API request. Keys are token digests, never tokens. Only found
    users are kept (a new token works at once); `clear()` on any change of a user or token
    in this process, and a change made elsewhere (another process, the CLI) takes effect
    within `ttl` seconds.
    """

    def __init__(self, ttl: float = 5.0, size: int = 10_000) -> None:
        self.ttl = ttl
        self.size = size
        self._users: dict[str, tuple[float, CurrentUser]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> CurrentUser | None:
        with self._lock:
            found = self._users.get(digest)
            if found is None or found[0] <= time.monotonic():
                self._users.pop(digest, None)
                return None
            return found[1]

    def put(self, digest: str, user: CurrentUser) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._users) >= self.size:
                self._users = {k: v for k, v in self._users.items() if v[0] > now}
                if len(self._users) >= self.size:
                    self._users.clear()
            self._users[digest] = (now + self.ttl, user)

    def clear(self) -> None:
        with self._lock:
            self._users.clear()


def token_cache() -> TokenCache:
    return current_app.extensions["workbench_token_cache"]


@login_manager.request_loader
def _load_user_from_token(_request: Any) -> CurrentUser | None:
    token = bearer_token()
    if not token or "\x00" in token:
        return None
    digest = user_service.token_digest(token)
    cache = token_cache()
    found = cache.get(digest)
    if found is not None:
        return found
    with get_store().read_session() as session:
        user = user_service.user_by_token(session, token)
        found = CurrentUser.of(user) if user is not None else None
    if found is not None:
        cache.put(digest, found)
    return found


def wants_json() -> bool:
    return request.path.startswith("/api/") or bearer_token() is not None


@login_manager.unauthorized_handler
def _unauthorized():
    if wants_json():
        return jsonify(error="authentication required"), 401
    return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))


def _role_required(allowed: tuple[str, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        @login_required
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if current_user.role not in allowed:
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    return decorator


admin_required = _role_required(("admin",))
"""Only organisers (role admin)."""
assessor_required = _role_required(("admin", "assessor"))
"""Anyone who may judge: assessors and admins (an admin may adjudicate)."""


def admin_blueprint(name: str, import_name: str, url_prefix: str) -> Blueprint:
    """A blueprint whose every view requires the admin role (403 for assessors, the login page
    for anonymous users) and shows a missing campaign, run or user as a 404 page."""
    bp = Blueprint(name, import_name, url_prefix=url_prefix)

    @bp.before_request
    @admin_required
    def _admins_only() -> None:
        return None

    @bp.errorhandler(NotFound)
    def _not_found(error: NotFound):
        return render_template("error.html", code=404, message=str(error)), 404

    return bp


class LoginThrottle:
    """Refuse logins for a key (a username, an IP) with `limit` failures in the last `window` s.

    Keys are (key, limit) pairs, so an IP shared by a classroom can get a higher limit than
    a single username.
    """

    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: str, window: float, now: float) -> deque[float]:
        failures = self._failures[key]
        while failures and failures[0] <= now - window:
            failures.popleft()
        return failures

    def retry_after(self, keys: list[tuple[str, int]], window: float) -> int:
        """Seconds until a login for these keys may be tried again (0 = allowed now)."""
        now = time.monotonic()
        with self._lock:
            waits = [
                failures[-limit] + window - now
                for key, limit in keys
                if len(failures := self._recent(key, window, now)) >= limit
            ]
        return int(max(waits)) + 1 if waits else 0

    def failed(self, keys: list[tuple[str, int]]) -> None:
        now = time.monotonic()
        with self._lock:
            for key, _ in keys:
                self._failures[key].append(now)

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)


def _csrf_protect() -> None:
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return
    if request.method in UNSAFE_METHODS and bearer_token() is None:
        csrf.protect()


def _csrf_error(error: CSRFError):
    if wants_json():
        return jsonify(error=f"CSRF check failed: {error.description}"), 400
    flash(
        f"The form expired or was not sent from this site ({error.description}); try again.",
        "error",
    )
    return redirect(request.referrer or url_for("index")), 303


def init_app(app: Flask) -> None:
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.session_protection = "basic"
    csrf.init_app(app)
    app.before_request(_csrf_protect)
    app.register_error_handler(CSRFError, _csrf_error)
    app.extensions["workbench_login_throttle"] = LoginThrottle()
    app.extensions["workbench_token_cache"] = TokenCache(app.config.get("TOKEN_CACHE_SECONDS", 5.0))

    @app.after_request
    def _headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            "script-src 'self'; frame-ancestors 'none'",
        )
        return response


def login_throttle() -> LoginThrottle:
    return current_app.extensions["workbench_login_throttle"]
