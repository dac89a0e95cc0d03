"""Organisers' machine-judge pages: the prompt template, the judges, judging jobs with their
progress page, the hybrid designs, and the "how far to trust it" analysis.

Every view requires Permission.ADMINISTER (a `GuardedBlueprint`; assessors never see machine
labels); forms carry the CSRF token. A judging job runs in a process of its own
(`machine_jobs.launch`), which outlives the request; its page polls `…/jobs/<id>.json` and
shows a progress bar. Keys are never shown: a judge's page says where its key comes from.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from workbench.hybrid import REVIEW_ON, SAMPLE_DESIGNS
from workbench.judge_prompt import PLACEHOLDERS
from workbench.permissions import Permission
from workbench.services import campaigns as campaign_service
from workbench.services import machine_hybrid, machine_jobs, machine_judges, machine_report
from workbench.services.archive import refuse_if_archived
from workbench.services.errors import ServiceError
from workbench.services.pools import list_pools
from workbench.web.access import GuardedBlueprint
from workbench.web.db import get_store
from workbench.web.inputs import form_int

bp = GuardedBlueprint("machine", __name__, "/machine", permission=Permission.ADMINISTER)
REPORT_RESAMPLES = 1000  # app config MACHINE_REPORT_RESAMPLES overrides


def _back(campaign_id: int) -> ResponseReturnValue:
    return redirect(url_for("machine.index", campaign_id=campaign_id), code=303)


def _float(name: str, default: float) -> float:
    text = request.form.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ServiceError(f"{name} must be a number; got {text[:40]!r}") from None


@bp.get("/<int:campaign_id>")
def index(campaign_id: int) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        return render_template(
            "machine/index.html",
            campaign=campaign,
            judges=machine_judges.judge_infos(session, campaign),
            jobs=machine_jobs.list_jobs(session, campaign),
            pools=list_pools(session, campaign),
            template=machine_judges.campaign_template(session, campaign),
            parameters=machine_judges.PARAMETERS,
            placeholders=PLACEHOLDERS,
            designs=SAMPLE_DESIGNS,
            review_on=REVIEW_ON,
            combinations=machine_hybrid.COMBINATIONS,
            key_env=machine_judges.KEY_ENV,
        )


@bp.post("/<int:campaign_id>/template")
def set_template(campaign_id: int) -> ResponseReturnValue:
    reset = request.form.get("reset") == "1"
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            machine_judges.set_template(
                session, campaign, None if reset else request.form.get("template", "")
            )
        flash("Default template restored." if reset else "Template saved.", "info")
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id)


@bp.post("/<int:campaign_id>/judges")
def add_judge(campaign_id: int) -> ResponseReturnValue:
    settings = {p.name: request.form.get(p.name, "") for p in machine_judges.PARAMETERS}
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            judge = machine_judges.add_judge(
                session, campaign, model=request.form.get("model", ""),
                name=request.form.get("name") or None,
                base_url=request.form.get("base_url", ""),
                api_key_env=request.form.get("api_key_env", "").strip(),
                api_key=request.form.get("api_key", "").strip() or None, settings=settings,
            )  # fmt: skip
            flash(f"Machine judge {judge.name} added.", "info")
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id)


@bp.post("/<int:campaign_id>/jobs")
def start_job(campaign_id: int) -> ResponseReturnValue:
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            judge = machine_judges.get_judge(session, campaign, request.form.get("judge", ""))
            topics = request.form.get("topics", "").replace(",", " ").split() or None
            job = machine_jobs.create_job(
                session, campaign, judge,
                pool_number=form_int(request.form.get("pool"), "pool", minimum=1),
                topics=topics, only_unjudged=request.form.get("only_unjudged") == "1",
                concurrency=form_int(request.form.get("concurrency"), "concurrency",
                                     minimum=1, maximum=machine_jobs.MAX_CONCURRENCY, default=4),
                budget_calls=form_int(request.form.get("budget_calls"), "budget in calls",
                                      minimum=1),
                budget_tokens=form_int(request.form.get("budget_tokens"), "budget in tokens",
                                       minimum=1),
            )  # fmt: skip
            job_id = job.id
    except ServiceError as error:
        flash(str(error), "error")
        return _back(campaign_id)
    _launch(job_id)
    return redirect(url_for("machine.job", campaign_id=campaign_id, job_id=job_id), code=303)


def _launch(job_id: int) -> None:
    """Start the job's process, or call the app's MACHINE_JOB_RUNNER(store, job id) if set."""
    runner = current_app.config.get("MACHINE_JOB_RUNNER")
    if runner is not None:
        runner(get_store(), job_id)
    else:
        machine_jobs.launch(get_store(), job_id)


@bp.get("/<int:campaign_id>/jobs/<int:job_id>")
def job(campaign_id: int, job_id: int) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        info = machine_jobs.job_info(session, machine_jobs.get_job(session, campaign, job_id))
        return render_template("machine/job.html", campaign=campaign, job=info)


@bp.get("/<int:campaign_id>/jobs/<int:job_id>.json")
def job_json(campaign_id: int, job_id: int) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        info = machine_jobs.job_info(session, machine_jobs.get_job(session, campaign, job_id))
        return jsonify(info.to_dict())


@bp.post("/<int:campaign_id>/jobs/<int:job_id>/stop")
def stop_job(campaign_id: int, job_id: int) -> ResponseReturnValue:
    with get_store().session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        machine_jobs.request_stop(session, campaign, job_id)
    flash(f"Job {job_id} will stop after the questions in flight.", "info")
    return redirect(url_for("machine.job", campaign_id=campaign_id, job_id=job_id), code=303)


@bp.post("/<int:campaign_id>/jobs/<int:job_id>/resume")
def resume_job(campaign_id: int, job_id: int) -> ResponseReturnValue:
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        info = machine_jobs.job_info(session, machine_jobs.get_job(session, campaign, job_id))
        try:
            refuse_if_archived(campaign)
            refused = None
        except ServiceError as error:
            refused = str(error)
    if refused is not None:
        flash(refused, "error")
    elif not info.resumable:
        flash(f"Job {job_id} is {info.status}: nothing to resume.", "error")
    else:
        _launch(job_id)
    return redirect(url_for("machine.job", campaign_id=campaign_id, job_id=job_id), code=303)


@bp.post("/<int:campaign_id>/sample")
def sample(campaign_id: int) -> ResponseReturnValue:
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            judge = machine_judges.get_judge(session, campaign, request.form.get("judge", ""))
            pool = machine_hybrid.create_sample_pool(
                session, campaign, judge, design=request.form.get("design", "stratified"),
                share=_float("share", 0.1),
                pool_number=form_int(request.form.get("pool"), "pool", minimum=1),
                seed=form_int(request.form.get("seed"), "seed", minimum=0, default=0),
                include_flagged=request.form.get("no_flagged") != "1",
                name=request.form.get("name", ""),
            )  # fmt: skip
            flash(f"Pool {pool.number} holds the human sample: assign it on the Assignments "
                  "page.", "info")  # fmt: skip
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id)


@bp.post("/<int:campaign_id>/review")
def review(campaign_id: int) -> ResponseReturnValue:
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            judge = machine_judges.get_judge(session, campaign, request.form.get("judge", ""))
            pool, count = machine_hybrid.create_review_pool(
                session, campaign, judge, on=request.form.get("on", "relevance"),
                name=request.form.get("name", ""),
            )  # fmt: skip
            flash(f"Pool {pool.number}: {count} document(s) to review; assign it to other "
                  "assessors.", "info")  # fmt: skip
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id)


@bp.post("/<int:campaign_id>/qrels")
def save_qrels(campaign_id: int) -> ResponseReturnValue:
    try:
        with get_store().session() as session:
            campaign = campaign_service.get_campaign(session, campaign_id)
            judge = machine_judges.get_judge(session, campaign, request.form.get("judge", ""))
            combined = machine_hybrid.combined_qrels(
                session, campaign, judge,
                combination=request.form.get("combination", "hybrid"),
                assessor=request.form.get("assessor") or None,
            )  # fmt: skip
            if not combined.completeness.complete and request.form.get("allow_incomplete") != "1":
                raise ServiceError(combined.completeness.describe())
            machine_hybrid.save_qrels_set(session, campaign, combined,
                                          request.form.get("name", ""))  # fmt: skip
            flash(f"Qrels set {request.form.get('name', '').strip()!r} saved: evaluate on it "
                  "under Reports.", "info")  # fmt: skip
    except ServiceError as error:
        flash(str(error), "error")
    return _back(campaign_id)


@bp.get("/<int:campaign_id>/report")
def report(campaign_id: int) -> ResponseReturnValue:
    options: dict[str, Any] = {
        "measure": request.args.get("measure", "map").strip() or "map",
        "top_k": form_int(request.args.get("top_k"), "top k", minimum=2, maximum=1000,
                          default=5),
        "weights": request.args.get("weights", "linear"),
        "assessor": request.args.get("assessor") or None,
    }  # fmt: skip
    resamples = int(current_app.config.get("MACHINE_REPORT_RESAMPLES", REPORT_RESAMPLES))
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        result, refused = None, None
        try:
            result = machine_report.machine_report(session, campaign, n_resamples=resamples,
                                                   **options)  # fmt: skip
        except ServiceError as error:
            refused = str(error)
        return render_template(
            "machine/report.html",
            campaign=campaign,
            result=result,
            tables=machine_report.report_tables(result) if result else [],
            refused=refused,
            options=options,
        )
