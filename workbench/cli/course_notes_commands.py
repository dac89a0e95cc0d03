"""Commands for the course notes' further analyses: collection-scale set measures, power and
topic-set size, parameter sweeps, interleaving, and run efficiency figures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from workbench import interleaving
from workbench.cli.common import (
    campaign_option,
    choice_option,
    emit,
    fail,
    files_level_option,
    measure_option,
    number_option,
    optional_campaign_option,
    output_option,
    qrels_option,
    seed_option,
    svg_option,
    table_format_option,
    transaction,
)
from workbench.stats import PAIRED_TESTS
from workbench.trec import TrecFormatError

QRELS_HELP = "'final', an assessor, a qrels set name, or a qrels file."


def _emit_report(report: object, tables: list, fmt: str, output: Path | None) -> None:
    """The report as JSON, or its tables in one document (unique LaTeX labels)."""
    from workbench.reports.tables import render_all, to_json

    emit(to_json(report) if fmt == "json" else render_all(tables, fmt), output)


@click.command("collection-measures")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@optional_campaign_option
@qrels_option(f"With --campaign: {QRELS_HELP}")
@number_option(
    "--num-docs",
    "-N",
    type=click.IntRange(min=1),
    default=None,
    help="Collection size N (default with --campaign: its document count).",
)
@files_level_option
@click.option("-q", "per_topic", is_flag=True, help="Files only: also one line per topic.")
@table_format_option
@output_option
@click.pass_context
def collection_measures(
    ctx: click.Context,
    files: tuple[str, ...],
    campaign_name: str | None,
    qrels_spec: str,
    num_docs: int | None,
    relevance_level: int,
    per_topic: bool,
    fmt: str,
    output: Path | None,
) -> None:
    """Accuracy, error, fallout, precision, recall, (P+R)/2 and F1 at collection scale.

    Either QRELS RUN [RUN ...] with --num-docs N, or --campaign (N = its document count
    unless --num-docs is given).
    """
    from workbench.metrics.collection import IMBALANCE_NOTE, MEASURES, collection_set_measures
    from workbench.reports.extended import collection_scale_table
    from workbench.reports.tables import render, to_json
    from workbench.tabular import Cell, Table, cells

    if campaign_name is None:
        if len(files) < 2 or num_docs is None:
            fail("give QRELS RUN [RUN ...] and --num-docs N, or --campaign")
        assert num_docs is not None
        from workbench.run_files import runs_by_tag
        from workbench.trec import read_qrels

        try:
            qrels = read_qrels(files[0])
            rows: list[list[Cell]] = []
            for tag, run in runs_by_tag(files[1:]).items():
                result = collection_set_measures(
                    qrels, run, num_docs, relevance_level=relevance_level
                )
                if per_topic:
                    rows.extend(
                        cells(tag, qid, *(getattr(m, name) for name in MEASURES))
                        for qid, m in result.per_topic.items()
                    )
                rows.append(cells(tag, "all", *(result.mean[name] for name in MEASURES)))
        except (TrecFormatError, ValueError) as error:
            fail(str(error))
        table = Table(
            ["Run", "Topic", *MEASURES],
            rows,
            digits=6,
            caption=f"Set measures at collection scale, N = {num_docs:,} documents.",
            notes=[IMBALANCE_NOTE],
        )
        emit(render(table, fmt), output)
        return
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign
    from workbench.services.evaluation_inputs import Scope, load_runs
    from workbench.services.extended_evaluation import collection_scale, document_count

    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        scope = Scope(load_runs(session, campaign))
        evaluated = service.evaluate_campaign(
            session, campaign, qrels_spec, ["map"], scope=scope, allow_files=True
        )
        named = scope.qrels(session, campaign, qrels_spec, allow_files=True)
        scale = collection_scale(
            evaluated, named, scope.loaded_runs(session, campaign), num_docs=num_docs,
            documents=document_count(session, campaign),
        )  # fmt: skip
    emit(to_json(scale) if fmt == "json" else render(collection_scale_table(scale), fmt), output)


@click.command()
@optional_campaign_option
@qrels_option(QRELS_HELP)
@measure_option()
@choice_option(
    "--test",
    choices=PAIRED_TESTS,
    default="t",
    help="The paired test whose detectable difference is reported.",
)
@number_option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05)
@number_option(
    "--power",
    "target",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.8,
    help="The power to design for (1 - beta).",
)
@number_option(
    "--delta",
    type=click.FloatRange(0, min_open=True),
    default=None,
    help="Minimum difference to detect: how many topics it needs.",
)
@number_option(
    "--variance",
    type=click.FloatRange(0, min_open=True),
    default=None,
    help="Without --campaign: the within-system variance (e.g. V_E of past data).",
)
@number_option(
    "--topics",
    type=click.IntRange(min=2),
    default=50,
    help="Without --campaign: the number of topics.",
)
@number_option(
    "--systems",
    type=click.IntRange(min=2),
    default=2,
    help="Without --campaign: the number of systems (ANOVA).",
)
@table_format_option
@output_option
@click.pass_context
def power(
    ctx: click.Context,
    campaign_name: str | None,
    qrels_spec: str,
    measure: str,
    test: str,
    alpha: float,
    target: float,
    delta: float | None,
    variance: float | None,
    topics: int,
    systems: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Detectable difference per pair of runs, and topic-set size design (Sakai 2016).

    No achieved power at the observed effect: that post-hoc power is a function of the
    p-value (Hoenig & Heisey 2001).

    With --campaign: from its runs' scores (residual variance of the two-way ANOVA). Without:
    from --variance, --topics and --systems.
    """
    from workbench import power as design
    from workbench.reports.tables import render, to_json
    from workbench.tabular import Table, cells

    if campaign_name is None:
        if variance is None:
            fail("give --campaign, or --variance (with --topics, --systems, --delta)")
        assert variance is not None
        try:
            result = design.topic_set_size(
                variance,
                n_topics=topics,
                systems=systems,
                alpha=alpha,
                power=target,
                min_difference=delta,
            )
        except ValueError as error:
            fail(str(error))
        if fmt == "json":
            emit(to_json(result), output)
            return
        rows = [
            cells("detectable difference (paired t-test)", result.detectable_difference),
            cells(f"detectable range (one-way ANOVA, {systems} systems)", result.detectable_range),
        ]
        if delta is not None:
            rows += [
                cells(f"topics to detect {delta:g} (paired t-test)", result.topics_t_test),
                cells(f"topics to detect a range {delta:g} (one-way ANOVA)", result.topics_anova),
            ]
        table = Table(["Topic-set size design", measure], rows, caption=result.sentence(measure))
        emit(render(table, fmt), output)
        return
    from workbench.reports.extended import power_table, topic_set_size_table
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign
    from workbench.services.extended_evaluation import power_analysis

    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        evaluation = service.evaluate_campaign(
            session, campaign, qrels_spec, [measure], allow_files=True
        )
        analysis = power_analysis(
            evaluation, test=test, alpha=alpha, power=target, min_difference=delta
        )
    _emit_report(analysis, [topic_set_size_table(analysis), power_table(analysis)], fmt, output)


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@optional_campaign_option
@qrels_option(f"With --campaign: {QRELS_HELP}")
@click.option("--pattern", default=None, help="Tag pattern, e.g. 'bm25_k1={k1}_b={b}'.")
@click.option(
    "--mapping",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="CSV/TSV file with a header 'tag,<parameter>...'.",
)
@measure_option()
@files_level_option
@number_option("--folds", type=click.IntRange(min=2), default=5)
@seed_option
@svg_option("Write an SVG: heat map over the first two parameters (a curve for one).")
@table_format_option
@output_option
@click.pass_context
def sweep(
    ctx: click.Context,
    files: tuple[str, ...],
    campaign_name: str | None,
    qrels_spec: str,
    pattern: str | None,
    mapping: Path | None,
    measure: str,
    relevance_level: int,
    folds: int,
    seed: int,
    plot: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """A parameter grid of runs: the measure per setting and K-fold cross-validation over
    topics against the best setting in hindsight (the overfitting gap).

    Either QRELS RUN [RUN ...] or --campaign; the grid from --pattern or --mapping.
    """
    from workbench import sweeps
    from workbench.reports.extended import cross_validation_table, sweep_plot, sweep_table

    mapping_text = mapping.read_text(encoding="utf-8") if mapping is not None else None
    if campaign_name is None:
        if len(files) < 2:
            fail("give QRELS RUN [RUN ...], or --campaign")
        from workbench.metrics import MeasureError
        from workbench.run_files import DuplicateRunTag, score_runs

        try:
            scored = score_runs(files[0], files[1:], measure, relevance_level=relevance_level)
            scores = scored.per_topic
            if (pattern is None) == (mapping_text is None):
                fail("give either --pattern or --mapping")
            grid = (
                sweeps.grid_from_tags(scores, pattern)
                if pattern is not None
                else sweeps.grid_from_mapping(mapping_text or "", list(scores), name=str(mapping))
            )
            result_ = sweeps.sweep(grid, scores, measure=scored.measure, k=folds, seed=seed)
        except (TrecFormatError, MeasureError, DuplicateRunTag, sweeps.SweepError) as error:
            fail(str(error))
    else:
        from workbench.services import evaluation as service
        from workbench.services.campaigns import get_campaign
        from workbench.services.extended_evaluation import parameter_sweep

        with transaction(ctx, read=True) as session:
            campaign = get_campaign(session, campaign_name)
            table = service.evaluate_campaign(
                session, campaign, qrels_spec, [measure], allow_files=True
            )
            result_ = parameter_sweep(
                table,
                pattern=pattern,
                mapping=mapping_text,
                mapping_name=str(mapping),
                folds=folds,
                seed=seed,
            )
    if plot is not None:
        plot.write_text(sweep_plot(result_), encoding="utf-8")
        click.echo(f"wrote {plot}", err=True)
    _emit_report(result_, [sweep_table(result_), cross_validation_table(result_)], fmt, output)


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@optional_campaign_option
@qrels_option(f"With --campaign: {QRELS_HELP}")
@choice_option("--method", choices=interleaving.METHODS, default="team-draft")
@number_option(
    "--impressions", type=click.IntRange(1, 10_000), default=10, help="Simulated users per query."
)
@number_option(
    "--length",
    type=click.IntRange(1, 1000),
    default=10,
    help="Documents shown per interleaved list.",
)
@seed_option
@number_option(
    "--decay",
    type=click.FloatRange(min=0),
    default=1.0,
    help="Examination probability 1/rank^decay.",
)
@number_option("--p-relevant", type=click.FloatRange(0, 1), default=0.9)
@number_option("--p-nonrelevant", type=click.FloatRange(0, 1), default=0.05)
@measure_option("The offline measure interleaving is compared with.")
@number_option(
    "--fidelity-impressions",
    type=click.IntRange(0, 10_000),
    default=100,
    help="Impressions per query of the random-click fidelity check of both methods (0: no check).",
)
@files_level_option
@table_format_option
@output_option
@click.pass_context
def interleave(
    ctx: click.Context,
    files: tuple[str, ...],
    campaign_name: str | None,
    qrels_spec: str,
    method: str,
    impressions: int,
    length: int,
    seed: int,
    decay: float,
    p_relevant: float,
    p_nonrelevant: float,
    measure: str,
    fidelity_impressions: int,
    relevance_level: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Interleave every pair of runs with clicks simulated from the qrels: per-query
    wins/ties/losses, a sign test, and agreement with the offline measure; then the
    random-click fidelity check of team-draft and balanced interleaving (clicks that ignore
    relevance: a method with fidelity prefers neither run).

    Either QRELS RUN RUN [RUN ...] or --campaign.
    """
    from workbench import interleaving
    from workbench.reports.extended import interleaving_table
    from workbench.reports.fidelity import fidelity_table
    from workbench.reports.tables import render_all, to_json

    try:
        model = interleaving.ClickModel(decay, p_relevant, p_nonrelevant, relevance_level)
    except ValueError as error:
        fail(str(error))
    setup = interleaving.Setup(method, impressions, length, seed, model)
    if campaign_name is None:
        if len(files) < 3:
            fail("give QRELS RUN RUN [RUN ...], or --campaign")
        from workbench.metrics import MeasureError
        from workbench.pooling import topic_ranked_lists
        from workbench.run_files import score_runs

        try:
            scored = score_runs(files[0], files[1:], measure, relevance_level=relevance_level)
            ranked_lists = {
                tag: {qid: list(ranked.docnos) for qid, ranked in topic_ranked_lists(run).items()}
                for tag, run in scored.runs.items()
            }
            study = interleaving.study(
                ranked_lists,
                scored.qrels.to_dict(),
                scored.per_topic,
                measure=scored.measure,
                setup=setup,
            )
            checks = [
                interleaving.fidelity(
                    interleaving.study(
                        ranked_lists,
                        scored.qrels.to_dict(),
                        scored.per_topic,
                        measure=scored.measure,
                        setup=random_setup,
                    )
                )
                for random_setup in _fidelity_setups(setup, fidelity_impressions)
            ]
        except (TrecFormatError, MeasureError, ValueError) as error:
            fail(str(error))
    else:
        from workbench.services import evaluation as service
        from workbench.services.campaigns import get_campaign
        from workbench.services.evaluation_inputs import Scope, load_runs
        from workbench.services.extended_evaluation import interleaving_study

        with transaction(ctx, read=True) as session:
            campaign = get_campaign(session, campaign_name)
            runs = load_runs(session, campaign)
            scope = Scope(runs)
            table = service.evaluate_campaign(
                session, campaign, qrels_spec, [measure], scope=scope, allow_files=True
            )
            model = interleaving.ClickModel(
                decay, p_relevant, p_nonrelevant, campaign.relevance_level
            )
            qrels = scope.qrels(session, campaign, qrels_spec, allow_files=True)

            def run(chosen: interleaving.Setup) -> interleaving.InterleavingStudy:
                # the command computes what it is asked (no cap on interleavings)
                return interleaving_study(table, runs, qrels, setup=chosen, max_interleavings=None)

            study = run(dataclasses.replace(setup, model=model))
            checks = [
                interleaving.fidelity(run(s)) for s in _fidelity_setups(setup, fidelity_impressions)
            ]
    if fmt == "json":
        emit(to_json({"study": study, "fidelity": checks}), output)
        return
    tables = [interleaving_table(study)] + ([fidelity_table(checks)] if checks else [])
    emit(render_all(tables, fmt), output)


def _fidelity_setups(setup: interleaving.Setup, impressions: int) -> list[interleaving.Setup]:
    """The random-click setups of the fidelity check: both methods, or none (0)."""
    if impressions == 0:
        return []
    return [
        interleaving.random_click_setup(setup, method=method, impressions=impressions)
        for method in interleaving.METHODS
    ]


@click.group()
def efficiency() -> None:
    """Runs' efficiency figures: import a sidecar file, show them beside effectiveness."""


@efficiency.command("import")
@campaign_option
@click.option("--replace", is_flag=True, help="Replace figures the runs already have.")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def efficiency_import(ctx: click.Context, campaign_name: str, replace: bool, path: Path) -> None:
    """Store a sidecar file's figures (JSON or CSV per run) for the campaign's runs."""
    from workbench.services.campaigns import get_campaign
    from workbench.services.efficiency import import_efficiency

    with transaction(ctx) as session:
        result = import_efficiency(
            session, get_campaign(session, campaign_name), path, replace=replace
        )
    replaced = f" ({len(result.replaced)} replaced)" if result.replaced else ""
    click.echo(f"efficiency figures stored for {len(result.runs)} runs{replaced}")


@efficiency.command("show")
@campaign_option
@qrels_option(QRELS_HELP)
@measure_option()
@choice_option(
    "--cost",
    choices=("mean_latency_ms", "cost_per_1000_queries"),
    default="mean_latency_ms",
    help="The x axis of --plot.",
)
@svg_option("Write an SVG of effectiveness against the cost, Pareto frontier marked.")
@table_format_option
@output_option
@click.pass_context
def efficiency_show(
    ctx: click.Context,
    campaign_name: str,
    qrels_spec: str,
    measure: str,
    cost: str,
    plot: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Efficiency figures beside effectiveness, with the Pareto frontiers."""
    from workbench.reports.extended import efficiency_plot, efficiency_table
    from workbench.reports.tables import render, to_json
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign
    from workbench.services.extended_evaluation import efficiency_report

    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        table = service.evaluate_campaign(
            session, campaign, qrels_spec, [measure], allow_files=True
        )
        report = efficiency_report(session, campaign, table)
    if plot is not None:
        svg = efficiency_plot(report, cost)
        if svg is None:
            fail(f"no run gives {cost}: nothing to plot")
        plot.write_text(svg or "", encoding="utf-8")
        click.echo(f"wrote {plot}", err=True)
    emit(to_json(report) if fmt == "json" else render(efficiency_table(report), fmt), output)
