"""Organisers' query-log pages: import (anonymised), the anonymisation report, click
preferences against the assessors, and runs ranked on clicks beside the assessors' qrels.

Every view is admin-only; forms carry the CSRF token; the anonymisation key is read from the
app config ``QUERYLOG_KEY`` (bytes) or the instance folder (`querylog.load_or_create_key`),
never from the store.  The log is parsed and anonymised before the write transaction opens.
The JSON API (`querylogs_api`) reads uploads and options with the functions here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import FileStorage
from werkzeug.utils import secure_filename

from workbench import clicks, querylog
from workbench.services import campaigns as campaign_service
from workbench.services import evaluation_inputs as evaluation_service
from workbench.services import querylogs as service
from workbench.services.errors import NotFound, ServiceError
from workbench.services.jobs import FAILED
from workbench.services.store_handle import Session
from workbench.trec import TrecFormatError
from workbench.web.db import get_store
from workbench.web.inputs import form_int
from workbench.web.report_jobs import page_job, request_page
from workbench.web.security import admin_blueprint

bp = admin_blueprint("querylogs", __name__, "/querylogs")
BOOTSTRAP_RESAMPLES = 1000  # app config REPORT_BOOTSTRAP_RESAMPLES overrides


def anonymisation_key() -> bytes:
    key = current_app.config.get("QUERYLOG_KEY")
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
    content: Callable[[Session, Any], dict[str, Any]] | None = None,
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
            **(content(session, campaign) if content is not None else {}),
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


def prepared_upload(upload: FileStorage) -> service.PreparedLog:
    """The uploaded log (and the optional ``mapping`` file) saved in a temporary folder under
    their own names, read and anonymised with the form's ``min_users`` and ``format``.  A file
    that cannot be read is a :class:`ServiceError` naming the uploaded file, not its copy."""
    mapping_upload = request.files.get("mapping")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (secure_filename(upload.filename or "") or "log")
        upload.save(path)
        mapping = None
        if mapping_upload is not None and mapping_upload.filename:
            mapping = (
                Path(folder)
                / "mapping"
                / (secure_filename(mapping_upload.filename) or "mapping.tsv")
            )
            mapping.parent.mkdir()
            mapping_upload.save(mapping)
        try:
            return service.prepare_query_log(
                path,
                key=anonymisation_key(),
                min_users=_count("min_users", querylog.DEFAULT_MIN_USERS),
                format=request.form.get("format") or None,
                mapping=mapping,
            )
        except TrecFormatError as error:
            message = str(error).replace(str(path), path.name)
            if mapping is not None:
                message = message.replace(str(mapping), mapping.name)
            raise ServiceError(message) from None


@bp.post("/<int:campaign_id>/import")
def import_log(campaign_id: int) -> ResponseReturnValue:
    upload = request.files.get("log")
    if upload is None or not upload.filename:
        flash("Choose a query log to upload.", "error")
        return redirect(url_for("querylogs.index", campaign_id=campaign_id), code=303)
    try:
        prepared = prepared_upload(upload)
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            summary = service.store_query_log(
                session, campaign, prepared, name=request.form.get("name", "").strip() or None
            )
    except ServiceError as error:
        if isinstance(error, NotFound):
            raise
        flash(str(error), "error")
        return redirect(url_for("querylogs.index", campaign_id=campaign_id), code=303)
    flash(
        f"Query log {summary.name!r}: {summary.impressions} impressions stored "
        f"({summary.mapped_impressions} on {summary.topics} topics).",
        "info",
    )
    for warning in summary.warnings:
        flash(warning, "warning")
    return redirect(
        url_for("querylogs.report", campaign_id=campaign_id, name=summary.name), code=303
    )


@bp.get("/<int:campaign_id>/report")
def report(campaign_id: int) -> ResponseReturnValue:
    from workbench.reports.querylogs import anonymisation_table

    def summary(session: Session, campaign: Any) -> dict[str, Any]:
        found = service.query_log_summary(session, campaign, request.args.get("name", ""))
        return {"summary": found, "table": anonymisation_table(found)}

    return _report_page(campaign_id, "querylogs/report.html", summary, **_page_options())


def _click_page(
    session: Any, campaign: Any, params: dict[str, Any], progress: Any
) -> dict[str, Any]:
    """Click agreement (bootstrap interval) and click evaluation: a report job."""
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
