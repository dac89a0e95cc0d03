"""Organisers' pages: campaigns, uploads, pools, assignments, progress, downloads, users.

Every view is admin-only. Each change is one store transaction: a refused request or a bad
file (TrecFormatError: file, line, what was expected) rolls back and is shown as a message.
"""

from __future__ import annotations

import dataclasses
import functools
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import abort, current_app, flash, redirect, render_template, request, send_file, url_for
from markupsafe import Markup
from werkzeug.datastructures import MultiDict

from workbench import judging_modes, permissions, pooling, presentation, routing
from workbench.permissions import Permission
from workbench.services import (
    archive,
    campaign_pages,
    exports,
    pools,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services import assignments as assignment_service
from workbench.services import campaigns as campaign_service
from workbench.services import efficiency as efficiency_service
from workbench.services import routing as routing_service
from workbench.services import users as user_service
from workbench.services.errors import NotFound, ServiceError
from workbench.services.scope import parse_pools, pool_scope, pool_to_assign
from workbench.services.store_handle import STORAGE_ERRORS, Session, storage_problem
from workbench.trec import TrecFormatError
from workbench.web.access import GuardedBlueprint
from workbench.web.admin_figures import figures
from workbench.web.db import get_store
from workbench.web.downloads import export_file
from workbench.web.errors import not_found_as_404, or_404
from workbench.web.inputs import form_int
from workbench.web.settings import current_settings
from workbench.web.uploads import (
    TASK_UPLOADS,
    import_in_background,
    named,
    save_uploads,
    upload_folder,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

bp = GuardedBlueprint("admin", __name__, "/admin", permission=Permission.ADMINISTER)
UPLOAD_KINDS = ("topics", "documents", "runs", "qrels", "efficiency")


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


campaign_or_404 = not_found_as_404(campaign_service.get_campaign)
"""The campaign (a store object to pass to services, never to a template); 404 if none."""
writable_campaign = not_found_as_404(archive.writable_campaign)
"""The campaign to change: 404 if there is none, refused if it is archived."""


def back_to(endpoint: str, **values: Any):
    return redirect(url_for(endpoint, **values), code=303)


# --- campaigns --------------------------------------------------------------------------


@bp.get("/")
def campaigns():
    with get_store().read_session() as session:
        rows = campaign_service.campaign_rows(session)
        archived = campaign_service.campaign_infos(session, archived=True)
    return render_template(
        "admin/campaigns.html", rows=rows, archived=archived, default_scale=DEFAULT_SCALE_TEXT
    )


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
    """The campaign's data, its pools (the one chosen by ?pool=N, else the latest, shown in
    full) and its downloads."""
    number = form_int(request.args.get("pool"), "pool", minimum=1)
    with get_store().read_session() as session:
        page = or_404(campaign_pages.campaign_page, session, campaign_id, number)
    if page.unkept is not None:
        _keep_statistics(page)
    shown = figures("campaign-figures", campaign_id, {"pool": number})
    computed = shown.figures
    documents = computed.documents if computed else None  # None: not computed yet
    # the shown pool's sizes, unless the figures shown are of another pool (kept ones)
    this_pool = computed is not None and computed.pool_id == (page.pool.id if page.pool else None)
    return render_template(
        "admin/campaign.html",
        **{
            **page_context(page),
            "counts": {"topics": page.counts["topics"], "documents": documents, **page.counts},
        },
        figures=shown,
        qrels_status=computed.qrels_status if computed else "",
        assessors=computed.assessors if computed else (),
        pool_documents=computed.pool_documents if computed else {},
        sizes=computed.sizes if computed and this_pool else None,
        without_text=computed.without_text if computed and this_pool else (),
        growth_plot=_growth_plot(page.stats["growth_by_depth"]) if page.stats else None,
        strategies=pooling.STRATEGIES,
        strategy_fields=pooling.option_fields(),
        exports=exports.EXPORTS.values(),
        judging_modes=judging_modes.JUDGING_MODES,
    )


def _keep_statistics(page: campaign_pages.CampaignPage) -> None:
    """Keep the pool statistics the page computed; a store that cannot be written (read-only,
    full disk) only means they are computed again next time: the page is still shown."""
    try:
        with get_store().session() as session:
            campaign_pages.keep_statistics(session, page)
    except STORAGE_ERRORS as error:
        problem = storage_problem(error)
        if problem is None:
            raise
        current_app.logger.warning("pool statistics not kept: %s", problem)


def page_context(page: DataclassInstance) -> dict[str, Any]:
    """A page dataclass's fields as the template's variables (shallow: nested dataclasses
    stay objects)."""
    return {field.name: getattr(page, field.name) for field in dataclasses.fields(page)}


def _growth_plot(growth: list[int]) -> str:
    """The pool size at depths 1..D as an SVG image (data: URL)."""
    return _growth_svg(tuple(growth))


@functools.lru_cache(maxsize=64)
def _growth_svg(growth: tuple[int, ...]) -> str:
    """Drawn once per pool shape and server process: drawing takes about 0.2 s of CPU in the
    process that also answers the assessors' judgements."""
    from workbench.reports import plots
    from workbench.web.images import svg_image

    depths = list(range(1, len(growth) + 1))
    return svg_image(
        plots.curves(
            {"pooled documents": (depths, list(growth))},
            xlabel="Depth",
            ylabel="Pooled documents (all topics)",
            title="Pool size by depth",
        )
    )


@bp.post("/campaigns/<int:campaign_id>/withdrawn")
def set_count_withdrawn(campaign_id: int):
    count = request.form.get("count_withdrawn") == "1"
    done = f"Judgements of withdrawn assignments {'count' if count else 'no longer count'}."
    with change(done) as session:
        campaign_service.set_count_withdrawn(writable_campaign(session, campaign_id), count)
    return back_to("admin.campaign", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/judging")
def set_judging(campaign_id: int):
    """The judging mode with its options (fields MODE-OPTION) and whether assessors mark
    evidence passages."""
    form = request.form
    mode = form.get("mode", "")
    declared = judging_modes.JUDGING_MODES.get(mode)
    options = {o.name: form.get(f"{mode}-{o.name}") for o in declared.options} if declared else {}
    with change() as session:
        campaign = writable_campaign(session, campaign_id)
        campaign_service.set_judging(
            session, campaign, mode=mode, options=options, evidence=form.get("evidence") == "1"
        )
        flash(f"Judging: {campaign_service.campaign_info(campaign).judging()}.", "info")
    return back_to("admin.campaign", campaign_id=campaign_id)


# --- uploads ----------------------------------------------------------------------------


def chosen_topics(form: MultiDict[str, str]) -> list[str] | None:
    """The form's topic subset (a 'topics' text of qids, or 'topics' choices); None: all."""
    chosen = [qid for text in form.getlist("topics") for qid in text.replace(",", " ").split()]
    return run_imports.topic_list(" ".join(chosen)) if chosen else None


def _importer(kind: str, form: MultiDict[str, str]) -> Callable[[Session, Any, list[Any]], Any]:
    if kind == "topics":
        fmt = form.get("format") or None
        return lambda s, c, paths: [topic_imports.import_topics(s, c, p, format=fmt) for p in paths]
    if kind == "efficiency":
        replace = form.get("replace") == "1"
        return lambda s, c, paths: [
            efficiency_service.import_efficiency(s, c, p, replace=replace) for p in paths
        ]
    name = form.get("name", "").strip() or None
    return lambda s, c, paths: [qrels_imports.import_qrels(s, c, p, name=name) for p in paths]


def _task_options(kind: str, form: MultiDict[str, str]) -> dict[str, Any]:
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
        "topics": chosen_topics(form),
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
    try:
        with get_store().read_session() as session:
            archive.refuse_if_archived(campaign_or_404(session, campaign_id))
    except ServiceError as error:
        flash(str(error), "error")
        return back_to("admin.campaign", campaign_id=campaign_id)
    if kind in TASK_UPLOADS:  # large: read and imported outside the request
        shown = import_in_background(campaign_id, kind, files, _task_options(kind, request.form))
        return shown if shown is not None else (campaign(campaign_id), 400)
    run_import = _importer(kind, request.form)
    with upload_folder() as folder:
        paths = save_uploads(files, Path(folder))
        try:
            # qrels are read and checked before the write transaction, which only writes
            sources: list[Any] = qrels_imports.prepare_qrels(paths) if kind == "qrels" else paths
            with get_store().session() as session:
                reports = run_import(session, writable_campaign(session, campaign_id), sources)
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
    """A pool by any registered strategy; its parameters are the form fields generated from
    `pooling.option_fields()`."""
    form = request.form
    values = {field.name: form.get(field.name) for field in pooling.option_fields()}
    with change() as session:
        c = writable_campaign(session, campaign_id)
        strategy = form.get("strategy", "depth")
        pool = pools.build_pool(
            session,
            c,
            strategy=strategy,
            name=form.get("name", ""),
            runs=form.getlist("runs") or None,
            seed=form_int(form.get("seed"), "seed", minimum=0),
            topics=chosen_topics(form),
            **values,
        )
        flash(f"Pool {pool.number} built ({strategy}): {pools.describe_parameters(pool)}.", "info")
        return back_to("admin.campaign", campaign_id=campaign_id, pool=pool.number)
    return back_to("admin.campaign", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/pools/<int:number>/extend")
def extend_pool(campaign_id: int, number: int):
    with change() as session:
        c = writable_campaign(session, campaign_id)
        pool = or_404(pools.get_pool, session, c, form_int(str(number), "pool", minimum=1))
        added = pools.extend_pool(session, pool, request.form.getlist("runs"))
        documents = "document" if added == 1 else "documents"
        flash(f"Pool {pool.number} extended by {added} {documents}.", "info")
    return back_to("admin.campaign", campaign_id=campaign_id, pool=number)


# --- assignments ------------------------------------------------------------------------


@bp.get("/campaigns/<int:campaign_id>/assignments")
def assignments(campaign_id: int):
    number = form_int(request.args.get("pool"), "pool", minimum=1)
    with get_store().read_session() as session:
        page = or_404(campaign_pages.assignments_page, session, campaign_id, number)
        routed_by, described = (
            routing_service.pool_policy(session, page.pool.id) if page.pool else (None, "")
        )
    shown = figures("assignment-figures", campaign_id)
    return render_template(
        "admin/assignments.html",
        figures=shown,
        reassign_options=_reassign_options(page),
        done=shown.figures.done if shown.figures else {},
        routed_by=routed_by,
        routing_described=described,
        **page_context(page),
        numbers=page.numbers,
        orders=presentation.PRESENTATION_ORDERS,
        policies=routing.POLICIES,
        policy_fields=routing.option_fields(),
    )


def _reassign_options(page: campaign_pages.AssignmentsPage) -> dict[int, Markup]:
    """Assessor id -> the <option>s of every other active user, made once per assessor: a
    TREC-size page has 750 rows of 75 options each, escaped one by one in the template 0.7 s."""
    options = [
        (u.id, Markup('<option value="{0}">{0}</option>').format(u.username)) for u in page.users
    ]
    return {
        holder: Markup("").join(option for uid, option in options if uid != holder)
        for holder in {row.user_id for row in page.rows}
    }


@bp.post("/campaigns/<int:campaign_id>/assignments/auto")
def auto_assign(campaign_id: int):
    form = request.form
    with change() as session:
        c = writable_campaign(session, campaign_id)
        result = routing_service.route_pool(
            session,
            c,
            pool_to_assign(session, c, form_int(form.get("pool"), "pool", minimum=1)).number,
            form.get("policy") or routing.DEFAULT_POLICY,
            {f.name: form.get(f.name) for f in routing.option_fields()},
            assessor_names=form.getlist("assessors"),
            order=form.get("order", "random"),
            topics=chosen_topics(form),
        )
        n = result.assignments
        flash(f"{n} {'assignment' if n == 1 else 'assignments'} created.", "info")
        for note in result.notes:
            flash(note, "warning")
    return back_to("admin.assignments", campaign_id=campaign_id, pool=form.get("pool") or None)


@bp.post("/campaigns/<int:campaign_id>/assignments")
def assign(campaign_id: int):
    form = request.form
    with change() as session:
        c = writable_campaign(session, campaign_id)
        if not form.get("user", "").strip() or not form.getlist("qids"):
            raise ServiceError("choose an assessor and at least one topic")
        user = user_service.get_user(session, form.get("user", ""))
        pool = pool_to_assign(session, c, form_int(form.get("pool"), "pool", minimum=1))
        for qid in form.getlist("qids"):
            assignment_service.assign(session, pool, qid, user, order=form.get("order", "random"))
        n = len(form.getlist("qids"))
        flash(f"Assigned {n} {'topic' if n == 1 else 'topics'} to {user.username}.", "info")
    return back_to("admin.assignments", campaign_id=campaign_id, pool=form.get("pool") or None)


_assignment_in = not_found_as_404(assignment_service.assignment_in)
"""The campaign's assignment with this id; 404 otherwise."""


@bp.post("/campaigns/<int:campaign_id>/assignments/<int:assignment_id>/reassign")
def reassign(campaign_id: int, assignment_id: int):
    with change("Topic reassigned.") as session:
        writable_campaign(session, campaign_id)
        assignment = _assignment_in(session, campaign_id, assignment_id)
        name = request.form.get("user", "").strip()
        if not name:
            raise ServiceError("choose the assessor to give the topic to")
        to_user = user_service.get_user(session, name)
        assignment_service.reassign(session, assignment, to_user)
    return back_to("admin.assignments", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/assignments/<int:assignment_id>/remove")
def unassign(campaign_id: int, assignment_id: int):
    with change("Assignment withdrawn; its judgements stay in the log.") as session:
        writable_campaign(session, campaign_id)
        assignment_service.unassign(session, _assignment_in(session, campaign_id, assignment_id))
    return back_to("admin.assignments", campaign_id=campaign_id)


# --- progress and downloads -------------------------------------------------------------


@bp.get("/campaigns/<int:campaign_id>/progress")
def campaign_progress(campaign_id: int):
    numbers = parse_pools(request.args.getlist("pools"))
    with get_store().read_session() as session:
        found = campaign_or_404(session, campaign_id)
        pool_scope(session, found, numbers)  # refuses a pool there is not, before any job
        c = campaign_service.campaign_info(found)
    shown = figures("progress-figures", c.id, {"pools": list(numbers) if numbers else None})
    report = shown.figures.report if shown.figures else None
    chosen = " ".join(map(str, numbers or ()))
    return render_template(
        "admin/progress.html", campaign=c, report=report, figures=shown, pools=chosen
    )


@bp.get("/campaigns/<int:campaign_id>/download/<kind>")
def download(campaign_id: int, kind: str):
    """An export; the qrels form's `source` (final, assessor:NAME) becomes export_file's
    final=1 / assessor=NAME."""
    args = dict(request.args)
    source = args.pop("source", "")
    if source == "final":
        args["final"] = "1"
    elif source.startswith("assessor:"):
        args["assessor"] = source.removeprefix("assessor:")
    try:
        content, name = export_file(campaign_id, kind, args)
    except ServiceError as error:
        flash(str(error), "error")
        return back_to("admin.campaign", campaign_id=campaign_id)
    return send_file(content, as_attachment=True, download_name=name)


# --- archive and delete -----------------------------------------------------------------


def _return_to(obj: archive.Archivable) -> tuple[str, dict[str, Any]]:
    """The page an archive or delete of `obj` returns to."""
    if obj.kind == "campaign":
        return "admin.campaigns", {}
    if obj.kind == "user":
        return "admin.users", {}
    return "admin.campaign", {"campaign_id": obj.campaign_id}


@bp.post("/archive/<kind>/<int:object_id>")
def archive_object(kind: str, object_id: int):
    """Archive (archived=1) or restore (archived=0) a campaign, run, topic, pool or user."""
    archived = request.form.get("archived") == "1"
    target: tuple[str, dict[str, Any]] = ("admin.campaigns", {})
    with change() as session:
        obj = archive.get_object(session, kind, object_id)
        shown = archive.archivable(obj)
        target = _return_to(shown)
        if shown.campaign_id is not None:
            archive.refuse_if_archived(campaign_or_404(session, shown.campaign_id))
        archive.set_archived(session, obj, archived)
        name = shown.name
        flash(f"{name[0].upper()}{name[1:]} {'archived' if archived else 'restored'}.", "info")
    return back_to(target[0], **target[1])


@bp.get("/delete/<kind>/<int:object_id>")
def confirm_delete(kind: str, object_id: int):
    """What depends on the object, and a delete button only when nothing a judgement depends
    on does."""
    with get_store().read_session() as session:
        obj = or_404(archive.get_object, session, kind, object_id)
        shown = archive.archivable(obj)
        found = archive.dependents(session, obj)
    endpoint, values = _return_to(shown)
    return render_template(
        "admin/delete.html",
        kind=kind,
        obj=shown,
        name=shown.name,
        found=found,
        back=url_for(endpoint, **values),
    )


@bp.post("/delete/<kind>/<int:object_id>")
def delete_object(kind: str, object_id: int):
    target: tuple[str, dict[str, Any]] | None = None
    with change() as session:
        obj = archive.get_object(session, kind, object_id)
        shown = archive.archivable(obj)
        target = _return_to(shown)
        name = shown.name
        archive.delete_object(session, obj)
        flash(f"{name[0].upper()}{name[1:]} deleted.", "info")
        return back_to(target[0], **target[1])
    return back_to("admin.confirm_delete", kind=kind, object_id=object_id)


# --- users ------------------------------------------------------------------------------


@bp.get("/users")
def users():
    with get_store().read_session() as session:
        rows = user_service.accounts(session)
    return render_template(
        "admin/users.html",
        users=rows,
        roles=permissions.ROLES,
        min_password=user_service.MIN_PASSWORD_LENGTH,
    )


@bp.post("/users")
def add_user():
    form = request.form
    with change() as session:
        user = user_service.create_user(
            session,
            form.get("username", ""),
            form.get("password", ""),
            role=form.get("role", "assessor"),
            hash_method=current_settings().password_hash_method,
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
        user = or_404(user_service.user_by_id, session, user_id)
        if action == "role":
            user_service.set_role(session, user, form.get("role", ""))
        elif action == "password":
            user_service.set_password(
                session,
                user,
                form.get("password", ""),
                hash_method=current_settings().password_hash_method,
            )
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
            rows = user_service.accounts(session)
        return render_template(
            "admin/users.html",
            users=rows,
            roles=permissions.ROLES,
            min_password=user_service.MIN_PASSWORD_LENGTH,
            token=token,
            token_user=name,
        )
    return back_to("admin.users")
