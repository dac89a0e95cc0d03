"""Admin pages to browse a campaign: topics, documents (search by docno or text), runs with
their lines per topic, one assessor's labels, and the judgement log with filters.

Thin views over `services.browse`: every listing is a bounded page of frozen rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import render_template, request

from workbench.permissions import Permission
from workbench.services import browse
from workbench.services.campaigns import get_campaign
from workbench.web.access import GuardedBlueprint
from workbench.web.db import get_store
from workbench.web.inputs import form_int

bp = GuardedBlueprint("browse", __name__, "/admin/campaigns", permission=Permission.ADMINISTER)
PAGE_SIZE = 50


def _window() -> dict[str, int]:
    return {
        "offset": form_int(request.args.get("offset"), "offset", minimum=0, default=0),
        "limit": form_int(
            request.args.get("limit"), "limit", minimum=1, maximum=browse.MAX_PAGE, default=50
        ),
    }


def _query() -> str:
    return request.args.get("q", "").strip()


def _searched_listing(campaign_id: int, tab: str, listing: Callable[..., Any]) -> str:
    """The ``tab`` page (``browse/<tab>.html``): one window of ``listing``'s rows matching the
    ``q`` search."""
    with get_store().read_session() as session:
        campaign = get_campaign(session, campaign_id)
        page = listing(session, campaign, query=_query(), **_window())
        return render_template(
            f"browse/{tab}.html", campaign=campaign, tab=tab, page=page, q=_query()
        )


@bp.get("/<int:campaign_id>/topics")
def topics(campaign_id: int):
    return _searched_listing(campaign_id, "topics", browse.topics)


@bp.get("/<int:campaign_id>/documents")
def documents(campaign_id: int):
    return _searched_listing(campaign_id, "documents", browse.documents)


@bp.get("/<int:campaign_id>/documents/<path:docno>")
def document(campaign_id: int, docno: str):
    with get_store().read_session() as session:
        campaign = get_campaign(session, campaign_id)
        view = browse.document(session, campaign, docno)
        return render_template(
            "browse/document.html", campaign=campaign, tab="documents", document=view
        )


@bp.get("/<int:campaign_id>/runs")
def runs(campaign_id: int):
    with get_store().read_session() as session:
        campaign = get_campaign(session, campaign_id)
        rows = browse.runs(session, campaign)
        return render_template("browse/runs.html", campaign=campaign, tab="runs", runs=rows)


@bp.get("/<int:campaign_id>/runs/<path:tag>")
def run(campaign_id: int, tag: str):
    """One run: its fields, topics and ir_metadata (PRIMAD) annotations."""
    with get_store().read_session() as session:
        campaign = get_campaign(session, campaign_id)
        row = browse.run(session, campaign, tag)
        return render_template("browse/run.html", campaign=campaign, tab="runs", run=row)


@bp.get("/<int:campaign_id>/judgements")
def judgements(campaign_id: int):
    """The judgement log; ?assessor= shows one assessor's labels, comments and reasons."""
    chosen = browse.LogFilter(
        assessor=request.args.get("assessor", "").strip(),
        qid=request.args.get("qid", "").strip(),
        docno=request.args.get("docno", "").strip(),
        grade=form_int(request.args.get("grade"), "grade"),
        cannot_judge_only=request.args.get("cannot_judge") == "1",
        with_comment_only=request.args.get("comment") == "1",
        current_only=request.args.get("current") == "1",
    )
    with get_store().read_session() as session:
        campaign = get_campaign(session, campaign_id)
        page = browse.judgement_log(session, campaign, chosen, **_window())
        return render_template(
            "browse/judgements.html",
            campaign=campaign,
            tab="judgements",
            page=page,
            chosen=chosen,
            assessors=browse.assessor_names(session, campaign),
            grades=[(g.value, g.label) for g in campaign.grades],
        )
