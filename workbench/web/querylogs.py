"""Organisers' query-log pages: import (anonymised), the anonymisation report, click
preferences against the assessors, and runs ranked on clicks beside the assessors' qrels.

Every view is admin-only; forms carry the CSRF token; the anonymisation key is read from the
app config ``QUERYLOG_KEY`` (bytes) or the instance folder (`querylog.load_or_create_key`),
never from the store.  An uploaded log (up to MAX_CONTENT_LENGTH, as other uploads) is saved
to disk and imported by a task in the report jobs' child process, in short transactions and
bounded memory. The JSON API (`querylogs_api`) reads uploads and options with the functions
here.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from workbench import clicks, querylog
from workbench.permissions import Permission
from workbench.services import campaigns as campaign_service
from workbench.services import evaluation_inputs as evaluation_service
from workbench.services import jobs
from workbench.services import querylog_import as log_import
from workbench.services import querylogs as service
from workbench.services.errors import NotFound, ServiceError
from workbench.services.jobs import FAILED
from workbench.services.store_handle import Session, Store
from workbench.trec import TrecFormatError
from workbench.web import report_jobs, uploads
from workbench.web.access import GuardedBlueprint
from workbench.web.db import get_store
from workbench.web.inputs import form_int
from workbench.web.report_jobs import page_job, request_page

bp = GuardedBlueprint("querylogs", __name__, "/querylogs", permission=Permission.ADMINISTER)
BOOTSTRAP_RESAMPLES = 1000  # app config REPORT_BOOTSTRAP_RESAMPLES overrides


def anonymisation_key() -> bytes:
    """The app config's QUERYLOG_KEY (bytes, or hex from $WORKBENCH_QUERYLOG_KEY), else the
    instance folder's key."""
    key = current_app.config.get("QUERYLOG_KEY")
    if isinstance(key, str):
        return bytes.fromhex(key.strip())
    return key if key else querylog.load_or_create_key(current_app.instance_path)


def _count(name: str, default: int) -> int:
    """A positive integer of the request (query string or form)."""
    return form_int(request.values.get(name), name, minimum=1, default=default)


def preference_options() -> service.PreferenceOptions:
    """Preference options from the request (query string or form)."""
    threshold = request.values.get("threshold", "").strip()
    try:
        deviation = float(threshold) if threshold else None
    except ValueError:
        raise ServiceError(f"threshold must be a number, got {threshold[:40]!r}") from None
    return service.PreferenceOptions(
        request.values.get("strategy", clicks.SKIP_ABOVE),
        _count("min_support", service.DEFAULT_MIN_SUPPORT),
        deviation,
    )


def _page_options() -> dict[str, Any]:
    return {
        "strategies": clicks.STRATEGIES,
        "strategy": request.args.get("strategy", clicks.SKIP_ABOVE),
        "min_support": request.args.get("min_support", str(service.DEFAULT_MIN_SUPPORT)),
        "threshold": request.args.get("threshold", ""),
        "qrels": request.args.get("qrels", "final"),
        "measure": request.args.get("measure", "map"),
        "allow_incomplete": request.args.get("allow_incomplete") == "1",
    }


def _report_page(
    campaign_id: int,
    template: str,
    content: Callable[[Session, int], dict[str, Any]] | None = None,
    **context: Any,
) -> str:
    """`template` rendered in one read transaction with the campaign, the qrels it can be
    scored on (``qrels_choices``), what `content` reads from the store, and `context`."""
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        return render_template(
            template,
            campaign=campaign,
            qrels_choices=evaluation_service.qrels_choices(session, campaign),
            **(content(session, campaign_id) if content is not None else {}),
            **context,
        )


# ------------------------------------------------------------------------------- pages


@bp.get("/<int:campaign_id>")
def index(campaign_id: int) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        logs = service.list_query_logs(session, campaign)
        return render_template(
            "querylogs/index.html",
            campaign=campaign,
            logs=logs,
            default_k=querylog.DEFAULT_MIN_USERS,
        )


IMPORT_TASK = "querylog-import"


def queue_import(campaign_id: int) -> tuple[jobs.JobState, str]:
    """Save the uploaded log (and the optional ``mapping`` file) in a task folder (werkzeug
    spools uploads to disk: nothing of the log is held in memory) and queue its import as a
    task (`_import_task`) with the form's ``name``, ``min_users`` and ``format``; the task's
    state after at most REPORT_JOB_WAIT_SECONDS, and the log's name."""
    upload = request.files.get("log")
    if upload is None or not upload.filename:
        raise ServiceError("upload the query log as the multipart field 'log'")
    min_users = _count("min_users", querylog.DEFAULT_MIN_USERS)
    fmt = request.form.get("format") or None
    if fmt is not None and fmt not in querylog.FORMATS:
        raise ServiceError(f"format must be one of {', '.join(querylog.FORMATS)}; got {fmt!r}")
    with get_store().read_session() as session:
        campaign_service.get_campaign(session, campaign_id)  # a missing campaign is a 404
    files = [upload]
    mapping = request.files.get("mapping")
    if mapping is not None and mapping.filename:
        files.append(mapping)
    folder, paths = uploads.saved_for_task(files)
    name = request.form.get("name", "").strip() or paths[0].name
    params = {
        "upload": uuid.uuid4().hex,
        "kind": "query log",
        "folder": str(folder),
        "files": [str(path.relative_to(folder)) for path in paths],
        "name": name,
        "min_users": min_users,
        "format": fmt,
        "instance": current_app.instance_path,
        "done": url_for("querylogs.report", campaign_id=campaign_id, name=name),
    }
    return report_jobs.request(IMPORT_TASK, campaign_id, params), name


def _import_task(
    store: Store, campaign_id: int, params: dict[str, Any], progress: jobs.Progress
) -> bytes:
    """Import a saved log (in the report jobs' child process) in short transactions and in
    bounded memory (`services.querylog_import.import_query_log_in_steps`); its summary as JSON.
    Errors name the uploaded files, not their copies."""
    folder = Path(params["folder"])
    paths = [folder / name for name in params["files"]]
    source = log_import.LogSource(
        paths[0],
        querylog.load_or_create_key(params["instance"]),
        params["min_users"],
        params["format"],
        paths[1] if len(paths) > 1 else None,
        params["name"],
    )
    try:
        summary = log_import.import_query_log_in_steps(
            store, campaign_id, source, progress=progress
        )
    except (ServiceError, TrecFormatError) as error:
        raise ServiceError(uploads.named(str(error), paths)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    shown = {
        "summary": f"Query log {summary.name!r}: {summary.impressions} impressions stored "
        f"({summary.mapped_impressions} on {summary.topics} topics).",
        "warnings": list(summary.warnings),
        "querylog": summary.to_dict(),
    }
    return json.dumps([shown]).encode()


def _abandoned_import(store: Store, campaign_id: int, params: dict[str, Any]) -> None:
    """After the importing process died or was stopped: its saved upload and its rows go."""
    shutil.rmtree(params["folder"], ignore_errors=True)
    log_import.clear_dead_query_log_imports(store, campaign_id)


jobs.register_task(IMPORT_TASK, _import_task, abandoned=_abandoned_import)


@bp.post("/<int:campaign_id>/import")
def import_log(campaign_id: int) -> ResponseReturnValue:
    """Queue the import; the log's report once it is stored, the task's page while it runs,
    the query-log page with the error when it was refused."""
    back = url_for("querylogs.index", campaign_id=campaign_id)
    upload = request.files.get("log")
    if upload is None or not upload.filename:
        flash("Choose a query log to upload.", "error")
        return redirect(back, code=303)
    try:
        state, name = queue_import(campaign_id)
    except ServiceError as error:
        if isinstance(error, NotFound):
            raise
        flash(str(error), "error")
        return redirect(back, code=303)
    done = url_for("querylogs.report", campaign_id=campaign_id, name=name)
    return uploads.outcome(campaign_id, state, done) or redirect(back, code=303)


@bp.get("/<int:campaign_id>/report")
def report(campaign_id: int) -> ResponseReturnValue:
    from workbench.reports.querylogs import anonymisation_table

    def summary(session: Session, campaign_id: int) -> dict[str, Any]:
        campaign = campaign_service.get_campaign(session, campaign_id)
        found = service.query_log_summary(session, campaign, request.args.get("name", ""))
        return {"summary": found, "table": anonymisation_table(found)}

    return _report_page(campaign_id, "querylogs/report.html", summary, **_page_options())


def _click_page(
    session: Session, campaign_id: int, params: dict[str, Any], progress: jobs.Progress
) -> dict[str, Any]:
    """Click agreement (bootstrap interval) and click evaluation: a report job."""
    campaign = campaign_service.get_campaign(session, campaign_id)
    chosen = service.PreferenceOptions(
        params["strategy"], params["min_support"], params["threshold"]
    )
    progress("click agreement with a bootstrap interval")
    compared = service.ClickComparison(
        params["name"], params["qrels"], chosen, params.get("allow_incomplete", False)
    )
    agreement = service.click_agreement(
        session, campaign, compared, n_resamples=params["n_resamples"]
    )
    progress("runs ranked on clicks")
    evaluated = service.click_evaluation(session, campaign, compared, measure=params["measure"])
    return {"agreement": agreement, "evaluation": evaluated}


page_job("click-agreement", _click_page)


def click_request(campaign_id: int, measure: str = "map") -> dict[str, Any]:
    """The click job's parameters; the log must exist (404) and the options parse (400)."""
    name = request.args.get("name", "")
    with get_store().read_session() as session:
        service.get_query_log(session, campaign_service.get_campaign(session, campaign_id), name)
    chosen = preference_options()
    return {
        "name": name,
        "qrels": request.args.get("qrels", "final"),
        "strategy": chosen.strategy,
        "min_support": chosen.min_support,
        "threshold": chosen.deviation_threshold,
        "measure": measure,
        "allow_incomplete": request.args.get("allow_incomplete") == "1",
        "n_resamples": int(
            current_app.config.get("REPORT_BOOTSTRAP_RESAMPLES", BOOTSTRAP_RESAMPLES)
        ),
    }


@bp.get("/<int:campaign_id>/agreement")
def agreement(campaign_id: int) -> ResponseReturnValue:
    """Click preferences against the assessors, and the runs ranked under each (computed by
    a report job: the page shows its progress until the result is ready)."""
    from workbench.reports.querylogs import agreement_table, click_evaluation_table

    name = request.args.get("name", "")
    options = _page_options()
    tables, error, job = [], None, None
    try:
        params = click_request(campaign_id, options["measure"])
    except ServiceError as refused:
        if isinstance(refused, NotFound):
            raise
        error = str(refused)
    else:
        job, page = request_page("click-agreement", campaign_id, params)
        if page is not None and job.fresh:
            tables.append(("click-agreement", agreement_table(page["agreement"])))
            tables.append(("click-evaluation", click_evaluation_table(page["evaluation"])))
        elif job.status == FAILED:
            error = job.error
    return _report_page(
        campaign_id,
        "querylogs/agreement.html",
        name=name,
        tables=tables,
        error=error,
        job=job if job is not None and job.pending else None,
        **options,
    )
