"""`workbench agreement` and `adjudicate`: thin commands over the services (`evaluate` is in
`report_commands`)."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.agreement import MERGE_RULES, TIE_RULES
from workbench.cli.common import (
    campaign_option,
    choice_option,
    emit,
    fail,
    get_store,
    number_option,
    output_option,
    refusals,
    seed_option,
    table_format_option,
    transaction,
)


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
    from workbench.reports.tables import render_all, to_json
    from workbench.services.agreement import agreement_report
    from workbench.services.agreement_tables import agreement_tables
    from workbench.services.campaigns import get_campaign

    with transaction(ctx, read=True) as session:
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
    from workbench.services.adjudication import MergeSpec
    from workbench.services.adjudication_steps import apply_rule_in_steps
    from workbench.services.run_imports import topic_list

    with refusals():
        summary = apply_rule_in_steps(
            get_store(ctx),
            campaign_name,
            MergeSpec(rule, tie, primary),
            topics=topic_list(topics) if topics else None,
            reason=reason,
        )
    click.echo(summary.message())
