"""The query-log API under /api/v1/campaigns/<campaign>/querylogs (admins only): list and
import logs, the anonymisation report, click agreement (a report job: 202 until done),
runs ranked on clicks, and the click preferences as a trec_eval prefs file. Refused input is
answered as JSON by the app's one error mapping (`web.errors`, `web.security`)."""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
from flask.typing import ResponseReturnValue

from workbench.json_output import json_safe
from workbench.permissions import Permission
from workbench.services import campaigns as campaign_service
from workbench.services import jobs
from workbench.services import querylogs as service
from workbench.services.errors import NotFound
from workbench.services.jobs import FAILED
from workbench.web import report_jobs
from workbench.web.access import requires
from workbench.web.db import get_store
from workbench.web.querylogs import IMPORT_TASK, click_request, preference_options, queue_import
from workbench.web.report_jobs import request_page

api = Blueprint("querylogs_api", __name__, url_prefix="/api/v1/campaigns")


def _json(value: Any) -> Response:
    return jsonify(json_safe(value))


@api.get("/<campaign_ref>/querylogs")
@requires(Permission.ADMINISTER)
def api_logs(campaign_ref: str) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        logs = service.list_query_logs(session, campaign)
        return _json({"querylogs": [log.to_dict() for log in logs]})


@api.post("/<campaign_ref>/querylogs")
@requires(Permission.ADMINISTER)
def api_import(campaign_ref: str) -> ResponseReturnValue:
    """Multipart upload: ``log`` (and optionally ``mapping``), form fields name, min_users,
    format. The log is imported by a task: 201 with the anonymisation report when it ended
    within REPORT_JOB_WAIT_SECONDS, else 202 with a Location to follow
    (`api_import_state`)."""
    with get_store().read_session() as session:
        campaign_id = campaign_service.get_campaign(session, campaign_ref).id
    state, _name = queue_import(campaign_id)
    return _import_answer(campaign_id, state, created=True)


@api.get("/<campaign_ref>/querylogs/imports/<int:job_id>")
@requires(Permission.ADMINISTER)
def api_import_state(campaign_ref: str, job_id: int) -> ResponseReturnValue:
    """A query-log import: 202 while it runs, 200 with the log's anonymisation report when
    stored, 400 with the error when refused."""
    with get_store().read_session() as session:
        campaign_id = campaign_service.get_campaign(session, campaign_ref).id
    found = jobs.task_state(get_store(), campaign_id, job_id)
    if found is None or found[0] != IMPORT_TASK:
        raise NotFound(f"no query-log import {job_id} in this campaign")
    state = report_jobs.request(IMPORT_TASK, campaign_id, found[1], wait=0)
    return _import_answer(campaign_id, state, created=False)


def _import_answer(campaign_id: int, state: jobs.JobState, *, created: bool) -> ResponseReturnValue:
    if state.pending:
        where = url_for(
            "querylogs_api.api_import_state", campaign_ref=str(campaign_id), job_id=state.id
        )
        body = {"status": state.status, "progress": state.progress, "import": state.id}
        return jsonify(body), 202, {"Location": where, "Retry-After": "1"}
    if state.status == jobs.FAILED:
        return jsonify(error=state.error), 400
    (shown,) = json.loads(state.result or b"[{}]")
    return _json(shown["querylog"]), 201 if created else 200


@api.get("/<campaign_ref>/querylogs/report")
@requires(Permission.ADMINISTER)
def api_report(campaign_ref: str) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        summary = service.query_log_summary(session, campaign, request.args.get("name", ""))
        return _json(summary.to_dict())


@api.get("/<campaign_ref>/querylogs/agreement")
@requires(Permission.ADMINISTER)
def api_agreement(campaign_ref: str) -> ResponseReturnValue:
    """The click agreement as JSON once its report job is done; while it runs, 202 with its
    status and progress (ask again)."""
    with get_store().read_session() as session:
        campaign_id = campaign_service.get_campaign(session, campaign_ref).id
    job, page = request_page("click-agreement", campaign_id, click_request(campaign_id))
    if page is not None and job.fresh:
        return _json(page["agreement"].to_dict())
    if job.status == FAILED:
        return jsonify(error=job.error), 400
    return jsonify(status=job.status, progress=job.progress), 202, {"Retry-After": "1"}


@api.get("/<campaign_ref>/querylogs/evaluation")
@requires(Permission.ADMINISTER)
def api_evaluation(campaign_ref: str) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        compared = service.ClickComparison(
            request.args.get("name", ""),
            request.args.get("qrels", "final"),
            preference_options(),
            request.args.get("allow_incomplete") == "1",
        )
        result = service.click_evaluation(
            session, campaign, compared, measure=request.args.get("measure", "map")
        )
        return _json(result.to_dict())


@api.get("/<campaign_ref>/querylogs/prefs")
@requires(Permission.ADMINISTER)
def api_prefs(campaign_ref: str) -> ResponseReturnValue:
    """The click preferences as a trec_eval prefs file (text/plain)."""
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        name = request.args.get("name", "")
        text = service.export_prefs(session, campaign, name, preference_options())
    return Response(text, mimetype="text/plain")
