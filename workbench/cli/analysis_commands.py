"""`workbench agreement`, `adjudicate` and `evaluate`: thin commands over the services."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.agreement import MERGE_RULES, TIE_RULES
from workbench.cli.common import (
    campaign_option,
    choice_option,
    emit,
    fail,
    number_option,
    output_option,
    refusals,
    seed_option,
    table_format_option,
    transaction,
)
from workbench.reports.evaluation import EVALUATION_FORMATS
from workbench.services.evaluation import TOPIC_SETS
from workbench.services.evaluation_report import REUSABILITY_UNITS
from workbench.stats import CORRECTIONS, PAIRED_TESTS


def _refuse_summary_only(measures: list[str]) -> None:
    """Measures with no per-topic value (gm_map, gm_bpref, runid, num_q) have no place in the
    runs x measures tables and the paired tests: refused with the reason, not dropped."""
    from workbench.metrics import MeasureError
    from workbench.metrics.names import resolve

    try:
        summary_only = [m.name for m in resolve(measures) if not m.family.per_topic]
    except MeasureError as error:
        fail(str(error))
    if summary_only:
        fail(
            f"{', '.join(summary_only)}: trec_eval gives no per-topic value, so there is nothing "
            "to tabulate per run or to test per topic; use --format trec, which prints it in "
            "each run's summary (gm_map's per-topic counterpart is map)"
        )


def _trec_eval_output(qrels, runs, measures: list[str], level: int) -> str:
    """``trec_eval -c -q -l LEVEL -m ... QRELS RUN`` for each run in turn, byte for byte, on
    the qrels of the evaluated topics (the campaign convention: a topic a run lacks scores 0,
    as trec_eval's -c): the measures asked for in trec_eval's order, summary-only ones
    (gm_map) in the summary, runid only with ``-m runid``."""
    from workbench.metrics import MeasureError
    from workbench.metrics import evaluate as evaluate_run
    from workbench.metrics.report import report_lines
    from workbench.trec import Run

    parts: list[str] = []
    for run in runs:
        try:
            result = evaluate_run(
                qrels,
                Run.from_dict(run.as_dict(), tag=run.tag),
                measures,
                relevance_level=level,
                average_over_all_topics=True,
            )
        except (MeasureError, ValueError) as error:
            fail(str(error))
        parts.extend(report_lines(result, per_topic=True))
    return "".join(parts)


@click.command()
@campaign_option
@click.option("--graded", is_flag=True, help="Agreement on grades (default: binary labels).")
@table_format_option
@number_option(
    "--bootstrap",
    "n_bootstrap",
    type=click.IntRange(min=0),
    default=1000,
    help="Topic-bootstrap resamples for the kappa intervals.",
)
@seed_option
@output_option
@click.pass_context
def agreement(
    ctx: click.Context,
    campaign_name: str,
    graded: bool,
    fmt: str,
    n_bootstrap: int,
    seed: int,
    output: Path | None,
) -> None:
    """Inter-assessor agreement: overall, per topic, per pair, each assessor vs the others."""
    from workbench.reports.agreement import agreement_tables
    from workbench.reports.tables import render_all, to_json
    from workbench.services.agreement import agreement_report
    from workbench.services.campaigns import get_campaign

    with transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        report = agreement_report(
            session, campaign, graded=graded, n_bootstrap=n_bootstrap, seed=seed
        )
    if not report.per_pair:
        fail(f"campaign {report.campaign!r} has no document judged by two assessors")
    if fmt == "json":
        emit(to_json(report), output)
    else:
        separator = "\n" if fmt == "text" else ""
        emit(render_all(agreement_tables(report), fmt, separator), output)


@click.command()
@campaign_option
@choice_option(
    "--rule",
    choices=MERGE_RULES,
    required=True,
    help="How the judges' grades merge into the final label.",
)
@click.option("--primary", default=None, help="The primary assessor's username (--rule primary).")
@choice_option(
    "--tie",
    choices=TIE_RULES,
    default="adjudicate",
    help="Majority ties: to the queue, or the higher/lower grade.",
)
@click.option("--topics", default=None, help="Only these topics (QID,QID,...): a batch.")
@click.option("--reason", default="", help="One reason recorded for the batch's labels.")
@click.pass_context
def adjudicate(
    ctx: click.Context,
    campaign_name: str,
    rule: str,
    primary: str | None,
    tie: str,
    topics: str | None,
    reason: str,
) -> None:
    """Set the final label of every judged document by a merge rule (adjudicators'
    decisions are kept); report what is left for the adjudication queue."""
    from workbench.services.adjudication import MergeSpec, apply_rule
    from workbench.services.campaigns import get_campaign
    from workbench.services.importing import topic_list

    with transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        summary = apply_rule(
            session,
            campaign,
            MergeSpec(rule, tie, primary),
            topics=topic_list(topics) if topics else None,
            reason=reason,
        )
    click.echo(summary.message())


@click.command()
@campaign_option
@click.option(
    "--qrels",
    "qrels_spec",
    default="final",
    show_default=True,
    help="'final', an assessor's username, a qrels set name, a qrels file, or clicks:LOG "
    "(runs on a query log's click preferences beside the --against qrels).",
)
@click.option(
    "--against",
    default="final",
    show_default=True,
    help="With --qrels clicks:LOG: the assessors' qrels to rank the runs by as well.",
)
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="trec_eval measure names or aliases (repeatable; default map, P.10, ndcg_cut.10).",
)
@choice_option(
    "--test",
    choices=PAIRED_TESTS,
    default="t",
    help="The paired test: " + "; ".join(f"{k}: {v.label}" for k, v in PAIRED_TESTS.items()),
)
@choice_option(
    "--correction",
    choices=CORRECTIONS,
    default="holm",
    help="Multiple-comparison correction: "
    + "; ".join(f"{k}: {v}" for k, v in CORRECTIONS.items()),
)
@number_option("--alpha", type=click.FloatRange(0, 1, min_open=True), default=0.05)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(tuple(EVALUATION_FORMATS)),
    default="text",
    help="trec = trec_eval -q's output for the same -m flags (and -l), run after run.",
)
@click.option(
    "-l",
    "--level",
    "relevance_level",
    type=int,
    default=None,
    help="Relevance level (default: the campaign's).",
)
@click.option(
    "--stability",
    is_flag=True,
    help="Also rank the runs under each assessor's qrels (Kendall tau, tau_AP).",
)
@choice_option(
    "--reusability",
    choices=REUSABILITY_UNITS,
    help="Also leave-one-run-out or leave-one-group-out on the latest pool.",
)
@click.option("--per-topic", is_flag=True, help="Also a topics x runs table per measure.")
@click.option(
    "--notes",
    "extended",
    is_flag=True,
    help="Also the course notes' sections: collection-scale set measures, power and topic-set "
    "size, efficiency, interleaving (and a sweep with --sweep).",
)
@number_option(
    "--num-docs",
    type=click.IntRange(min=1),
    default=None,
    help="With --notes: the collection size N (default: the campaign's documents).",
)
@click.option(
    "--sweep",
    "sweep_pattern",
    default=None,
    help="With --notes: the runs' tag pattern of a parameter grid, e.g. 'bm25_b={b}'.",
)
@choice_option(
    "--topic-set",
    choices=TOPIC_SETS,
    default="all",
    help="; ".join(f"{k}: {v}" for k, v in TOPIC_SETS.items()),
)
@click.option(
    "--allow-incomplete",
    is_flag=True,
    help="Evaluate final or assessor qrels although documents lack a label (the report says so).",
)
@output_option
@click.pass_context
def evaluate(
    ctx: click.Context,
    campaign_name: str,
    qrels_spec: str,
    against: str,
    measures: tuple[str, ...],
    test: str,
    correction: str,
    alpha: float,
    fmt: str,
    relevance_level: int | None,
    stability: bool,
    reusability: str | None,
    per_topic: bool,
    extended: bool,
    num_docs: int | None,
    sweep_pattern: str | None,
    topic_set: str,
    allow_incomplete: bool,
    output: Path | None,
) -> None:
    """Evaluate every run of a campaign and compare every pair with a paired test."""
    from workbench.reports import evaluation as report
    from workbench.reports.extended import extended_tables
    from workbench.reports.tables import render_all, to_json
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign
    from workbench.services.evaluation_report import (
        EvaluationRequest,
        NotesOptions,
        evaluation_report,
    )

    if qrels_spec.startswith("clicks:"):
        from workbench.cli.querylog_commands import click_evaluation_text

        measure = measures[0] if measures else service.DEFAULT_MEASURES[0]
        text = click_evaluation_text(ctx, campaign_name, qrels_spec[7:], against, measure, fmt)
        emit(text, output)
        return
    if fmt != "trec":
        _refuse_summary_only(list(measures) or list(service.DEFAULT_MEASURES))
    with refusals():
        request = EvaluationRequest(
            qrels=qrels_spec,
            measures=measures,
            test=test,
            correction=correction,
            alpha=alpha,
            relevance_level=relevance_level,
            topic_set=topic_set,
            allow_incomplete=allow_incomplete,
            allow_files=True,
            stability=stability,
            reusability=(reusability,) if reusability else (),
            notes=NotesOptions(num_docs=num_docs, sweep=sweep_pattern or "") if extended else None,
        )
    with transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        result = evaluation_report(session, campaign, request)
        if fmt == "trec":  # the same qrels, for trec_eval's own output
            trec_qrels = service.resolve_qrels(
                session, campaign, qrels_spec, allow_files=True, allow_incomplete=True
            )
    table = result.table
    if result.warning:
        click.echo(f"warning: {result.warning}", err=True)
    if fmt in ("trec", "csv"):  # formats without a caption: the notes go to stderr
        for note in result.notes():
            click.echo(f"note: {note}", err=True)
    if fmt == "trec":
        qrels = {q: trec_qrels.qrels[q] for q in table.topics_evaluated}
        chosen = request.chosen_measures
        emit(_trec_eval_output(qrels, result.runs, chosen, table.relevance_level), output)
        return
    if fmt == "json":
        emit(to_json(result.to_dict()), output)
        return
    tables = [report.runs_table(table, result.comparisons)]
    if fmt != "csv":
        if per_topic:
            tables.extend(report.per_topic_table(table, m) for m in table.measures)
        tables.append(report.comparisons_table(result.comparisons))
        if result.stability is not None:
            tables.append(report.stability_table(result.stability))
        tables.extend(report.reusability_table(r) for r in result.reusability.values())
        if result.notes_sections is not None:
            tables.extend(extended_tables(result.notes_sections))
    emit(render_all(tables, fmt), output)
