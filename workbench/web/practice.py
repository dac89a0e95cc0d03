"""Assessors' own quality pages: the practice set before the first topic (with the expected
grade and the reason after each answer), their progress and, when the campaign allows it,
their gold accuracy, and asking for more work. An assessor sees only their own figures."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from workbench.permissions import Permission
from workbench.services import assessor_dashboard, calibration
from workbench.services import routing as routing_service
from workbench.services.errors import NotFound
from workbench.web.access import requires
from workbench.web.admin import change
from workbench.web.db import get_store
from workbench.web.inputs import form_int

bp = Blueprint("practice", __name__, url_prefix="/assess")


@bp.get("/campaigns/<int:campaign_id>/practice")
@requires(Permission.JUDGE)
def practice(campaign_id: int):
    """The next practice item, or the end of the practice set."""
    with get_store().read_session() as session:
        try:
            page = calibration.practice_page(session, campaign_id, current_user.id)
        except NotFound:
            abort(404)
    return render_template("assess/practice.html", page=page, campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/practice/<int:item_id>")
@requires(Permission.JUDGE)
def answer(campaign_id: int, item_id: int):
    form = request.form
    grade = None if form.get("grade") == "cannot" else form_int(form.get("grade"), "grade")
    time_ms = form_int(form.get("time_spent_ms"), "time", minimum=0, default=0)
    with change() as session:
        try:
            calibration.answer(
                session, campaign_id, item_id, current_user.id, grade, time_spent_ms=time_ms
            )
        except NotFound:
            abort(404)
        return redirect(
            url_for("practice.feedback", campaign_id=campaign_id, item_id=item_id), code=303
        )
    return redirect(url_for("practice.practice", campaign_id=campaign_id), code=303)


@bp.get("/campaigns/<int:campaign_id>/practice/<int:item_id>")
@requires(Permission.JUDGE)
def feedback(campaign_id: int, item_id: int):
    """The expected grade and the guideline's reason of an answered item."""
    with get_store().read_session() as session:
        try:
            shown = calibration.feedback(session, campaign_id, item_id, current_user.id)
        except NotFound:
            abort(404)
    return render_template("assess/practice_feedback.html", feedback=shown)


@bp.get("/progress")
@requires(Permission.JUDGE)
def my_progress():
    with get_store().read_session() as session:
        rows = assessor_dashboard.my_quality(session, current_user.id)
    return render_template("assess/progress.html", rows=rows)


@bp.post("/work")
@requires(Permission.JUDGE)
def ask_for_work():
    """Take places that documents want (adaptive routing: a judge more where judges
    disagree) in the assessor's campaigns."""
    campaign_id = form_int(request.form.get("campaign"), "campaign", minimum=1)
    claimed = routing_service.ask_for_work(get_store(), current_user.id, campaign_id=campaign_id)
    if claimed.places:
        flash(f"{len(claimed)} more document(s) to judge added to your topics.", "info")
    else:
        flash("No more documents are waiting for a judge right now.", "info")
    return redirect(url_for("assess.topics"), code=303)
