"""Assessors' pages: 'My topics' with progress, and the judging page of one assignment."""

from __future__ import annotations

from flask import Blueprint, abort, jsonify, render_template, request
from flask_login import current_user
from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import highlight
from workbench.services import adaptive_pools, guidelines, judging, progress
from workbench.services import campaigns as campaign_service
from workbench.store.models import Assignment, Campaign, Judgement, Topic
from workbench.web.admin import back_to, campaign_or_404, change
from workbench.web.db import get_store
from workbench.web.security import admin_required, assessor_required

bp = Blueprint("assess", __name__, url_prefix="/assess")


def own_assignment(session: Session, assignment_id: int) -> Assignment:
    """The current user's active assignment with this id; 404 for anyone else's."""
    assignment = session.get(Assignment, assignment_id)
    if assignment is None or assignment.user_id != current_user.id or not assignment.active:
        abort(404)
    return assignment


def topic_of(session: Session, assignment: Assignment) -> Topic | None:
    return session.scalar(
        select(Topic).where(
            Topic.campaign_id == assignment.campaign_id, Topic.qid == assignment.qid
        )
    )


@bp.get("/")
@assessor_required
def topics():
    with get_store().read_session() as session:
        rows = []
        for a, done in progress.user_progress(session, current_user.id):
            campaign = session.get(Campaign, a.campaign_id)
            topic = topic_of(session, a)
            rows.append(
                {
                    "id": a.id,
                    "campaign": campaign.name if campaign else "",
                    "qid": a.qid,
                    "title": topic.title if topic else "",
                    "progress": done,
                }
            )
    return render_template("assess/topics.html", rows=rows)


def next_topic(session: Session, assignment: Assignment) -> dict | None:
    """The assessor's next assignment (in 'My topics' order, after this one, wrapping) that
    still has documents to judge: what the page offers once this topic is done."""
    rows = progress.user_progress(session, assignment.user_id)
    ids = [a.id for a, _ in rows]
    start = ids.index(assignment.id) + 1 if assignment.id in ids else 0
    for a, done in rows[start:] + rows[:start]:
        if a.id != assignment.id and done.judged < done.total:
            topic = topic_of(session, a)
            return {"id": a.id, "qid": a.qid, "title": topic.title if topic else ""}
    return None


@bp.get("/<int:assignment_id>")
@assessor_required
def judge(assignment_id: int):
    adaptive_pools.advance(get_store(), assignment_id, current_user.id)  # adaptive pools
    with get_store().read_session() as session:
        assignment = own_assignment(session, assignment_id)
        campaign = session.get(Campaign, assignment.campaign_id)
        assert campaign is not None
        topic = topic_of(session, assignment)
        grades = campaign_service.scale_of(campaign)
        total = len(judging.document_sequence(session, assignment))
        adaptive = adaptive_pools.is_adaptive(session, assignment.pool_id)
        following = next_topic(session, assignment)
        title_stems = highlight.stems(topic.title if topic else "")
        rendered = guidelines.render(campaign.guidelines)
        first_document = not session.scalar(  # no judgement yet in this campaign
            select(Judgement.id)
            .where(Judgement.campaign_id == campaign.id, Judgement.user_id == current_user.id)
            .limit(1)
        )
    return render_template(
        "assess/judge.html",
        assignment=assignment,
        campaign=campaign,
        topic=topic,
        grades=grades,
        total=total,
        adaptive=adaptive,
        next_topic=following,
        title_stems=title_stems,
        guidelines_html=rendered,
        show_guidelines=bool(rendered) and first_document,
    )


@bp.post("/campaigns/<int:campaign_id>/guidelines")
@admin_required
def set_guidelines(campaign_id: int):
    """Admins set the campaign's guidelines (Markdown) from the campaign page."""
    with change("Guidelines saved.") as session:
        campaign = campaign_or_404(session, campaign_id)
        guidelines.set_guidelines(session, campaign, request.form.get("guidelines", ""))
    return back_to("admin.campaign", campaign_id=campaign_id)


MAX_STEM_QUERY = 500  # characters: the terms an assessor adds to highlight


@bp.get("/stems")
@assessor_required
def stems():
    """word -> stem for the words of ?terms= (the terms an assessor adds to highlight)."""
    terms = request.args.get("terms", "")
    if len(terms) > MAX_STEM_QUERY:
        return jsonify(error=f"at most {MAX_STEM_QUERY} characters of terms"), 400
    return jsonify(highlight.stems(terms))
