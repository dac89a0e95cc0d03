"""Organisers' pages: campaigns, uploads, pools, assignments, progress, downloads, users.

Every view is admin-only. Each change is one store transaction: a refused request or a bad
file (TrecFormatError: file, line, what was expected) rolls back and is shown as a message.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import abort, flash, redirect, render_template, request, send_file, url_for
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import pooling
from workbench.services import assignments as assignment_service
from workbench.services import campaigns as campaign_service
from workbench.services import importing, pools, progress
from workbench.services import users as user_service
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import (
    Assignment,
    Campaign,
    Document,
    Pool,
    QrelsSet,
    Run,
    Topic,
    User,
)
from workbench.trec import TrecFormatError
from workbench.web.db import get_store
from workbench.web.downloads import export_file
from workbench.web.inputs import form_int
from workbench.web.security import admin_blueprint
from workbench.web.uploads import (
    TASK_UPLOADS,
    import_in_background,
    named,
    save_uploads,
    upload_folder,
)

bp = admin_blueprint("admin", __name__, "/admin")
UPLOAD_KINDS = ("topics", "documents", "runs", "qrels")


@contextmanager
def change(done: str | None = None) -> Iterator[Session]:
    """One transaction; ServiceError / TrecFormatError roll back and become an error message."""
    try:
        with get_store().session() as session:
            yield session
    except (ServiceError, TrecFormatError) as error:
        if isinstance(error, NotFound) and request.method == "GET":
            raise
        flash(str(error), "error")
    else:
        if done:
            flash(done, "info")


def campaign_or_404(session: Session, campaign_id: int) -> Campaign:
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        abort(404)
    return campaign


def back_to(endpoint: str, **values: Any):
    return redirect(url_for(endpoint, **values), code=303)


def _count(session: Session, model: Any, campaign_id: int) -> int:
    return session.scalar(select(func.count()).where(model.campaign_id == campaign_id)) or 0


# --- campaigns --------------------------------------------------------------------------


@bp.get("/")
def campaigns():
    with get_store().read_session() as session:
        rows = [
            {
                "campaign": c,
                "topics": _count(session, Topic, c.id),
                "runs": _count(session, Run, c.id),
            }
            for c in campaign_service.list_campaigns(session)
        ]
        return render_template("admin/campaigns.html", rows=rows, default_scale=DEFAULT_SCALE_TEXT)


DEFAULT_SCALE_TEXT = ", ".join(
    f"{value}:{label}:{key}" for value, label, key in campaign_service.DEFAULT_SCALE
)


@bp.post("/campaigns")
def create_campaign():
    form = request.form
    with change() as session:
        level = form_int(form.get("relevance_level"), "relevance level", default=1)
        campaign = campaign_service.create_campaign(
            session,
            form.get("name", ""),
            scale=form.get("scale", "") or DEFAULT_SCALE_TEXT,
            relevance_level=level,
            description=form.get("description", ""),
        )
        flash(f"Campaign {campaign.name!r} created.", "info")
        return back_to("admin.campaign", campaign_id=campaign.id)
    return back_to("admin.campaigns")


@bp.get("/campaigns/<int:campaign_id>")
def campaign(campaign_id: int):
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        counts = {
            "topics": _count(session, Topic, c.id),
            "documents": _count(session, Document, c.id),
            "runs": _count(session, Run, c.id),
            "qrels sets": _count(session, QrelsSet, c.id),
            "pools": _count(session, Pool, c.id),
        }
        runs = list(session.scalars(select(Run).where(Run.campaign_id == c.id).order_by(Run.tag)))
        pool = pools.latest_pool(session, c)
        stats = pools.pool_statistics(session, pool) if pool is not None else None
        without_text = pools.documents_without_text(session, pool) if pool is not None else []
        assessors = user_service.list_users(session)
        return render_template(
            "admin/campaign.html",
            campaign=c,
            counts=counts,
            runs=runs,
            pool=pool,
            stats=stats,
            without_text=without_text,
            strategies=pooling.STRATEGIES,
            fusion_methods=pooling.FUSION_METHODS,
            assessors=assessors,
        )


# --- uploads ----------------------------------------------------------------------------


def _topics(form: Any) -> list[str] | None:
    """The form's topic subset (a 'topics' text of qids, or 'topics' choices); None: all."""
    chosen = [qid for text in form.getlist("topics") for qid in text.replace(",", " ").split()]
    return importing.topic_list(" ".join(chosen)) if chosen else None


def _importer(kind: str, form: Any) -> Callable[[Session, Campaign, list[Any]], Any]:
    if kind == "topics":
        fmt = form.get("format") or None
        return lambda s, c, paths: [importing.import_topics(s, c, p, format=fmt) for p in paths]
    name = form.get("name", "").strip() or None
    return lambda s, c, paths: [importing.import_qrels(s, c, p, name=name) for p in paths]


def _task_options(kind: str, form: Any) -> dict[str, Any]:
    """The import options of a run or document upload (imported by a task)."""
    if kind == "documents":
        return {
            "only_pooled": form.get("only_pooled") == "1",
            "replace": form.get("replace") == "1",
        }
    return {
        "replace": form.get("replace") == "1",
        "group": form.get("group", "").strip(),
        "contributes": form.get("contributes", "1") == "1",
        "split_tags": form.get("split_tags") == "1",
        "topics": _topics(form),
        "skip_unknown_topics": form.get("skip_unknown_topics") == "1",
    }


@bp.post("/campaigns/<int:campaign_id>/upload/<kind>")
def upload(campaign_id: int, kind: str):
    if kind not in UPLOAD_KINDS:
        abort(404)
    files = [f for f in request.files.getlist("files") if f and f.filename]
    if not files:
        flash("Choose at least one file to upload.", "error")
        return back_to("admin.campaign", campaign_id=campaign_id)
    if kind in TASK_UPLOADS:  # large: read and imported outside the request
        shown = import_in_background(campaign_id, kind, files, _task_options(kind, request.form))
        return shown if shown is not None else (campaign(campaign_id), 400)
    run_import = _importer(kind, request.form)
    with upload_folder() as folder:
        paths = save_uploads(files, Path(folder))
        try:
            with get_store().session() as session:
                reports = run_import(session, campaign_or_404(session, campaign_id), paths)
        except (ServiceError, TrecFormatError) as error:
            flash(named(str(error), paths), "error")
            return campaign(campaign_id), 400  # a refused file: the page and its message
        except (EOFError, OSError, zlib.error) as error:  # a corrupt or truncated .gz
            flash(named(f"cannot read the upload: {error}; nothing was imported", paths), "error")
            return campaign(campaign_id), 400
        else:
            for report in reports:
                flash(report.summary(), "info")
                for warning in report.warnings:
                    flash(named(warning, paths), "warning")
    return back_to("admin.campaign", campaign_id=campaign_id)


# --- pools ------------------------------------------------------------------------------


@bp.post("/campaigns/<int:campaign_id>/pools")
def build_pool(campaign_id: int):
    form = request.form
    with change() as session:
        c = campaign_or_404(session, campaign_id)
        strategy = form.get("strategy", "depth")
        params: dict[str, Any] = {}
        if strategy == "fusion":
            params["fusion"] = form.get("fusion", "rrf")
        if strategy == "take" and form.get("fair") == "1":
            params["fair"] = True
        if strategy == "stratified":
            params["strata"] = form.get("strata", "")
        pool = pools.build_pool(
            session,
            c,
            strategy=strategy,
            depth=form_int(form.get("depth"), "depth", minimum=1, default=10),
            budget=form_int(form.get("budget"), "budget", minimum=1),
            runs=form.getlist("runs") or None,
            seed=form_int(form.get("seed"), "seed", minimum=0),
            topics=_topics(form),
            **params,
        )
        flash(f"Pool {pool.id} built ({strategy}).", "info")
    return back_to("admin.campaign", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/pools/<int:pool_id>/extend")
def extend_pool(campaign_id: int, pool_id: int):
    with change() as session:
        pool = session.get(Pool, pool_id)
        if pool is None or pool.campaign_id != campaign_id:
            abort(404)
        added = pools.extend_pool(session, pool, request.form.getlist("runs"))
        flash(f"Pool {pool.id} extended by {added} documents.", "info")
    return back_to("admin.campaign", campaign_id=campaign_id)


# --- assignments ------------------------------------------------------------------------


def _latest_pool(session: Session, c: Campaign) -> Pool:
    pool = pools.latest_pool(session, c)
    if pool is None:
        raise ServiceError("build a pool before assigning topics")
    return pool


@bp.get("/campaigns/<int:campaign_id>/assignments")
def assignments(campaign_id: int):
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        pool = pools.latest_pool(session, c)
        rows = assignment_service.list_assignments(session, c.id)
        done = progress.assignment_progress(session, rows)
        names = {u.id: u.username for u in user_service.list_users(session)}
        sizes = assignment_service.topic_sizes(session, pool) if pool is not None else {}
        users = [u for u in user_service.list_users(session) if u.active]
        return render_template(
            "admin/assignments.html",
            campaign=c,
            pool=pool,
            rows=rows,
            done=done,
            names=names,
            sizes=sizes,
            users=users,
            orders=pooling.PRESENTATION_ORDERS,
        )


def _users_named(session: Session, names: list[str]) -> list[User]:
    return [user_service.get_user(session, name) for name in names]


@bp.post("/campaigns/<int:campaign_id>/assignments/auto")
def auto_assign(campaign_id: int):
    form = request.form
    with change() as session:
        c = campaign_or_404(session, campaign_id)
        chosen = form.getlist("assessors")
        assessors = (
            _users_named(session, chosen)
            if chosen
            else user_service.list_users(session, role="assessor")
        )
        created = assignment_service.auto_assign(
            session,
            _latest_pool(session, c),
            judges_per_topic=form_int(
                form.get("judges_per_topic"), "judges per topic", minimum=1, default=1
            ),
            assessors=assessors,
            order=form.get("order", "random"),
            topics=_topics(form),
        )
        flash(f"{len(created)} assignments created.", "info")
    return back_to("admin.assignments", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/assignments")
def assign(campaign_id: int):
    form = request.form
    with change() as session:
        c = campaign_or_404(session, campaign_id)
        user = user_service.get_user(session, form.get("user", ""))
        pool = _latest_pool(session, c)
        for qid in form.getlist("qids"):
            assignment_service.assign(session, pool, qid, user, order=form.get("order", "random"))
        flash(f"Assigned {len(form.getlist('qids'))} topics to {user.username}.", "info")
    return back_to("admin.assignments", campaign_id=campaign_id)


def _assignment_in(session: Session, campaign_id: int, assignment_id: int) -> Assignment:
    assignment = session.get(Assignment, assignment_id)
    if assignment is None or assignment.campaign_id != campaign_id:
        abort(404)
    return assignment


@bp.post("/campaigns/<int:campaign_id>/assignments/<int:assignment_id>/reassign")
def reassign(campaign_id: int, assignment_id: int):
    with change("Topic reassigned.") as session:
        assignment = _assignment_in(session, campaign_id, assignment_id)
        to_user = user_service.get_user(session, request.form.get("user", ""))
        assignment_service.reassign(session, assignment, to_user)
    return back_to("admin.assignments", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/assignments/<int:assignment_id>/remove")
def unassign(campaign_id: int, assignment_id: int):
    with change("Assignment withdrawn; its judgements stay in the log.") as session:
        assignment_service.unassign(session, _assignment_in(session, campaign_id, assignment_id))
    return back_to("admin.assignments", campaign_id=campaign_id)


# --- progress and downloads -------------------------------------------------------------


@bp.get("/campaigns/<int:campaign_id>/progress")
def campaign_progress(campaign_id: int):
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        report = progress.campaign_progress(session, c.id)
        return render_template("admin/progress.html", campaign=c, report=report)


@bp.get("/campaigns/<int:campaign_id>/download/<kind>")
def download(campaign_id: int, kind: str):
    try:
        content, name = export_file(campaign_id, kind, request.args)
    except ServiceError as error:
        flash(str(error), "error")
        return back_to("admin.campaign", campaign_id=campaign_id)
    return send_file(content, as_attachment=True, download_name=name)


# --- users ------------------------------------------------------------------------------


@bp.get("/users")
def users():
    with get_store().read_session() as session:
        rows = user_service.list_users(session)
    return render_template("admin/users.html", users=rows, roles=user_service.ROLES)


@bp.post("/users")
def add_user():
    form = request.form
    with change() as session:
        user = user_service.create_user(
            session,
            form.get("username", ""),
            form.get("password", ""),
            role=form.get("role", "assessor"),
        )
        flash(f"User {user.username!r} added.", "info")
    return back_to("admin.users")


@bp.post("/users/<int:user_id>")
def update_user(user_id: int):
    """One form per action: role, password, active, token (the token is shown once)."""
    form = request.form
    action = form.get("action")
    token = None
    with change() as session:
        user = session.get(User, user_id)
        if user is None:
            abort(404)
        if action == "role":
            user_service.set_role(session, user, form.get("role", ""))
        elif action == "password":
            user_service.set_password(session, user, form.get("password", ""))
        elif action == "active":
            user_service.set_active(session, user, form.get("active") == "1")
        elif action == "token":
            token = user_service.new_api_token(session, user)
        else:
            raise ServiceError(f"unknown action {action!r}")
        name = user.username
        flash(f"User {name!r} updated ({action}).", "info")
    if token is not None:
        with get_store().read_session() as session:
            rows = user_service.list_users(session)
        return render_template(
            "admin/users.html", users=rows, roles=user_service.ROLES, token=token, token_user=name
        )
    return back_to("admin.users")
