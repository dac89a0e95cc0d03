"""Login and logout, with throttling of repeated failures per username and per IP."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from workbench.services import users as user_service
from workbench.services.errors import ServiceError
from workbench.web.db import get_store
from workbench.web.security import CurrentUser, login_throttle

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Only same-site relative paths are followed after login."""
    if target and target.startswith("/") and not target.startswith("//"):
        parts = urlsplit(target)
        if not parts.scheme and not parts.netloc:
            return target
    return url_for("index")


@bp.route("/login", methods=["GET", "POST"])
def login():
    if request.method == "GET":
        if current_user.is_authenticated:
            return redirect(url_for("index"))
        return render_template("auth/login.html", next=request.args.get("next", ""))
    username = request.form.get("username", "").strip()
    password = request.form.get("password", "")
    limit = current_app.config["LOGIN_MAX_FAILURES"]
    keys = [
        (f"user:{username.lower()}", limit),
        (f"ip:{request.remote_addr}", limit * current_app.config["LOGIN_IP_FACTOR"]),
    ]
    throttle = login_throttle()
    wait = throttle.retry_after(keys, current_app.config["LOGIN_LOCKOUT_SECONDS"])
    if wait:
        flash(f"Too many failed logins. Try again in {wait} seconds.", "error")
        page = render_template("auth/login.html", next=request.form.get("next", ""))
        return page, 429, {"Retry-After": str(wait)}
    with get_store().session() as session:
        user = user_service.authenticate(session, username, password)
        current = CurrentUser.of(user) if user is not None else None
    if current is None:
        throttle.failed(keys)
        flash("Unknown username or wrong password.", "error")
        return render_template("auth/login.html", next=request.form.get("next", "")), 401
    throttle.succeeded(keys[0][0])
    login_user(current)
    return redirect(_safe_next(request.form.get("next")))


@bp.post("/logout")
@login_required
def logout():
    logout_user()
    flash("You are logged out.", "info")
    return redirect(url_for("auth.login"))


@bp.route("/account/password", methods=["GET", "POST"])
@login_required
def change_password():
    if request.method == "POST":
        with get_store().session() as session:
            user = user_service.get_user(session, current_user.id)
            if (
                user_service.authenticate(session, user.username, request.form.get("old", ""))
                is None
            ):
                flash("The current password is wrong.", "error")
                return render_template("auth/password.html"), 400
            try:
                user_service.set_password(session, user, request.form.get("new", ""))
            except ServiceError as error:
                flash(str(error), "error")
                return render_template("auth/password.html"), 400
        flash("Password changed.", "info")
        return redirect(url_for("index"))
    return render_template("auth/password.html")
