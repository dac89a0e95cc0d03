"""The routing and quality API under /api/v1: the assignment policies (the registry), routing
a pool by one, an assessor's remainder (its plan, then with "confirm": true the move), the
assessor dashboard (JSON, or its tables as CSV and the other table formats) for organisers;
asking for work and one's own progress for assessors. Refused input is answered as JSON by
the app's one error mapping (`web.errors`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask_login import current_user

from workbench import routing
from workbench.json_output import json_safe
from workbench.permissions import Permission
from workbench.reports.tables import FORMATS, render_all
from workbench.services import assessor_dashboard
from workbench.services import campaigns as campaign_service
from workbench.services import remainder as remainder_service
from workbench.services import routing as routing_service
from workbench.services.errors import NotFound, ServiceError
from workbench.web.access import requires
from workbench.web.db import get_store
from workbench.web.downloads import content_disposition
from workbench.web.inputs import json_int, parse_json
from workbench.web.quality import dashboard_options

api = Blueprint("routing_api", __name__, url_prefix="/api/v1")


def _body() -> dict[str, Any]:
    data = parse_json(request.get_data()) if request.get_data() else {}
    if not isinstance(data, dict):
        raise ServiceError("expected a JSON object")
    return data


def _names(data: dict[str, Any], key: str) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ServiceError(f"{key} must be a list of strings")
    return value


@api.get("/routing/policies")
@requires(Permission.ADMINISTER)
def policies():
    """The assignment policies with their parameters (`workbench.routing.POLICIES`)."""
    return jsonify(policies=json_safe(routing_service.policy_fields()))


@api.post("/campaigns/<campaign_ref>/assignments")
@requires(Permission.ADMINISTER)
def route_pool(campaign_ref: str):
    """Route a pool by a policy: {"policy": "overlap", "pool": 2, "judges_per_document": 2,
    "assessors": [...], "topics": [...], "order": "random", "seed": 7}; parameters may also
    be given as an object "parameters"."""
    data = _body()
    parameters = data.get("parameters", {})
    if not isinstance(parameters, dict):
        raise ServiceError("parameters must be a JSON object")
    values = {f.name: parameters.get(f.name, data.get(f.name)) for f in routing.option_fields()}
    order = data.get("order", "random")
    if not isinstance(order, str):
        raise ServiceError("order must be a string")
    policy = data.get("policy", routing.DEFAULT_POLICY)
    if not isinstance(policy, str):
        raise ServiceError("policy must be a string")
    with get_store().session() as session:
        result = routing_service.route_pool(
            session,
            campaign_service.get_campaign(session, campaign_ref),
            json_int(data, "pool"),
            policy,
            values,
            assessor_names=_names(data, "assessors"),
            order=order,
            topics=_names(data, "topics"),
            seed=json_int(data, "seed"),
        )
    body = dataclasses.asdict(result)
    body["pool"] = result.pool.number
    return jsonify(json_safe(body)), 201


def _plan_json(plan: remainder_service.RemainderPlan) -> dict[str, Any]:
    return {
        **dataclasses.asdict(plan),
        "documents": plan.documents,
        "unplaced": plan.unplaced,
        "description": plan.describe(),
    }


@api.get("/campaigns/<campaign_ref>/remainder")
@requires(Permission.ADMINISTER)
def remainder_plan(campaign_ref: str):
    """What reassigning ?assessor=NAME's unjudged remainder would do (nothing changes)."""
    name = request.args.get("assessor") or ""
    if not name:
        raise ServiceError("name the assessor: ?assessor=NAME")
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        plan = remainder_service.remainder_plan(
            session, campaign, name, to=request.args.getlist("to") or None
        )
    return jsonify(_plan_json(plan))


@api.post("/campaigns/<campaign_ref>/remainder")
@requires(Permission.ADMINISTER)
def reassign_remainder(campaign_ref: str):
    """{"assessor": NAME, "to": [...], "confirm": true}: reassign the remainder; without
    "confirm": true nothing changes (a 400 that says so)."""
    data = _body()
    name = data.get("assessor")
    if not isinstance(name, str) or not name:
        raise ServiceError("assessor (a username) is required")
    if data.get("confirm") is not True:
        raise ServiceError(
            'nothing changed: send "confirm": true to reassign (GET the same URL with '
            "?assessor=NAME to see what would move)"
        )
    with get_store().session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        plan = remainder_service.reassign_remainder(session, campaign, name, to=_names(data, "to"))
    return jsonify(_plan_json(plan))


@api.get("/campaigns/<campaign_ref>/assessors")
@requires(Permission.ADMINISTER)
def dashboard(campaign_ref: str):
    """The assessor dashboard: JSON (?format=json, the default) or its tables in another
    table format (csv, md, latex, text) as a download."""
    from workbench.reports.assessors import dashboard_tables

    fmt = request.args.get("format", "json")
    if fmt not in FORMATS:
        raise NotFound(f"no format {fmt!r}; formats: {', '.join(FORMATS)}")
    with get_store().read_session() as session:
        board = assessor_dashboard.assessor_dashboard(
            session, campaign_ref, **dashboard_options(request.args)
        )
    if fmt == "json":
        return jsonify(board.to_dict())
    name = f"{board.campaign}-assessors.{FORMATS[fmt].extension}"
    return Response(
        render_all(dashboard_tables(board), fmt),
        mimetype=FORMATS[fmt].mimetype,
        headers={"Content-Disposition": content_disposition(name)},
    )


@api.post("/work")
@requires(Permission.JUDGE)
def ask_for_work():
    """Take places that documents want ({"campaign": id} to keep to one campaign): the
    places taken, as [{"qid", "docno"}]; the documents appear in the assessor's topics."""
    data = _body()
    claimed = routing_service.ask_for_work(
        get_store(), current_user.id, campaign_id=json_int(data, "campaign")
    )
    return jsonify(added=[{"qid": q, "docno": d} for _, q, d in claimed.places])


@api.get("/progress")
@requires(Permission.JUDGE)
def my_progress():
    """The assessor's own progress per campaign, and their gold accuracy where shown."""
    with get_store().read_session() as session:
        rows = assessor_dashboard.my_quality(session, current_user.id)
    return jsonify(campaigns=json_safe([dataclasses.asdict(r) for r in rows]))
