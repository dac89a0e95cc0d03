"""Login and logout, with throttling of repeated failures per account and address and per
address (`services.login_throttle`); the password page, rate-limited per user. Passwords are
checked and hashed with the app's PASSWORD_HASH_METHOD setting, in the process's low-priority
hashing thread (`password_hashing`): a login beyond PASSWORD_CHECKS_WAITING waiting checks is
answered 503 with Retry-After and the form again (nothing counted against the account)."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, logout_user

from workbench import limits
from workbench.password_hashing import HashingBusy
from workbench.services import users as user_service
from workbench.services.errors import ServiceError
from workbench.services.login_throttle import login_keys
from workbench.web.access import public, signed_in
from workbench.web.db import get_store
from workbench.web.security import CurrentUser, login_throttle, rate_limited, start_session
from workbench.web.settings import current_settings

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Only same-site relative paths are followed after login."""
    if target and target.startswith("/") and not target.startswith("//"):
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("index")


@bp.route("/login", methods=["GET", "POST"])
@public
def login():
    """The login page; a POST logs in. HEAD (which Flask routes here with GET) is a GET: it
    never runs the login, which would skip the CSRF check and count a failure."""
    if request.method != "POST":
        if current_user.is_authenticated:
            return redirect(url_for("index"))
        with get_store().read_session() as session:
            first_run = not user_service.has_active_admin(session)
        return render_template(
            "auth/login.html",
            next=request.args.get("next", ""),
            first_admin=user_service.FIRST_ADMIN_COMMAND if first_run else None,
        )
    username = request.form.get("username", "").strip()[: limits.USERNAME + 1]
    password = request.form.get("password", "")
    limit = current_app.config["LOGIN_MAX_FAILURES"]
    address = request.remote_addr or ""
    keys = login_keys(username, address, limit, limit * current_app.config["LOGIN_IP_FACTOR"])
    throttle = login_throttle()
    wait = throttle.retry_after(keys)
    if wait:
        flash(f"Too many failed logins. Try again in {wait} seconds.", "error")
        page = render_template("auth/login.html", next=request.form.get("next", ""))
        return page, 429, {"Retry-After": str(wait)}
    settings = current_settings()
    with get_store().read_session() as session:
        attempt = user_service.login_attempt(
            session, username, password, hash_method=settings.password_hash_method
        )
    try:
        user = user_service.check_login(
            attempt, password, max_waiting=settings.password_checks_waiting
        )
    except HashingBusy as busy:
        wait = busy.retry_after
        flash(f"Many people are signing in at this moment. Try again in {wait} s.", "error")
        page = render_template("auth/login.html", next=request.form.get("next", ""))
        return page, 503, {"Retry-After": str(wait)}
    if user is None:
        throttle.failed(keys)
        flash("Unknown username or wrong password.", "error")
        return render_template("auth/login.html", next=request.form.get("next", "")), 401
    throttle.succeeded(keys)
    start_session(CurrentUser.of(user))
    return redirect(_safe_next(request.form.get("next")))


@bp.post("/logout")
@signed_in
def logout():
    """End this session and every other session of the user (all browsers, all workers)."""
    with get_store().session() as session:
        user_service.log_out_everywhere(session, current_user.id)
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))


@bp.route("/account/password", methods=["GET", "POST"])
@signed_in
@rate_limited("password")
def change_password():
    """A new password ends every session of the user; this browser is logged in again."""
    if request.method == "POST":
        try:
            with get_store().session() as session:
                user = user_service.change_own_password(
                    session,
                    current_user.id,
                    request.form.get("old", ""),
                    request.form.get("new", ""),
                    hash_method=current_settings().password_hash_method,
                )
        except ServiceError as error:
            flash(str(error), "error")
            return render_template("auth/password.html"), 400
        if user is None:
            flash("The current password is wrong.", "error")
            return render_template("auth/password.html"), 400
        start_session(CurrentUser.of(user))
        flash("Password changed; your other sessions have ended.", "info")
        return redirect(url_for("index"))
    return render_template("auth/password.html")
