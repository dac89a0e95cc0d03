"""Organisers' report pages: agreement and evaluation (with downloads); the adjudication
queue's views are `web.adjudication`'s, on this blueprint.

The evaluation page and its downloads are the report of `reports.pipeline` (a report job),
rendered section by section; a download is `reports.formats`' bytes, as the CLI and the API
give them.

Every view is admin-only. Plots are SVG drawn by `workbench.reports.plots`, embedded as
data: images (the content security policy allows them, and an image cannot run script).

The statistics (scipy) and plotting (matplotlib) modules are imported by the views that use
them, so that the app, and a server restarted after a crash, starts quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import (
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)

from workbench.permissions import Permission
from workbench.reports import plots
from workbench.reports.tables import FORMATS, render_all, to_json
from workbench.services import campaigns as campaign_service
from workbench.services.current_judgements import withdrawn_note
from workbench.services.errors import NotFound, ServiceError
from workbench.services.jobs import FAILED, JobState, Progress
from workbench.services.store_handle import Session
from workbench.web.access import GuardedBlueprint
from workbench.web.db import get_store
from workbench.web.downloads import content_disposition
from workbench.web.images import svg_image
from workbench.web.inputs import form_int
from workbench.web.report_jobs import page_job, request_page

if TYPE_CHECKING:
    from workbench.services.evaluation_report import ReportRequest

bp = GuardedBlueprint("reports", __name__, "/reports", permission=Permission.ADMINISTER)
bp.add_app_template_filter(svg_image, "svg_image")
BOOTSTRAP_RESAMPLES = 1000  # app config REPORT_BOOTSTRAP_RESAMPLES overrides
MAX_BOOTSTRAP_RESAMPLES = 10_000


@bp.get("/")
def index():
    with get_store().read_session() as session:
        campaigns = [{"id": c.id, "name": c.name} for c in campaign_service.list_campaigns(session)]
    return render_template("reports/index.html", campaigns=campaigns)


# ------------------------------------------------------------------------------ agreement


def _agreement_page(
    session: Session, campaign_id: int, params: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """The agreement page's context (a report job: bootstrap intervals take a while)."""
    from workbench.services.agreement import agreement_report
    from workbench.services.agreement_tables import groups_table, pairs_table

    campaign = campaign_service.get_campaign(session, campaign_id)

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
    from workbench.services.agreement_tables import agreement_tables

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
        return campaign_service.get_campaign(session, campaign_id).name


def _fresh_page(
    kind: str, campaign_id: int, params: dict[str, Any]
) -> tuple[JobState, dict[str, Any] | None]:
    """(state, context) where the context is from the campaign's current data, or from a job
    generation at least the one in ?generation=: the page's download links name the
    generation the page shows (the download is what the admin saw, even while judging goes
    on), and a progress page's reload the generation it queued."""
    state, page = request_page(kind, campaign_id, params)
    wanted = request.args.get("generation", "")
    after = int(wanted) if wanted.isascii() and wanted.isdigit() and len(wanted) < 19 else None
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
    """An agreement download (a table format of `reports.tables.FORMATS`)."""
    download = FORMATS[fmt]
    return Response(
        text,
        mimetype=download.mimetype,
        headers={"Content-Disposition": content_disposition(f"{stem}.{download.extension}")},
    )


# ----------------------------------------------------------------------------- evaluation


def report_request() -> ReportRequest:
    """The report's request from the query string (`reports.pipeline.parse`: the parser of
    the CLI and the API); a malformed parameter is a ServiceError (400)."""
    from workbench.reports.pipeline import parse

    return parse({name: request.args.getlist(name) for name in request.args})


def _evaluation_page(
    session: Session, campaign_id: int, params: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """The evaluation page's context (a report job): the `Report`, or the reason no report
    can be made for this request ("error")."""
    from workbench.reports.pipeline import build_report
    from workbench.services.evaluation_inputs import qrels_choices
    from workbench.services.evaluation_report import ReportRequest
    from workbench.services.pools import list_pools

    campaign = campaign_service.get_campaign(session, campaign_id)
    page: dict[str, Any] = {"report": None, "error": None}
    page["qrels_choices"] = qrels_choices(session, campaign)
    page["pool_choices"] = [f"{p.number} ({p.strategy})" for p in list_pools(session, campaign)]
    try:
        request_ = ReportRequest.from_params(params)
        page["report"] = build_report(session, campaign, request_, progress)
    except ServiceError as error:
        page["error"] = str(error)
    return page


def _trec_page(
    session: Session, campaign_id: int, params: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """The trec download's text (a report job of its own: no report is built for it)."""
    from workbench.services.evaluation_report import ReportRequest, trec_output

    progress("evaluating the runs")
    try:
        campaign = campaign_service.get_campaign(session, campaign_id)
        output = trec_output(session, campaign, ReportRequest.from_params(params))
    except ServiceError as error:
        return {"error": str(error)}
    return {"error": None, "data": output.text.encode()}


page_job("evaluation", _evaluation_page)
page_job("evaluation-trec", _trec_page)


def report_file(
    campaign_id: int, fmt: str, params: dict[str, Any], *, fresh: bool
) -> tuple[JobState, bytes | None, str | None]:
    """(the job's state, the report's bytes in `fmt` when ready, the reason there are none):
    the web's downloads and the API's report.FMT. `fresh`: only a result from the campaign's
    current data (the API); otherwise as `_fresh_page` (the page's download links)."""
    from workbench.reports.formats import render_report

    kind = "evaluation-trec" if fmt == "trec" else "evaluation"
    if fresh:
        state, page = request_page(kind, campaign_id, params)
        page = page if state.fresh else None
    else:
        state, page = _fresh_page(kind, campaign_id, params)
    if page is None:
        return state, None, state.error if state.status == FAILED else None
    if page["error"]:
        return state, None, page["error"]
    data = page["data"] if fmt == "trec" else render_report(page["report"], fmt)
    return state, data, None


def file_response(data: bytes, campaign_name: str, fmt: str) -> Response:
    """The report's bytes as a download named CAMPAIGN-evaluation.EXTENSION."""
    from workbench.reports.formats import REPORT_FORMATS, file_name

    return Response(
        data,
        mimetype=REPORT_FORMATS[fmt].mimetype,
        headers={"Content-Disposition": content_disposition(file_name(campaign_name, fmt))},
    )


def _form_values(params: dict[str, Any]) -> dict[str, list[str]]:
    """The request's parameters as the form's texts (what a query string carries)."""
    values: dict[str, list[str]] = {}
    for name, value in [*params.items(), *params.get("options", [])]:
        if name == "options" or value is None or value is False or value in ((), []):
            continue
        if value is True:
            values[name] = ["1"]
        elif isinstance(value, list | tuple):
            values[name] = [str(v) for v in value]
        else:
            values[name] = [str(value)]
    return values


@bp.get("/<int:campaign_id>/evaluation")
def evaluation(campaign_id: int):
    from workbench.reports.formats import REPORT_FORMATS
    from workbench.reports.pipeline import REPORT_OPTIONS

    name = _campaign_name(campaign_id)
    context = {
        "campaign": {"id": campaign_id, "name": name},
        "options": REPORT_OPTIONS,
        "formats": list(REPORT_FORMATS),
    }
    try:
        params = report_request().to_params()
    except ServiceError as error:  # the form stays, with what was typed and why it is refused
        given = {k: request.args.getlist(k) for k in request.args}
        html = render_template(
            "reports/evaluation.html", job=None, choice=given, report=None, error=str(error),
            qrels_choices=[], pool_choices=[], **context,
        )  # fmt: skip
        return html, 400
    state, page = request_page("evaluation", campaign_id, params)
    if page is None:
        return _progress(state, campaign_id, name, "Evaluation")
    return render_template(
        "reports/evaluation.html", job=state, choice=_form_values(params), **context, **page
    )


@bp.get("/<int:campaign_id>/evaluation.<fmt>")
def evaluation_download(campaign_id: int, fmt: str):
    """The report in `fmt` (`reports.formats.REPORT_FORMATS`): the bytes of `workbench
    evaluate --format FMT` and of the API's report.FMT for the same parameters."""
    from workbench.reports.formats import REPORT_FORMATS

    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no {fmt!r} download; formats: {', '.join(REPORT_FORMATS)}")
    name = _campaign_name(campaign_id)
    params = report_request().to_params()
    state, data, reason = report_file(campaign_id, fmt, params, fresh=False)
    if reason is not None:
        flash(reason, "error")
        query: dict[str, Any] = request.args.to_dict(flat=False)
        query.pop("generation", None)
        return redirect(url_for("reports.evaluation", campaign_id=campaign_id, **query))
    if data is None:
        return _progress(state, campaign_id, name, "Evaluation download")
    return file_response(data, name, fmt)
