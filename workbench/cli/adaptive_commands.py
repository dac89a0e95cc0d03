"""`workbench pool adaptive`: follow and steer an adaptive pool (status, budget, stop)."""

from __future__ import annotations

import dataclasses
import json

import click

from workbench.cli.common import campaign_option, transaction
from workbench.services import adaptive_pools, adaptive_provenance, campaigns, pools


def _pool(session, campaign_name: str, pool_id: int | None):
    target = campaigns.get_campaign(session, campaign_name)
    return pools.get_pool(session, target, pool_id)


def _options(command):
    command = click.option(
        "--pool", "pool_id", type=int, default=None, help="Pool id (default: the latest)."
    )(command)
    return campaign_option(command)


@click.group("adaptive")
def adaptive_group() -> None:
    """Follow and steer an adaptive pool: per-topic status, budgets, stopping a topic."""


@adaptive_group.command("status")
@_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.pass_context
def status(ctx: click.Context, campaign_name: str, pool_id: int | None, fmt: str) -> None:
    """Per topic: budget, documents chosen, judged and relevant, relevant estimated left."""
    with transaction(ctx, read=True) as session:
        chosen = _pool(session, campaign_name, pool_id)
        rows = adaptive_pools.topic_statuses(session, chosen)
        described = adaptive_provenance.describe_settings(chosen)
    if fmt == "json":
        click.echo(json.dumps([dataclasses.asdict(r) for r in rows], indent=1))
        return
    click.echo(f"pool {chosen.id}: {described}")
    click.echo(
        "topic\tbudget\tpool\tchosen\tjudged\trelevant\tleft (est.)\tstate\tprimary\t"
        "recall\tverdict"
    )
    for r in rows:
        estimate = "-" if r.remaining_estimate is None else f"{r.remaining_estimate:.1f}"
        state = (
            "stopped" if r.stopped
            else "stopped (rule)" if r.rule_stopped
            else "finished" if r.finished else "open"
        )  # fmt: skip
        recall = "-" if r.recall is None else r.recall.describe()
        verdict = "-" if r.verdict is None else ("stop: " if r.verdict.stop else "go on: ")
        verdict += "" if r.verdict is None else r.verdict.detail
        click.echo(
            f"{r.qid}\t{r.budget}\t{r.pool_size}\t{r.revealed}\t{r.judged}\t{r.relevant}\t"
            f"{estimate}\t{state}\t{r.primary or '-'}\t{recall}\t{verdict}"
        )
    click.echo(
        "note: qrels hold -1 for the documents not chosen; they are not a random sample, so "
        "measures that count them non-relevant favour the runs the strategy followed, and "
        "bpref and infAP are biased too; a pool with a reserved sample (--sample-share) is "
        "estimated without bias by `workbench estimate`."
    )


@adaptive_group.command("budget")
@_options
@click.option("--budget", type=int, required=True, help="Judgements per topic.")
@click.option("--topic", "qid", default=None, help="Only this topic (default: every topic).")
@click.pass_context
def budget(
    ctx: click.Context, campaign_name: str, pool_id: int | None, budget: int, qid: str | None
) -> None:
    """Set (raise) the judging budget of one topic or of all of them."""
    with transaction(ctx) as session:
        changed = adaptive_pools.set_budget(
            session, _pool(session, campaign_name, pool_id), budget, qid
        )
    click.echo(f"budget {budget} for {changed} topic(s)")


@adaptive_group.command("stop")
@_options
@click.option("--topic", "qid", required=True)
@click.option("--resume", is_flag=True, help="Resume a stopped topic instead.")
@click.pass_context
def stop(
    ctx: click.Context, campaign_name: str, pool_id: int | None, qid: str, resume: bool
) -> None:
    """Stop choosing documents for a topic (its judgements stay), or resume it."""
    with transaction(ctx) as session:
        adaptive_pools.stop_topic(
            session, _pool(session, campaign_name, pool_id), qid, stopped=not resume
        )
    click.echo(f"topic {qid} {'resumed' if resume else 'stopped'}")
