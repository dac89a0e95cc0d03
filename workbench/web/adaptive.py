"""Adaptive pools on the web: build one, follow each topic, raise budgets, stop topics (organisers);
the same as JSON under /api/v1 (organisers, with a session or a bearer token)."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import abort, flash, jsonify, render_template, request

from workbench import adaptive, stopping
from workbench.permissions import Permission
from workbench.services import adaptive_pools, pools
from workbench.services import adaptive_provenance as provenance_service
from workbench.services import campaigns as campaign_service
from workbench.services.errors import ServiceError
from workbench.web.access import GuardedBlueprint, requires
from workbench.web.admin import back_to, campaign_or_404, change, chosen_topics
from workbench.web.api import bp as api_blueprint
from workbench.web.db import get_store
from workbench.web.inputs import form_int, parse_json

bp = GuardedBlueprint("adaptive", __name__, "/admin", permission=Permission.ADMINISTER)
# the JSON routes join the API blueprint, with its JSON errors and its authentication
api = api_blueprint


def _number(text: str | None, what: str, default: float) -> float:
    """A form's number (blank: the default); a bad one is refused with its name."""
    if text is None or not text.strip():
        return default
    try:
        value = float(text.strip())
    except ValueError:
        raise ServiceError(f"the {what} must be a number; got {text!r}") from None
    if value != value:  # NaN
        raise ServiceError(f"the {what} must be a number; got {text!r}")
    return value


def _method(form: Any) -> str:
    """The form's adaptive method: the field `method`; the old field `strategy` still works
    for one release, with a warning (`adaptive_pools.OLD_METHOD_FIELD`)."""
    if form.get("method"):
        return str(form["method"])
    if form.get(adaptive_pools.STORED_METHOD_KEY):
        flash(adaptive_pools.OLD_METHOD_FIELD, "warning")
        return str(form[adaptive_pools.STORED_METHOD_KEY])
    return adaptive.DEFAULT_METHOD


@bp.post("/campaigns/<int:campaign_id>/adaptive-pools")
def build(campaign_id: int):
    form = request.form
    with change() as session:
        c = campaign_or_404(session, campaign_id)
        pool = adaptive_pools.build_adaptive_pool(
            session,
            c,
            method=_method(form),
            budget=form_int(form.get("budget"), "budget", minimum=1),
            depth=form_int(
                form.get("depth"), "depth", minimum=1, default=adaptive_pools.DEFAULT_DEPTH
            ),
            batch=form_int(
                form.get("batch"), "batch", minimum=1, default=adaptive_pools.DEFAULT_BATCH
            ),
            secondary_share=_number(
                form.get("secondary_share"), "secondary share",
                adaptive_pools.DEFAULT_SECONDARY_SHARE,
            ),
            runs=form.getlist("runs") or None,
            seed=form_int(form.get("seed"), "seed", minimum=0),
            sample_share=_number(form.get("sample_share"), "sample share", 0.0),
            stop_rule=form.get("stop_rule") or None,
            recall_target=_number(
                form.get("recall_target"), "recall target", stopping.DEFAULT_TARGET
            ),
            confidence=_number(form.get("confidence"), "confidence", stopping.DEFAULT_CONFIDENCE),
            auto_stop=form.get("auto_stop") == "1",
            name=form.get("name", ""),
            topics=chosen_topics(form),
        )  # fmt: skip
        flash(f"Pool {pool.number} built: {provenance_service.describe_settings(pool)}.", "info")
        return back_to("adaptive.status", campaign_id=campaign_id, pool_id=pool.number)
    return back_to("admin.campaign", campaign_id=campaign_id)


@bp.get("/campaigns/<int:campaign_id>/pools/<int:pool_id>/adaptive")
def status(campaign_id: int, pool_id: int):
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        pool = pools.get_pool(session, c, pool_id)
        if adaptive_pools.settings_of(pool) is None:
            abort(404)
        rows = adaptive_pools.topic_statuses(session, pool)
        described = provenance_service.describe_settings(pool)
        settings = adaptive_pools.settings_of(pool)
        campaign = {"id": c.id, "name": c.name}
    return render_template(
        "admin/adaptive.html",
        campaign=campaign,
        pool_id=pool_id,
        described=described,
        rows=rows,
        tab="overview",
        has_sample=bool(settings and settings.sample_share),
        rule_auto=bool(settings and settings.auto_stop),
    )


@bp.post("/campaigns/<int:campaign_id>/pools/<int:pool_id>/adaptive/budget")
def budget(campaign_id: int, pool_id: int):
    qid = request.form.get("qid") or None
    with change() as session:
        pool = pools.get_pool(session, campaign_or_404(session, campaign_id), pool_id)
        value = form_int(request.form.get("budget"), "budget", minimum=1)
        if value is None:
            raise ServiceError("give a budget")
        changed = adaptive_pools.set_budget(session, pool, value, qid)
        flash(f"Budget {value} for {changed} topic(s).", "info")
    return back_to("adaptive.status", campaign_id=campaign_id, pool_id=pool_id)


@bp.post("/campaigns/<int:campaign_id>/pools/<int:pool_id>/adaptive/topics/<qid>/stop")
def stop(campaign_id: int, pool_id: int, qid: str):
    resume = request.form.get("resume") == "1"
    with change() as session:
        pool = pools.get_pool(session, campaign_or_404(session, campaign_id), pool_id)
        adaptive_pools.stop_topic(session, pool, qid, stopped=not resume)
        flash(f"Topic {qid} {'resumed' if resume else 'stopped'}.", "info")
    return back_to("adaptive.status", campaign_id=campaign_id, pool_id=pool_id)


@bp.app_context_processor
def form_choices() -> dict[str, Any]:
    """What the campaign page's adaptive form offers (one registry: workbench.adaptive)."""
    return {
        "adaptive_methods": adaptive.ADAPTIVE,
        "adaptive_default_method": adaptive.DEFAULT_METHOD,
        "adaptive_stop_rules": {name: rule.description for name, rule in stopping.RULES.items()},
        "adaptive_defaults": {
            "depth": adaptive_pools.DEFAULT_DEPTH,
            "batch": adaptive_pools.DEFAULT_BATCH,
            "secondary_share": adaptive_pools.DEFAULT_SECONDARY_SHARE,
            "recall_target": stopping.DEFAULT_TARGET,
            "confidence": stopping.DEFAULT_CONFIDENCE,
        },
    }


@bp.app_template_global()
def adaptive_evaluation_warning(campaign_id: int) -> str | None:
    """The evaluation page's warning for a campaign with an adaptive pool (the CLI's text)."""
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        return provenance_service.evaluation_warning(session, campaign)


# --- API ---------------------------------------------------------------------------------


def _api_pool(session, campaign_ref: str, pool_id: int):
    """Pool number `pool_id` of the campaign named (or numbered) `campaign_ref`, resolved as
    every admin API route resolves a campaign (`campaigns.get_campaign`)."""
    campaign = campaign_service.get_campaign(session, campaign_ref)
    return pools.get_pool(session, campaign, pool_id)


@api.get("/campaigns/<campaign_ref>/pools/<int:pool_id>/adaptive")
@requires(Permission.ADMINISTER)
def adaptive_status(campaign_ref: str, pool_id: int):
    with get_store().read_session() as session:
        pool = _api_pool(session, campaign_ref, pool_id)
        rows = adaptive_pools.topic_statuses(session, pool)
        settings = adaptive_pools.settings_of(pool)
    return jsonify(
        pool=pool_id,
        settings=(  # `strategy`: the method's old key, kept for API clients
            {"method": settings.method, **adaptive_pools.recorded_settings(settings)}
            if settings
            else None
        ),
        topics=[{**dataclasses.asdict(r), "finished": r.finished} for r in rows],
    )


@api.get("/campaigns/<campaign_ref>/adaptive-provenance")
@requires(Permission.ADMINISTER)
def adaptive_provenance(campaign_ref: str):
    """The method and budgets of the campaign's adaptive pools: what its exported qrels and
    judgement log record in their `#` header lines, as JSON."""
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_ref)
        found = provenance_service.provenance(session, campaign)
        campaign_id = campaign.id
    return jsonify(
        campaign=campaign_id,
        adaptive_pools=[
            {**dataclasses.asdict(p), "strategy": p.method, "description": p.describe()}  # old key
            for p in found
        ],
    )


@api.post("/campaigns/<campaign_ref>/pools/<int:pool_id>/adaptive/budget")
@requires(Permission.ADMINISTER)
def adaptive_budget(campaign_ref: str, pool_id: int):
    data = parse_json(request.get_data())
    if (
        not isinstance(data, dict)
        or isinstance(data.get("budget"), bool)
        or not isinstance(data.get("budget"), int)
    ):
        raise ServiceError("expected a JSON object with an integer budget")
    topic = data.get("topic")
    if topic is not None and not isinstance(topic, str):
        raise ServiceError("topic must be a string")
    with get_store().session() as session:
        changed = adaptive_pools.set_budget(
            session, _api_pool(session, campaign_ref, pool_id), data["budget"], topic
        )
    return jsonify(budget=data["budget"], topics=changed)


@api.post("/campaigns/<campaign_ref>/pools/<int:pool_id>/adaptive/topics/<qid>/stop")
@requires(Permission.ADMINISTER)
def adaptive_stop(campaign_ref: str, pool_id: int, qid: str):
    body = request.get_data()
    data = parse_json(body) if body.strip() else {}  # no body: stop the topic
    stopped = data.get("stopped", True) if isinstance(data, dict) else True
    if not isinstance(stopped, bool):
        raise ServiceError("stopped must be true or false")
    with get_store().session() as session:
        adaptive_pools.stop_topic(
            session, _api_pool(session, campaign_ref, pool_id), qid, stopped=stopped
        )
    return jsonify(topic=qid, stopped=stopped)
