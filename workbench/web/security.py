"""Login, CSRF, throttling, request limits, error pages and security headers.

Browser sessions use Flask-Login; scripts send `Authorization: Bearer <token>` and are then
authenticated by token only (the session cookie is ignored) and exempt from CSRF. Every
other state-changing request must carry the CSRF token (form field or X-CSRFToken header).

A browser session holds the user's id and session version (`users.session_version`) and the
time of the login: it ends when the version changes (logout, new password, deactivation or
reactivation, on every worker at once since each request reads the user) and
SESSION_HOURS after the login. An API token is looked up at each request: a token replaced
or a user deactivated is refused at once by every worker.
Failed logins are counted in the store (shared by every worker) per account and address and
per address, with a doubling wait (`services.login_throttle`).

Every request's body is read to its end before its answer starts (`BodyDrain`), so that an
answer given before the view reads the body (a 429, 401, 403 or 404) leaves the kept-alive
connection usable; a body too large to discard is answered with `Connection: close`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from functools import wraps
from typing import Any

from flask import (
    Flask,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import LoginManager, UserMixin, current_user, login_user
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import (
    HTTPException,
    InternalServerError,
    MethodNotAllowed,
    TooManyRequests,
)
from werkzeug.middleware.proxy_fix import ProxyFix

from workbench import limits
from workbench.permissions import Permission
from workbench.services import users as user_service
from workbench.services.login_throttle import LoginThrottle
from workbench.services.rate_limits import RateLimiter
from workbench.web.access import may
from workbench.web.db import EXTENSION as STORE
from workbench.web.db import get_store
from workbench.web.inputs import BoundedIntConverter
from workbench.web.shedding import limit_concurrent_scripts, shed_queued_scripts

login_manager = LoginManager()
csrf = CSRFProtect()
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


log = logging.getLogger(__name__)
LOGIN_AT = "_login_at"
"""The session key holding when (epoch seconds) the session's login happened."""


@dataclass(frozen=True)
class CurrentUser(UserMixin):
    """The logged-in user as the views see it (from the service's `Account`)."""

    id: int
    username: str
    role: str
    session_version: int = 0

    @classmethod
    def of(cls, user: user_service.Account) -> CurrentUser:
        return cls(user.id, user.username, user.role, user.session_version)

    def get_id(self) -> str:
        """What the session cookie keeps: 'id.version'."""
        return f"{self.id}.{self.session_version}"


def start_session(user: CurrentUser) -> None:
    """Log `user` in: a fresh session (so a new CSRF token; nothing of the anonymous session
    is kept but its flashed messages) that ends SESSION_HOURS from now."""
    flashes = session.get("_flashes")
    session.clear()
    if flashes:
        session["_flashes"] = flashes
    session.permanent = True
    session[LOGIN_AT] = int(time.time())
    login_user(user)


def bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


@login_manager.user_loader
def _load_user(session_id: str) -> CurrentUser | None:
    """The session's user, if active, still at the session's version, and the session is
    younger than SESSION_HOURS."""
    if bearer_token() is not None:
        return None  # token requests never ride on a session cookie
    user_id, _, version = session_id.partition(".")
    if not (user_id.isdecimal() and version.isdecimal()) or len(user_id) > 10:
        return None
    login_at = session.get(LOGIN_AT)
    lifetime = current_app.permanent_session_lifetime.total_seconds()
    if not isinstance(login_at, int) or time.time() - login_at > lifetime:
        return None
    with get_store().statement_read() as db:
        user = user_service.session_account(db, int(user_id), int(version))
    return CurrentUser.of(user) if user is not None else None


@login_manager.request_loader
def _load_user_from_token(_request: Any) -> CurrentUser | None:
    """The active user holding the bearer token, read at every request (one indexed lookup
    in one statement), so that a new token, a revoked one or a deactivation counts at
    once in every worker process."""
    token = bearer_token()
    if not token or "\x00" in token:
        return None
    with get_store().statement_read() as session:
        user = user_service.account_by_token(session, token)
    return CurrentUser.of(user) if user is not None else None


def wants_json() -> bool:
    return request.path.startswith("/api/") or bearer_token() is not None


@login_manager.unauthorized_handler
def _unauthorized():
    if wants_json():
        return jsonify(error="authentication required"), 401
    return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))


def rate_limited(
    action: str, *, unless: Permission | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Limit a view per logged-in user to config RATE_<ACTION>: (per second, burst); a 429
    with Retry-After beyond it. A rate of 0 turns the limit off; so does holding the
    permission `unless` (Permission.UNPACED: a script's account is not held to the judging
    rate)."""

    def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            rate, burst = current_app.config[f"RATE_{action.upper()}"]
            if (
                rate
                and current_user.is_authenticated
                and request.method in UNSAFE_METHODS
                and not (unless is not None and may(unless))
            ):
                limiter: RateLimiter = current_app.extensions["workbench_rate_limiter"]
                wait = limiter.take(action, current_user.id, rate, burst)
                if wait:
                    error = TooManyRequests(f"too many requests: try again in {math.ceil(wait)} s")
                    error.retry_after = math.ceil(wait)
                    raise error
            return view(*args, **kwargs)

        return wrapped

    return decorator


def _body_limit() -> None:
    """MAX_CONTENT_LENGTH per route: uploads get MAX_CONTENT_LENGTH, the JSON API
    API_MAX_BYTES and every other form FORM_MAX_BYTES (never more than MAX_CONTENT_LENGTH)."""
    config = current_app.config
    largest = config["MAX_CONTENT_LENGTH"]
    if request.endpoint in UPLOAD_ENDPOINTS:
        return
    own = config["API_MAX_BYTES"] if request.path.startswith("/api/") else config["FORM_MAX_BYTES"]
    request.max_content_length = min(own, largest) if largest else own


UPLOAD_ENDPOINTS = {"admin.upload", "querylogs.import_log", "querylogs_api.api_import"}

DRAIN_BYTES = limits.FORM_BODY_BYTES
"""The most of a body left unread by the app that is read and discarded before the answer;
beyond it the connection is closed after the answer."""
DRAIN_CHUNK = 64 * 1024


class _CountedInput:
    """The request body stream (`wsgi.input`), counting what the app reads of it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.read_bytes = 0
        self.ended = False

    def _counted(self, data: bytes, asked: int | None) -> bytes:
        self.read_bytes += len(data)
        if not data and asked != 0:
            self.ended = True
        return data

    def read(self, size: int | None = -1) -> bytes:
        return self._counted(self.stream.read(size), size)

    def readline(self, size: int | None = -1) -> bytes:
        return self._counted(self.stream.readline(size), size)

    def readlines(self, hint: int = -1) -> list[bytes]:
        lines: list[bytes] = self.stream.readlines(hint)
        self._counted(b"".join(lines), hint)
        return lines

    def __iter__(self) -> Any:
        return iter(self.readline, b"")


class BodyDrain:
    """WSGI middleware: when the app answers, the rest of the request body is read and
    discarded, so that the server may keep the connection for the client's next request.

    A server that answers before the body has arrived (a view refusing the request before it
    reads it: a rate limit's 429, a 401, a 403) cannot reuse the connection: the body's bytes
    are still on their way. granian (hyper) then closed the connection after the answer
    without saying so (its head was already sent as kept-alive), and the client's next
    request on that connection was lost ("Remote end closed connection without response").
    At most `limit` unread bytes are discarded; a larger declared body (a refused upload,
    a 413) gets `Connection: close` instead, so that the client opens a new connection."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int = DRAIN_BYTES) -> None:
        self.app = app
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        length = environ.get("CONTENT_LENGTH") or ""
        declared = int(length) if length.isdecimal() else None
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not chunked and not declared:
            return self.app(environ, start_response)
        body = _CountedInput(environ["wsgi.input"])
        environ["wsgi.input"] = body

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if not self._drained(body, declared):
                headers = [(k, v) for k, v in headers if k.lower() != "connection"]
                headers.append(("Connection", "close"))
            return start_response(status, headers, exc_info)

        return self.app(environ, start)

    def _drained(self, body: _CountedInput, declared: int | None) -> bool:
        """Read the rest of the body (at most `limit` bytes); whether it ended."""
        if declared is not None:
            left = declared - body.read_bytes
            if left > self.limit:
                return False
            while left > 0 and not body.ended:
                left -= len(body.read(min(left, DRAIN_CHUNK)))
            return True
        budget = self.limit
        while not body.ended and budget >= 0:
            budget -= len(body.read(DRAIN_CHUNK))
        return body.ended


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


def _error_page(error: HTTPException):
    """Errors as JSON {"error": ...} under /api/ (and for token requests), else the app's own
    error page; 5xx never show the exception."""
    if error.code is None or error.code < 400:
        return error
    if error.code >= 500:
        message = "Something went wrong on the server; the error has been logged."
    else:
        message = error.description or error.name
    headers = {}
    retry = getattr(error, "retry_after", None)
    if retry:
        headers["Retry-After"] = str(retry)
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        headers["Allow"] = ", ".join(error.valid_methods)
    if wants_json():
        return jsonify(error=message), error.code, headers
    page = render_template("error.html", code=error.code, title=error.name, message=message)
    return page, error.code, headers


def _server_error(error: InternalServerError):
    if error.original_exception is not None:
        log.error(
            "unhandled error on %s %s",
            request.method,
            request.path,
            exc_info=error.original_exception,
        )
    return _error_page(error)


CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


def _headers(response):
    """Security headers; no-store on every page but static files (pages show tokens,
    judgements and account forms); HSTS when cookies are secure (served over HTTPS)."""
    headers = response.headers
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("Content-Security-Policy", CSP)
    if request.endpoint != "static":
        headers["Cache-Control"] = "no-store"
    if current_app.config.get("SESSION_COOKIE_SECURE"):
        headers.setdefault("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
    return response


def init_app(app: Flask) -> None:
    """Login, CSRF, limits, error pages and headers; TRUSTED_PROXIES > 0 takes the client
    address (and scheme) from that many proxies' X-Forwarded-For (werkzeug's ProxyFix);
    request bodies left unread are drained before the answer (`BodyDrain`); scripts' requests
    queued too long behind the proxy are shed (`shedding`)."""
    proxies = int(app.config.get("TRUSTED_PROXIES") or 0)
    if proxies > 0:
        # Flask documents wrapping app.wsgi_app; its stubs type it as a method
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies
        )
    app.wsgi_app = BodyDrain(app.wsgi_app)  # type: ignore[method-assign]
    app.permanent_session_lifetime = timedelta(hours=float(app.config["SESSION_HOURS"]))
    app.url_map.converters["int"] = BoundedIntConverter
    app.before_request(_body_limit)
    app.before_request(shed_queued_scripts)
    limit_concurrent_scripts(app)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.session_protection = "basic"
    csrf.init_app(app)
    app.before_request(_csrf_protect)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(HTTPException, _error_page)
    app.register_error_handler(InternalServerError, _server_error)
    app.extensions["workbench_login_throttle"] = LoginThrottle(
        app.extensions[STORE],
        float(app.config["LOGIN_LOCKOUT_SECONDS"]),
        float(app.config["LOGIN_MAX_WAIT_SECONDS"]),
    )
    app.extensions["workbench_rate_limiter"] = RateLimiter(app.extensions[STORE])
    app.after_request(_headers)


def login_throttle() -> LoginThrottle:
    return current_app.extensions["workbench_login_throttle"]
