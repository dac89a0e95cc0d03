"""The JSON API under /api/v1: the judging page's calls, and admins' progress and exports.

Browser calls are session-authenticated and carry X-CSRFToken; scripts send
`Authorization: Bearer <token>`. Errors are JSON {"error": message} with a 4xx status (the
app's handlers answer JSON for unknown routes and methods under /api/ too). Bodies are read by
`inputs.parse_json` (bounded depth, numbers and text) within API_MAX_BYTES; judgement submits
are rate-limited per assessor (RATE_JUDGE), except for roles that are not paced (a script's
account).
"""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, send_file
from flask_login import current_user

from workbench import limits
from workbench.permissions import Permission
from workbench.services import adaptive_pools, judging, progress, routing
from workbench.services import campaigns as campaign_service
from workbench.services.errors import NotFound, ServiceError
from workbench.services.scope import parse_pools
from workbench.web.access import public, requires
from workbench.web.assess import own_assignment, topic_of
from workbench.web.db import get_store
from workbench.web.downloads import export_file
from workbench.web.inputs import parse_json
from workbench.web.security import rate_limited

bp = Blueprint("api", __name__, url_prefix="/api/v1")


@bp.get("/openapi.json")
@public
def openapi():
    """The OpenAPI description of this API, generated from the routes (no login needed)."""
    from workbench.web.openapi import openapi_document

    return jsonify(openapi_document(current_app))


@bp.get("/me")
@requires(Permission.JUDGE)
def me():
    return jsonify(id=current_user.id, username=current_user.username, role=current_user.role)


@bp.get("/assignments")
@requires(Permission.JUDGE)
def my_assignments():
    with get_store().read_session() as session:
        result = [
            {
                "id": a.id,
                "campaign_id": a.campaign_id,
                "qid": a.qid,
                "progress": progress.progress_json(done),
            }
            for a, done in progress.user_progress(session, current_user.id)
        ]
    return jsonify(assignments=result)


@bp.get("/assignments/<int:assignment_id>")
@requires(Permission.JUDGE)
def assignment_state(assignment_id: int):
    """Topic, scale, the assessor's own judgement per position, and where to resume."""
    adaptive_pools.advance(get_store(), assignment_id, current_user.id)  # adaptive pools
    routing.top_up(get_store(), assignment_id, current_user.id)  # adaptive routing
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        campaign = campaign_service.get_campaign(session, assignment.campaign_id)
        topic = topic_of(session, assignment)
        sequence = judging.document_sequence(session, assignment)
        mine = judging.my_marks(session, assignment)
        judged = {docno: mark["id"] for docno, mark in mine.items()}  # `my_judged_ids`
        return jsonify(
            id=assignment.id,
            qid=assignment.qid,
            topic={
                "title": topic.title if topic else "",
                "description": topic.description if topic else "",
                "narrative": topic.narrative if topic else "",
            },
            grades=campaign_service.scale_of(campaign),
            total=len(sequence),
            position=judging.resume_position(session, assignment, sequence, judged),
            judgements=[mine.get(docno) for docno in sequence],
        )


@bp.get("/assignments/<int:assignment_id>/documents/<int:position>")
@requires(Permission.JUDGE)
def document(assignment_id: int, position: int):
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        return jsonify(judging.document_at(session, assignment, position))


@bp.get("/assignments/<int:assignment_id>/next")
@requires(Permission.JUDGE)
def next_document(assignment_id: int):
    """The document where the assessor left off, with `done` (true once every document of
    the assignment has the assessor's judgement: the queue is finished, and the document
    given is the last one, for review) and `judged` (how many have)."""
    adaptive_pools.advance(get_store(), assignment_id, current_user.id)  # adaptive pools
    routing.top_up(get_store(), assignment_id, current_user.id)  # adaptive routing
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id, current_user.id)
        sequence = judging.document_sequence(session, assignment)
        if not sequence:
            return jsonify(done=True, judged=0, total=0)
        judged_ids = judging.my_judged_ids(session, assignment)
        judged = len(set(judged_ids) & set(sequence))
        position = judging.resume_position(session, assignment, sequence, judged_ids)
        document = judging.document_at(session, assignment, position)
        return jsonify(done=judged == len(sequence), judged=judged, **document)


def _judgement_input(data: Any) -> judging.JudgementInput:
    if not isinstance(data, dict):
        raise ServiceError("expected a JSON object")
    grade = data.get("grade")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
        raise ServiceError(f"grade must be an integer or null; got {grade!r}")
    if grade is not None and abs(grade) > limits.INT32_MAX:
        raise ServiceError(f"grade {grade} is not on the scale")
    docno = data.get("docno")
    if not isinstance(docno, str) or not docno:
        raise ServiceError("docno (a string) is required")
    fields = {"cannot_judge": (str, type(None)), "comment": (str,), "client_id": (str, type(None))}
    for name, types in fields.items():
        if name in data and not isinstance(data[name], types):
            raise ServiceError(f"{name} has the wrong type")
    time_spent = data.get("time_spent_ms", 0)
    if isinstance(time_spent, bool) or not isinstance(time_spent, int | float):
        raise ServiceError("time_spent_ms must be a number")
    if not math.isfinite(time_spent):
        raise ServiceError("time_spent_ms must be a finite number")
    return judging.JudgementInput(
        docno=docno,
        grade=grade,
        cannot_judge=data.get("cannot_judge"),
        comment=data.get("comment", ""),
        time_spent_ms=int(time_spent),
        client_id=data.get("client_id"),
        evidence=_evidence(data.get("evidence", [])),
    )


def _evidence(value: Any) -> tuple[tuple[int, int], ...]:
    """[[start, end], ...] of integers (the marked passages), else a ServiceError."""
    if not isinstance(value, list) or len(value) > limits.EVIDENCE_SPANS:
        raise ServiceError(f"evidence is a list of at most {limits.EVIDENCE_SPANS} [start, end]")
    spans = []
    for span in value:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)
        ):
            raise ServiceError(f"an evidence passage is [start, end] (integers); got {span!r}")
        spans.append((span[0], span[1]))
    return tuple(spans)


@bp.post("/assignments/<int:assignment_id>/judgements")
@requires(Permission.JUDGE)
@rate_limited("judge", unless=Permission.UNPACED)
def submit(assignment_id: int):
    """Record (or revise) a judgement. 201 when stored, 200 when the client_id was known."""
    data = _judgement_input(parse_json(request.get_data()))
    judgement, created = judging.submit_judgement(get_store(), assignment_id, current_user.id, data)
    body = judging.judgement_summary(judgement)
    return jsonify(saved=True, created=created, judgement=body), 201 if created else 200


@bp.get("/campaigns")
@requires(Permission.ADMINISTER)
def campaigns():
    with get_store().read_session() as session:
        return jsonify(
            campaigns=[
                {"id": c.id, "name": c.name, "relevance_level": c.relevance_level}
                for c in campaign_service.list_campaigns(session)
            ]
        )


@bp.get("/campaigns/<campaign_ref>/progress")
@requires(Permission.ADMINISTER)
def campaign_progress(campaign_ref: str):
    """Progress of the campaign named (or numbered) `campaign_ref`, over the assignments of
    the pools in ?pools= (default: the pools with assignments; archived pools never)."""
    numbers = parse_pools(request.args.getlist("pools"))
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        report = progress.campaign_progress(session, campaign.id, numbers)
        return jsonify(progress.progress_document(campaign.name, report))


@bp.get("/campaigns/<campaign_ref>/report")
@requires(Permission.ADMINISTER)
def report_json(campaign_ref: str):
    """The campaign's evaluation report as JSON (`report` in the json format)."""
    return report(campaign_ref, "json")


@bp.get("/campaigns/<campaign_ref>/report.<fmt>")
@requires(Permission.ADMINISTER)
def report(campaign_ref: str, fmt: str):
    """The campaign's evaluation report in `fmt` (`reports.formats.REPORT_FORMATS`), its
    parameters from the query string (`reports.pipeline.REPORT_OPTIONS`): the bytes of
    `workbench evaluate --format FMT` and of the web page's download. A report job: 202 with
    its status until it is ready."""
    from workbench.reports.formats import REPORT_FORMATS
    from workbench.web.reports import file_response, report_file, report_request

    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no {fmt!r} report; formats: {', '.join(REPORT_FORMATS)}")
    params = report_request().to_params()
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        campaign_id, name = campaign.id, campaign.name
    state, data, reason = report_file(campaign_id, fmt, params, fresh=True)
    if reason is not None:
        return jsonify(error=reason), 400
    if data is None:
        return jsonify(status=state.status, progress=state.progress), 202, {"Retry-After": "1"}
    if fmt == "json":
        return Response(data, mimetype="application/json")
    return file_response(data, name, fmt)


@bp.get("/campaigns/<campaign_ref>/export/<kind>")
@requires(Permission.ADMINISTER)
def export(campaign_ref: str, kind: str):
    """The export `kind` (services.exports.EXPORTS: pool, qrels, log, ...) of the campaign
    named (or numbered) `campaign_ref` as a file, its options from the query string."""
    with get_store().read_session() as session:
        campaign_id = campaign_service.get_campaign(session, campaign_ref).id
    content, name = export_file(campaign_id, kind, request.args)
    return send_file(content, as_attachment=True, download_name=name)
