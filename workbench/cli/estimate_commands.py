"""`workbench estimate`: every run's MAP estimated from a sampled pool (statAP, xinfAP) with
intervals, and the relevant documents each topic's judging missed."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.common import (
    campaign_option,
    emit,
    number_option,
    output_option,
    qrels_option,
    seed_option,
    table_format_option,
    transaction,
)


@click.command()
@campaign_option
@click.option(
    "--pool", "pool_number", type=int, default=None, help="The pool's number (default: the latest)."
)
@qrels_option("'final', an assessor, a qrels set name, or a qrels file.")
@number_option(
    "--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95
)
@number_option(
    "--bootstrap",
    "replicates",
    type=click.IntRange(min=2),
    default=200,
    help="Bootstrap replicates per topic.",
)
@seed_option
@table_format_option
@output_option
@click.pass_context
def estimate(
    ctx: click.Context, campaign_name: str, pool_number: int | None, qrels_spec: str,
    confidence: float, replicates: int, seed: int, fmt: str, output: Path | None,
) -> None:  # fmt: skip
    """Estimate every run's MAP from a sampled pool: a stratified or prior pool, or an
    adaptive pool with a reserved sample (what the strategy missed included)."""
    from workbench.reports.estimates import pool_estimates_tables
    from workbench.reports.tables import render_all, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.estimates import pool_estimates

    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        result = pool_estimates(
            session, campaign, pool_number, qrels_spec=qrels_spec, confidence=confidence,
            replicates=replicates, seed=seed, allow_files=True,
        )  # fmt: skip
    emit(to_json(result.to_dict()) if fmt == "json"
         else render_all(pool_estimates_tables(result), fmt), output)  # fmt: skip
