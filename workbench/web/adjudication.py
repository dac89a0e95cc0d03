"""The adjudication queue (admin only), on the reports blueprint (/reports/<id>/adjudication):
the documents on which the judges disagree under a merge rule, filtered by what is left to
decide, each with the whole document, every judge's grade, comment, evidence and time spent,
and a form to decide it; applying a rule to every judged document, or a batch of topics.

The judges appear only as "Judge 1", "Judge 2", ... (`services.adjudication`).
"""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user

from workbench.agreement import MERGE_RULES, TIE_RULES
from workbench.services import campaigns as campaign_service
from workbench.services import users as user_service
from workbench.services.adjudication import MergeSpec, record_decision
from workbench.services.adjudication_queue import (
    QUEUE_PAGE,
    QUEUE_VIEWS,
    adjudication_page,
    refusal,
)
from workbench.services.adjudication_steps import apply_rule_in_steps
from workbench.services.browse import Page
from workbench.services.errors import ServiceError
from workbench.services.run_imports import topic_list
from workbench.web.admin_figures import figures
from workbench.web.db import get_store
from workbench.web.inputs import form_int
from workbench.web.reports import bp


def _queue_request() -> dict[str, Any]:
    """The merge rule chosen on the adjudication page (an unknown one is refused where used)."""
    source = request.form if request.method == "POST" else request.args
    return {
        "rule": source.get("rule", "majority"),
        "tie": source.get("tie", "adjudicate"),
        "primary": source.get("primary") or None,
    }


def _view() -> str:
    source = request.form if request.method == "POST" else request.args
    return source.get("show", "undecided")


@bp.get("/<int:campaign_id>/adjudication")
def adjudication(campaign_id: int):
    choice = _queue_request()
    offset = form_int(request.args.get("offset"), "offset", minimum=0, default=0)
    merge = MergeSpec(**choice)
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        refused = refusal(session, campaign, merge)
    # which documents disagree: a report job (none for a refused rule); the page's window now
    shown = None if refused else figures("adjudication-figures", campaign_id, choice)
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        computed = shown.figures if shown is not None else None
        page = adjudication_page(session, campaign, merge, computed, view=_view(), offset=offset)
    return render_template(
        "reports/adjudication.html",
        campaign={"id": campaign_id, "name": page.campaign.name},
        choice=choice,
        rules=MERGE_RULES,
        ties=TIE_RULES,
        views=QUEUE_VIEWS,
        page=page,
        pager=Page(page.entries, page.total, page.offset, QUEUE_PAGE),
        scale=[(g.value, g.label, g.key) for g in page.campaign.grades],
        labels={g.value: g.label for g in page.campaign.grades},
        items=page.entries,
        error=page.error,
        withdrawn=page.withdrawn,
        figures=shown,
    )


def _back(campaign_id: int, choice: dict[str, Any]):
    query = {k: v for k, v in choice.items() if v is not None}
    view = _view()
    if view != "undecided":
        query["show"] = view
    return redirect(url_for("reports.adjudication", campaign_id=campaign_id, **query), 303)


@bp.post("/<int:campaign_id>/adjudication")
def decide(campaign_id: int):
    """Record the adjudicator's final grade of one document, with the reason."""
    choice = _queue_request()
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            adjudicator = user_service.user_by_id(session, current_user.id)
            try:
                grade = int(request.form.get("grade", ""))
            except ValueError:
                raise ServiceError("choose a final grade") from None
            record_decision(
                session,
                campaign,
                qid=request.form.get("qid", ""),
                docno=request.form.get("docno", ""),
                grade=grade,
                reason=request.form.get("reason", ""),
                adjudicator=adjudicator,
            )
        flash(f"Final grade {grade} recorded for {request.form.get('docno')}.", "info")
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id, choice)


@bp.post("/<int:campaign_id>/adjudication/apply")
def apply(campaign_id: int):
    """Apply the chosen merge rule to every judged document, or to the topics of a batch with
    one reason (adjudicated labels are kept)."""
    choice = _queue_request()
    batch = request.form.get("topics", "").strip()
    try:
        summary = apply_rule_in_steps(
            get_store(),
            campaign_id,
            MergeSpec(**choice),
            topics=topic_list(batch) if batch else None,
            reason=request.form.get("reason", ""),
        )
        flash(summary.message(), "info")
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id, choice)
