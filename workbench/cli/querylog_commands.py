"""`workbench querylog`: import an anonymised query log, its report, click preferences, their
agreement with the assessors, runs evaluated on them, and the pool's click priority."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workbench.cli import common
from workbench.clicks import STRATEGIES
from workbench.reports.tables import FORMATS

if TYPE_CHECKING:
    from workbench.services.querylogs import PreferenceOptions

F = TypeVar("F", bound=Callable[..., Any])
INSTANCE_ENV = "WORKBENCH_INSTANCE_PATH"


def instance_folder() -> Path:
    """$WORKBENCH_INSTANCE_PATH, else ./instance: where the anonymisation key lives."""
    return Path(os.environ.get(INSTANCE_ENV) or Path.cwd() / "instance")


def preference_options(function: F) -> F:
    """The options that say how click preferences are drawn."""
    function = click.option(
        "--deviation-threshold",
        type=float,
        default=None,
        help="Count only clicks whose click deviation CD(d, p) exceeds this.",
    )(function)
    function = click.option(
        "--min-support",
        type=click.IntRange(min=1),
        default=2,
        show_default=True,
        help="Keep a preference stated by at least m impressions (and by more than its opposite).",
    )(function)
    return click.option(
        "--strategy", type=click.Choice(STRATEGIES), default="skip-above", show_default=True
    )(function)


def _options(
    strategy: str, min_support: int, deviation_threshold: float | None
) -> PreferenceOptions:
    from workbench.services.querylogs import PreferenceOptions

    return PreferenceOptions(strategy, min_support, deviation_threshold)


@click.group()
def querylog() -> None:
    """Query logs: clicks as preference judgements beside the assessors' labels."""


@querylog.command("import")
@common.campaign_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="Name of the log (default: the file name).")
@common.number_option(
    "--min-users",
    type=click.IntRange(min=1),
    default=5,
    help="k: drop queries issued by fewer distinct users.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("jsonl", "tsv")),
    default=None,
    help="Log format (default: from the file's suffix).",
)
@click.option(
    "--mapping",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="qid<TAB>query lines mapping queries to topics.",
)
@click.pass_context
def import_log(
    ctx: click.Context,
    campaign_name: str,
    path: Path,
    name: str | None,
    min_users: int,
    fmt: str | None,
    mapping: Path | None,
) -> None:
    """Import a query log (JSONL or TSV), anonymised: hashed ids, masked queries, k users."""
    from workbench.querylog import load_or_create_key
    from workbench.reports.querylogs import anonymisation_table
    from workbench.reports.tables import render
    from workbench.services.querylog_import import LogSource, import_query_log_in_steps

    key = load_or_create_key(instance_folder())
    source = LogSource(path, key, min_users, fmt, mapping, name)
    with common.refusals():  # read, then written in short transactions (bounded memory)
        summary = import_query_log_in_steps(common.get_store(ctx), campaign_name, source)
    click.echo(render(anonymisation_table(summary), "text"), nl=False)
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)


@querylog.command("list")
@common.campaign_option
@common.table_format_option
@click.pass_context
def list_logs(ctx: click.Context, campaign_name: str, fmt: str) -> None:
    """The campaign's query logs."""
    from workbench.reports.querylogs import logs_table
    from workbench.reports.tables import render
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import list_query_logs

    with common.transaction(ctx, read=True) as session:
        summaries = list_query_logs(session, get_campaign(session, campaign_name))
    click.echo(render(logs_table(summaries), fmt), nl=False)


@querylog.command("report")
@common.campaign_option
@click.argument("name")
@common.table_format_option
@click.pass_context
def report(ctx: click.Context, campaign_name: str, name: str, fmt: str) -> None:
    """The anonymisation report of a log: what each rule removed."""
    from workbench.reports.querylogs import anonymisation_table
    from workbench.reports.tables import render, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import query_log_summary

    with common.transaction(ctx, read=True) as session:
        summary = query_log_summary(session, get_campaign(session, campaign_name), name)
    if fmt == "json":
        click.echo(to_json(summary.to_dict()), nl=False)
    else:
        click.echo(render(anonymisation_table(summary), fmt), nl=False)


@querylog.command("prefs")
@common.campaign_option
@click.argument("name")
@preference_options
@common.output_option
@click.pass_context
def prefs(
    ctx: click.Context,
    campaign_name: str,
    name: str,
    strategy: str,
    min_support: int,
    deviation_threshold: float | None,
    output: Path | None,
) -> None:
    """The click preferences as a trec_eval prefs file (`trec-eval -R prefs PREFS RUN`)."""
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import export_prefs

    with common.transaction(ctx, read=True) as session:
        options = _options(strategy, min_support, deviation_threshold)
        text = export_prefs(session, get_campaign(session, campaign_name), name, options)
    common.emit(text, output)


@querylog.command("agreement")
@common.campaign_option
@click.argument("name")
@click.option(
    "--qrels",
    "qrels_spec",
    default="final",
    show_default=True,
    help="The assessors' qrels: final, an assessor, a qrels set or a file.",
)
@preference_options
@common.number_option(
    "--bootstrap",
    "n_bootstrap",
    type=click.IntRange(min=1),
    default=2000,
    help="Topic-bootstrap resamples for the interval.",
)
@common.seed_option
@common.table_format_option
@click.option(
    "--allow-incomplete",
    is_flag=True,
    help="Use final or assessor qrels although documents lack a label (said so).",
)
@click.pass_context
def agreement(
    ctx: click.Context,
    campaign_name: str,
    name: str,
    qrels_spec: str,
    strategy: str,
    min_support: int,
    deviation_threshold: float | None,
    n_bootstrap: int,
    seed: int,
    fmt: str,
    allow_incomplete: bool,
) -> None:
    """Share of click preferences consistent with the assessors' grades, per topic and overall."""
    from workbench.reports.querylogs import agreement_table
    from workbench.reports.tables import render, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import ClickComparison, click_agreement

    with common.transaction(ctx, read=True) as session:
        compared = ClickComparison(
            name,
            qrels_spec,
            _options(strategy, min_support, deviation_threshold),
            allow_incomplete,
        )
        result = click_agreement(
            session,
            get_campaign(session, campaign_name),
            compared,
            n_resamples=n_bootstrap,
            seed=seed,
            allow_files=True,
        )
    if fmt == "json":
        click.echo(to_json(result.to_dict()), nl=False)
    else:
        click.echo(render(agreement_table(result), fmt), nl=False)


def click_evaluation_text(
    ctx: click.Context,
    campaign_name: str,
    name: str,
    against: str,
    measure: str,
    fmt: str,
    options: tuple[str, int, float | None] = ("skip-above", 2, None),
    allow_incomplete: bool = False,
) -> str:
    """The click evaluation report as `workbench evaluate --qrels clicks:NAME` prints it."""
    from workbench.reports.querylogs import click_evaluation_table
    from workbench.reports.tables import render, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import ClickComparison, click_evaluation

    with common.transaction(ctx, read=True) as session:
        compared = ClickComparison(name, against, _options(*options), allow_incomplete)
        result = click_evaluation(
            session,
            get_campaign(session, campaign_name),
            compared,
            measure=measure,
            allow_files=True,
        )
    if fmt == "json":
        return to_json(result.to_dict())
    if fmt not in FORMATS:
        offered = tuple(FORMATS)
        common.fail(f"--format {fmt} is not offered for click evaluation; use one of {offered}")
    return render(click_evaluation_table(result), fmt)


@querylog.command("evaluate")
@common.campaign_option
@click.argument("name")
@click.option(
    "--qrels",
    "against",
    default="final",
    show_default=True,
    help="The assessors' qrels to compare with.",
)
@click.option(
    "-m",
    "--measure",
    default="map",
    show_default=True,
    help="The measure under the assessors' qrels.",
)
@preference_options
@common.table_format_option
@common.output_option
@click.option(
    "--allow-incomplete",
    is_flag=True,
    help="Use final or assessor qrels although documents lack a label (said so).",
)
@click.pass_context
def evaluate(
    ctx: click.Context,
    campaign_name: str,
    name: str,
    against: str,
    measure: str,
    strategy: str,
    min_support: int,
    deviation_threshold: float | None,
    fmt: str,
    output: Path | None,
    allow_incomplete: bool,
) -> None:
    """Rank the runs on click preferences and on the assessors' qrels; Kendall's tau."""
    text = click_evaluation_text(
        ctx,
        campaign_name,
        name,
        against,
        measure,
        fmt,
        (strategy, min_support, deviation_threshold),
        allow_incomplete,
    )
    common.emit(text, output)


@querylog.command("prioritise")
@common.campaign_option
@click.argument("name")
@click.option(
    "--pool", "pool_number", type=int, required=True, help="The pool's number in the campaign."
)
@click.pass_context
def prioritise(ctx: click.Context, campaign_name: str, name: str, pool_number: int) -> None:
    """Order a pool by click deviation: assign it with `--order priority` afterwards."""
    from workbench.services.campaigns import get_campaign
    from workbench.services.querylogs import prioritise_pool

    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        result = prioritise_pool(session, campaign, pool_number, name)
    click.echo(
        f"pool {result.pool}: {result.entries} entries prioritised by the click deviation of "
        f"{result.log} ({result.shown} seen by users; the others last)"
    )
