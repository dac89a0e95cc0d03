"""Organisers' report pages: agreement and evaluation (with downloads); the adjudication
queue's views are `web.adjudication`'s, on this blueprint.

Every view is admin-only. Plots are SVG drawn by `workbench.reports.plots`, embedded as
data: images (the content security policy allows them, and an image cannot run script).

The statistics (scipy) and plotting (matplotlib) modules are imported by the views that use
them, so that the app, and a server restarted after a crash, starts quickly.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import (
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)

from workbench.reports import plots
from workbench.reports.tables import FORMATS, render, render_all, to_json
from workbench.services import campaigns as campaign_service
from workbench.services.current_judgements import withdrawn_note
from workbench.services.errors import NotFound, ServiceError
from workbench.services.jobs import JobState
from workbench.services.store_handle import Session
from workbench.web.db import get_store
from workbench.web.downloads import content_disposition
from workbench.web.images import svg_image
from workbench.web.inputs import form_int
from workbench.web.report_jobs import page_job, request_page
from workbench.web.security import admin_blueprint

bp = admin_blueprint("reports", __name__, "/reports")
BOOTSTRAP_RESAMPLES = 1000  # app config REPORT_BOOTSTRAP_RESAMPLES overrides
MAX_BOOTSTRAP_RESAMPLES = 10_000


@bp.get("/")
def index():
    with get_store().read_session() as session:
        campaigns = [{"id": c.id, "name": c.name} for c in campaign_service.list_campaigns(session)]
    return render_template("reports/index.html", campaigns=campaigns)


def _campaign(session: Session, campaign_id: int) -> Any:
    """The campaign (a store object for the services; NotFound: a 404)."""
    return campaign_service.get_campaign(session, campaign_id)


# ------------------------------------------------------------------------------ agreement


def _agreement_page(
    session: Session, campaign: Any, params: dict[str, Any], progress: Any
) -> dict[str, Any]:
    """The agreement page's context (a report job: bootstrap intervals take a while)."""
    from workbench.reports.agreement import groups_table, pairs_table
    from workbench.services.agreement import agreement_report

    progress("agreement with bootstrap intervals")
    report = agreement_report(
        session,
        campaign,
        graded=params["graded"],
        n_bootstrap=params["n_bootstrap"],
        seed=params.get("seed", 0),
    )
    progress("confusion matrices")
    heatmaps = [
        {
            "title": f"{p.first} vs {p.second}",
            "src": svg_image(
                plots.confusion_heatmap(p.confusion, p.labels, first=p.first, second=p.second)
            ),
        }
        for p in report.per_pair
    ]
    return {
        "campaign": {"id": campaign.id, "name": campaign.name},
        "withdrawn": withdrawn_note(session, campaign),
        "graded": params["graded"],
        "params": params,
        "report": report,
        "groups": groups_table(report),
        "pairs": pairs_table(report.per_pair, report, title="Agreement per pair of assessors"),
        "assessors": pairs_table(
            report.per_assessor, report, title="Each assessor against the others"
        ),
        "heatmaps": heatmaps,
    }


page_job("agreement", _agreement_page)


def _agreement_request() -> dict[str, Any]:
    """Binary or graded agreement and the bootstrap's resamples (0: no intervals; default
    the app's REPORT_BOOTSTRAP_RESAMPLES) and seed, as `workbench agreement` takes them."""
    default = int(current_app.config.get("REPORT_BOOTSTRAP_RESAMPLES", BOOTSTRAP_RESAMPLES))
    return {
        "graded": request.args.get("graded") == "1",
        "n_bootstrap": form_int(
            request.args.get("bootstrap"),
            "bootstrap resamples",
            minimum=0,
            maximum=MAX_BOOTSTRAP_RESAMPLES,
            default=default,
        ),
        "seed": form_int(request.args.get("seed"), "seed", minimum=0, default=0),
    }


@bp.get("/<int:campaign_id>/agreement")
def agreement(campaign_id: int):
    params = _agreement_request()
    name = _campaign_name(campaign_id)
    state, page = request_page("agreement", campaign_id, params)
    if page is None:
        return _progress(state, campaign_id, name, "Agreement")
    return render_template("reports/agreement.html", job=state, formats=list(FORMATS), **page)


@bp.get("/<int:campaign_id>/agreement.<fmt>")
def agreement_download(campaign_id: int, fmt: str):
    """The agreement tables as CSV, Markdown or LaTeX, or the whole report as JSON."""
    from workbench.reports.agreement import agreement_tables

    if fmt not in FORMATS:
        raise NotFound(f"no {fmt!r} download; formats: {', '.join(FORMATS)}")
    name = _campaign_name(campaign_id)
    state, page = _fresh_page("agreement", campaign_id, _agreement_request())
    if page is None:
        return _progress(state, campaign_id, name, "Agreement download")
    report = page["report"]
    text = to_json(report) if fmt == "json" else render_all(agreement_tables(report), fmt)
    return _attachment(text, fmt, f"{name}-agreement")


# ---------------------------------------------------------------------------- report jobs


def _campaign_name(campaign_id: int) -> str:
    """The campaign's name (404 when there is none)."""
    with get_store().read_session() as session:
        return _campaign(session, campaign_id).name


def _fresh_page(
    kind: str, campaign_id: int, params: dict[str, Any]
) -> tuple[JobState, dict[str, Any] | None]:
    """(state, context) where the context is from the campaign's current data, or from a job
    generation at least the one in ?generation=: the page's download links name the
    generation the page shows (the download is what the admin saw, even while judging goes
    on), and a progress page's reload the generation it queued."""
    state, page = request_page(kind, campaign_id, params)
    wanted = request.args.get("generation", "")
    after = int(wanted) if wanted.isdigit() else None
    if page is not None and (
        state.fresh or (after is not None and state.result_generation >= after)
    ):
        return state, page
    return state, None


def _progress(state: JobState, campaign_id: int, campaign_name: str, title: str) -> str:
    """The job's progress (or its error); reloads itself while the job runs. A download's
    reload asks for the generation now queued, so that it ends even while judging goes on."""
    values: dict[str, Any] = {
        **(request.view_args or {}),
        **request.args.to_dict(flat=False),
        "generation": str(state.generation),
    }
    return render_template(
        "reports/job.html",
        campaign={"id": campaign_id, "name": campaign_name},
        title=title,
        state=state,
        refresh=state.pending,
        reload_url=url_for(request.endpoint or "", **values),
    )


def _attachment(text: str, fmt: str, stem: str) -> Response:
    from workbench.reports.evaluation import EVALUATION_FORMATS

    download = EVALUATION_FORMATS[fmt]
    return Response(
        text,
        mimetype=download.mimetype,
        headers={"Content-Disposition": content_disposition(f"{stem}.{download.extension}")},
    )


# ----------------------------------------------------------------------------- evaluation


def _evaluation_request() -> dict[str, Any]:
    """The evaluation's parameters from the query string, checked (`EvaluationRequest`: an
    unknown test, correction or topic set is a 400 with the reason, as the CLI refuses it),
    as the report job's JSON parameters."""
    from workbench.services.evaluation_report import EvaluationRequest
    from workbench.web.extended_report import notes_options

    measures = [m for m in request.args.getlist("measure") if m.strip()]
    measures += [m for m in request.args.get("measures", "").replace(",", " ").split() if m]
    alpha = request.args.get("alpha", "").strip()
    try:
        chosen_alpha = float(alpha) if alpha else 0.05
    except ValueError:
        raise ServiceError(f"alpha must be a number between 0 and 1; got {alpha[:40]!r}") from None
    return EvaluationRequest(
        qrels=request.args.get("qrels", "final"),
        measures=tuple(measures),
        test=request.args.get("test", "t"),
        correction=request.args.get("correction", "holm"),
        alpha=chosen_alpha,
        relevance_level=form_int(request.args.get("level"), "relevance level", minimum=0),
        topic_set=request.args.get("topic_set", "all"),
        allow_incomplete=request.args.get("allow_incomplete") == "1",
        tukey=True,
        curves=True,
        stability=True,
        reusability=("run", "group"),
        notes=notes_options(),
    ).to_dict()


def _evaluation_page(
    session: Session, campaign: Any, choice: dict[str, Any], progress: Any
) -> dict[str, Any]:
    """The evaluation page's context (a report job: tests, stability and reusability take a
    while). A report the campaign cannot have sets "error"."""
    from workbench.reports import evaluation as report
    from workbench.services import evaluation as service
    from workbench.services.evaluation_report import EvaluationRequest, evaluation_report
    from workbench.web.extended_report import notes_page

    page: dict[str, Any] = {"choice": choice, "error": None}
    page["campaign"] = {"id": campaign.id, "name": campaign.name}
    page["qrels_choices"] = service.qrels_choices(session, campaign)
    try:
        result = evaluation_report(session, campaign, EvaluationRequest.from_dict(choice), progress)
    except ServiceError as error:
        page["error"] = str(error)
        return page
    table, comparisons, first = result.table, result.comparisons, result.measure
    progress("tables and plots")
    # without the loaded runs (each ranked list of every run: 120 MB for a run of 5 million
    # lines), which no page or download reads: the result is stored and read at every view
    page["report"] = dataclasses.replace(result, runs=[])
    page["warning"] = result.warning
    page["runs"] = report.runs_table(table, comparisons)
    page["notes"] = result.notes()
    page["comparisons"] = report.comparisons_table(comparisons)
    page["tukey"] = report.tukey_table(result.tukey, first) if result.tukey is not None else None
    page["per_topic"] = report.per_topic_table(table, first)
    page["bars"] = svg_image(
        plots.per_topic_bars(
            {r.tag: {q: v[first] for q, v in r.per_topic.items()} for r in table.runs},
            table.topics(),
            measure=first,
        )
    )
    page["curves"] = svg_image(plots.precision_recall_curves(result.curves or {}))
    page["stability"] = (
        report.stability_table(result.stability) if result.stability is not None else None
    )
    page["reusability"] = [report.reusability_table(r) for r in result.reusability.values()]
    page["unavailable"] = result.unavailable
    if result.notes_sections is not None:
        page["course_notes"] = notes_page(result.notes_sections, choice["notes"])
    return page


page_job("evaluation", _evaluation_page)


@bp.get("/<int:campaign_id>/evaluation")
def evaluation(campaign_id: int):
    from workbench.stats import CORRECTIONS, PAIRED_TESTS

    name = _campaign_name(campaign_id)
    state, page = request_page("evaluation", campaign_id, _evaluation_request())
    if page is None:
        return _progress(state, campaign_id, name, "Evaluation")
    tests = {key: test.label for key, test in PAIRED_TESTS.items()}
    from workbench.reports.evaluation import EVALUATION_FORMATS

    return render_template(
        "reports/evaluation.html",
        tests=tests,
        corrections=CORRECTIONS,
        formats=list(EVALUATION_FORMATS),
        job=state,
        **page,
    )


@bp.get("/<int:campaign_id>/evaluation.<fmt>")
def evaluation_download(campaign_id: int, fmt: str):
    from workbench.reports import evaluation as report

    if fmt not in report.EVALUATION_FORMATS:
        raise NotFound(f"no {fmt!r} download; formats: {', '.join(report.EVALUATION_FORMATS)}")
    name = _campaign_name(campaign_id)
    state, page = _fresh_page("evaluation", campaign_id, _evaluation_request())
    if page is None:
        return _progress(state, campaign_id, name, "Evaluation download")
    if page["error"]:
        flash(page["error"], "error")
        return redirect(url_for("reports.evaluation", campaign_id=campaign_id))
    result = page["report"]
    if fmt == "trec":
        text = report.trec_eval_text(result.table)
    elif fmt == "json":
        text = to_json(result.to_dict())
    else:
        text = render(report.runs_table(result.table, result.comparisons), fmt)
    return _attachment(text, fmt, f"{name}-evaluation")
