"""Assessors' pages: 'My topics' with progress, and the judging page of one assignment."""

from __future__ import annotations

from flask import Blueprint, abort, jsonify, redirect, render_template, request, url_for
from flask_login import current_user

from workbench import highlight
from workbench.permissions import Permission
from workbench.services import (
    adaptive_pools,
    assessment,
    assignments,
    calibration,
    guidelines,
    routing,
)
from workbench.services.errors import NotFound
from workbench.web.access import requires
from workbench.web.admin import back_to, campaign_or_404, change, page_context
from workbench.web.db import get_store
from workbench.web.errors import not_found_as_404

bp = Blueprint("assess", __name__, url_prefix="/assess")
JUDGING_PAGES = {
    "document": "assess/judge.html",
    "passages": "assess/passages.html",
    "pairwise": "assess/pairs.html",
}
"""The judging page of each judging mode (`workbench.judging_modes.JUDGING_MODES`)."""


own_assignment = not_found_as_404(assignments.own_assignment)
"""own_assignment(session, assignment id, user id): the user's active assignment with this id
(a store object for the services); 404 for anyone else's."""


topic_of = assignments.assignment_topic  # the judging API's name for it


@bp.get("/")
@requires(Permission.JUDGE)
def topics():
    with get_store().read_session() as session:
        rows = assessment.my_topics(session, current_user.id)
    return render_template("assess/topics.html", rows=rows)


@bp.get("/<int:assignment_id>")
@requires(Permission.JUDGE)
def judge(assignment_id: int):
    adaptive_pools.advance(get_store(), assignment_id, current_user.id)  # adaptive pools
    routing.top_up(get_store(), assignment_id, current_user.id)  # adaptive routing
    with get_store().read_session() as session:
        try:
            page = assessment.judging_page(session, assignment_id, current_user.id)
        except NotFound:
            abort(404)
        if calibration.pending(session, page.campaign.id, current_user.id):  # practice first
            return redirect(url_for("practice.practice", campaign_id=page.campaign.id))
    return render_template(
        JUDGING_PAGES[page.campaign.judging_mode],
        **page_context(page),
        show_guidelines=bool(page.guidelines_html) and page.first_document,
    )


@bp.get("/<int:assignment_id>/next-topic")
@requires(Permission.JUDGE)
def next_topic(assignment_id: int):
    """The assessor's next assigned topic with documents left, after this one: {"next":
    {"id", "qid", "title", "url"}} or {"next": null} (the judging page asks once its topic
    is done, and for the key t); 404 for anyone else's assignment."""
    with get_store().read_session() as session:
        own_assignment(session, assignment_id, current_user.id)
        found = assessment.next_topic(session, current_user.id, assignment_id)
    if found is None:
        return jsonify(next=None)
    url = url_for("assess.judge", assignment_id=found.id)
    return jsonify(next={"id": found.id, "qid": found.qid, "title": found.title, "url": url})


@bp.post("/campaigns/<int:campaign_id>/guidelines")
@requires(Permission.ADMINISTER)
def set_guidelines(campaign_id: int):
    """Admins set the campaign's guidelines (Markdown) from the campaign page."""
    with change("Guidelines saved.") as session:
        campaign = campaign_or_404(session, campaign_id)
        guidelines.set_guidelines(session, campaign, request.form.get("guidelines", ""))
    return back_to("admin.campaign", campaign_id=campaign_id)


MAX_STEM_QUERY = 500  # characters: the terms an assessor adds to highlight


@bp.get("/stems")
@requires(Permission.JUDGE)
def stems():
    """word -> stem for the words of ?terms= (the terms an assessor adds to highlight)."""
    terms = request.args.get("terms", "")
    if len(terms) > MAX_STEM_QUERY:
        return jsonify(error=f"at most {MAX_STEM_QUERY} characters of terms"), 400
    return jsonify(highlight.stems(terms))
