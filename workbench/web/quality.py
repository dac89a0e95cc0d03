"""Organisers' quality pages: the assessor dashboard (tables, plots, downloads), gold documents
and the quality settings, the practice set, and reassigning an assessor's remainder (after a
confirmation page that shows what would move)."""

from __future__ import annotations

from typing import Any

from flask import Response, abort, flash, render_template, request
from werkzeug.datastructures import MultiDict

from workbench.permissions import Permission
from workbench.reports.tables import FORMATS, render_all, to_json
from workbench.services import assessor_dashboard, calibration, gold
from workbench.services import remainder as remainder_service
from workbench.services import users as user_service
from workbench.services.campaigns import campaign_info
from workbench.services.errors import NotFound, ServiceError
from workbench.services.store_handle import Session
from workbench.web.access import GuardedBlueprint
from workbench.web.admin import back_to, campaign_or_404, change, writable_campaign
from workbench.web.db import get_store
from workbench.web.downloads import content_disposition
from workbench.web.images import svg_image
from workbench.web.inputs import form_int

bp = GuardedBlueprint("quality", __name__, "/admin", permission=Permission.ADMINISTER)
MAX_PRACTICE_TEXT = 200_000  # characters of a practice set pasted in the form


def dashboard_options(args: MultiDict[str, str]) -> dict[str, Any]:
    """The dashboard's choices from a query string: period (day or session) and weights."""
    return {
        "period": args.get("period") or "day",
        "weights": args.get("weights") or "linear",
    }


def _dashboard(campaign_id: int, args: MultiDict[str, str]) -> assessor_dashboard.AssessorDashboard:
    with get_store().read_session() as session:
        campaign_or_404(session, campaign_id)
        return assessor_dashboard.assessor_dashboard(
            session, campaign_id, **dashboard_options(args)
        )


@bp.get("/campaigns/<int:campaign_id>/assessors")
def dashboard(campaign_id: int):
    from workbench.reports.assessors import dashboard_plots, dashboard_tables

    try:
        board = _dashboard(campaign_id, request.args)
    except NotFound:
        abort(404)
    except ServiceError as error:
        flash(str(error), "error")
        return back_to("quality.dashboard", campaign_id=campaign_id)
    with get_store().read_session() as session:
        campaign = campaign_info(campaign_or_404(session, campaign_id))
    return render_template(
        "admin/assessors.html",
        campaign=campaign,
        board=board,
        tables=dashboard_tables(board),
        plots={name: svg_image(svg) for name, svg in dashboard_plots(board).items()},
        formats=list(FORMATS),
        options=dashboard_options(request.args),
    )


@bp.get("/campaigns/<int:campaign_id>/assessors.<fmt>")
def dashboard_download(campaign_id: int, fmt: str):
    """The dashboard's tables as CSV, Markdown, LaTeX or text; JSON is the whole dashboard."""
    from workbench.reports.assessors import dashboard_tables

    if fmt not in FORMATS:
        raise NotFound(f"no {fmt!r} download; formats: {', '.join(FORMATS)}")
    board = _dashboard(campaign_id, request.args)
    body = to_json(board.to_dict()) if fmt == "json" else render_all(dashboard_tables(board), fmt)
    name = f"{board.campaign}-assessors.{FORMATS[fmt].extension}"
    return Response(
        body,
        mimetype=FORMATS[fmt].mimetype,
        headers={"Content-Disposition": content_disposition(name)},
    )


# ---------------------------------------------------------------- gold and practice


@bp.get("/campaigns/<int:campaign_id>/quality")
def quality(campaign_id: int):
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        page = {
            "campaign": campaign_info(c),
            "config": gold.quality_config(session, c.id),
            "gold": gold.gold_rows(session, c),
            "qrels_names": gold.qrels_set_names(session, c),
            "practice": calibration.items(session, c.id),
            "results": calibration.results(session, c.id),
            "names": {a.id: a.username for a in user_service.accounts(session)},
        }
    return render_template(
        "admin/quality.html", **page, sources=gold.SOURCES, max_share=gold.MAX_GOLD_SHARE
    )


def _share(text: str | None) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise ServiceError(
            f"the gold share must be a number such as 0.1 or 10%; got {text[:40]!r}"
        ) from None


@bp.post("/campaigns/<int:campaign_id>/quality/settings")
def settings(campaign_id: int):
    form = request.form
    with change("Quality settings saved.") as session:
        gold.set_quality(
            session,
            writable_campaign(session, campaign_id),
            gold_share=_share(form.get("gold_share")),
            gold_in_qrels=form.get("gold_in_qrels") == "1",
            show_gold_accuracy=form.get("show_gold_accuracy") == "1",
        )
    return back_to("quality.quality", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/gold/from")
def mark_from(campaign_id: int):
    form = request.form
    with change() as session:
        result = gold.mark_from(
            session,
            writable_campaign(session, campaign_id),
            form.get("source", "qrels"),
            qrels_name=form.get("qrels") or None,
            topics=[t for t in (form.get("topics") or "").replace(",", " ").split() if t] or None,
            per_topic=form_int(form.get("per_topic"), "documents per topic", minimum=1),
            seed=form_int(form.get("seed"), "seed", minimum=0, default=0),
            reason=(form.get("reason") or "")[:1000],
        )
        left = f" ({result.left_out()} left out)" if result.left_out() else ""
        flash(f"{result.marked} gold document(s) marked in {result.topics} topic(s){left}.", "info")
    return back_to("quality.quality", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/gold")
def mark_one(campaign_id: int):
    form = request.form
    with change("Gold document marked.") as session:
        c = writable_campaign(session, campaign_id)
        grade = form_int(form.get("grade"), "grade")
        if grade is None or not form.get("qid") or not form.get("docno"):
            raise ServiceError("give a topic, a document and its grade")
        item = gold.GoldItem(
            form["qid"].strip(), form["docno"].strip(), grade, (form.get("reason") or "")[:1000]
        )
        gold.mark(session, c, [item])
    return back_to("quality.quality", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/gold/remove")
def unmark(campaign_id: int):
    form = request.form
    with change() as session:
        n = gold.unmark(
            session,
            writable_campaign(session, campaign_id),
            qid=form.get("qid") or None,
            docno=form.get("docno") or None,
        )
        flash(f"{n} gold mark(s) removed.", "info")
    return back_to("quality.quality", campaign_id=campaign_id)


@bp.post("/campaigns/<int:campaign_id>/practice")
def set_practice(campaign_id: int):
    text = request.form.get("items") or ""
    with change() as session:
        c = writable_campaign(session, campaign_id)
        if len(text) > MAX_PRACTICE_TEXT:
            raise ServiceError(f"at most {MAX_PRACTICE_TEXT} characters of practice items")
        if not text.strip():
            n = calibration.clear(session, c)
            flash(f"Practice set removed ({n} item(s)).", "info")
        else:
            n = calibration.set_items(session, c, calibration.parse_items(text, "practice items"))
            flash(f"Practice set of {n} item(s) saved.", "info")
    return back_to("quality.quality", campaign_id=campaign_id)


# ---------------------------------------------------------------- the remainder


def _plan(
    session: Session, campaign_id: int, username: str, to: list[str]
) -> remainder_service.RemainderPlan:
    c = campaign_or_404(session, campaign_id)
    return remainder_service.remainder_plan(session, c, username, to=to or None)


@bp.get("/campaigns/<int:campaign_id>/remainder")
def remainder(campaign_id: int):
    """Choose an assessor; with ?assessor=NAME, what reassigning their remainder would do,
    and the button that does it."""
    name = (request.args.get("assessor") or "").strip()
    to = request.args.getlist("to")
    with get_store().read_session() as session:
        c = campaign_or_404(session, campaign_id)
        plan = None
        if name:
            try:
                plan = _plan(session, campaign_id, name, to)
            except NotFound:
                abort(404)
            except ServiceError as error:
                flash(str(error), "error")
        board = assessor_dashboard.assessor_dashboard(session, campaign_id)
        accounts = [a for a in user_service.accounts(session) if a.role == "assessor"]
        page = {"campaign": campaign_info(c), "plan": plan, "chosen": name, "to": to}
    return render_template("admin/remainder.html", **page, rows=board.rows, accounts=accounts)


@bp.post("/campaigns/<int:campaign_id>/remainder")
def reassign_remainder(campaign_id: int):
    form = request.form
    name = (form.get("assessor") or "").strip()
    if form.get("confirm") != "1":
        flash("Confirm the reassignment on this page first.", "error")
        return back_to("quality.remainder", campaign_id=campaign_id, assessor=name or None)
    with change() as session:
        plan = remainder_service.reassign_remainder(
            session,
            writable_campaign(session, campaign_id),
            name,
            to=form.getlist("to") or None,
        )
        flash(f"Reassigned: {plan.describe()}.", "info")
    return back_to("admin.assignments", campaign_id=campaign_id)
