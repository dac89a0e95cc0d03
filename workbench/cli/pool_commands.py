"""The `pool` commands: build (by a pooling strategy or an adaptive method), extend, stats, and
the adaptive pools' subcommands."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from workbench import adaptive, pooling
from workbench.cli.adaptive_commands import adaptive_group
from workbench.cli.common import (
    campaign_option,
    pool_number_option,
    split_tags,
    topic_list,
    topics_option,
    transaction,
)
from workbench.services import (
    adaptive_pools,
    adaptive_provenance,
    campaigns,
    pool_statistics,
    pools,
)
from workbench.services.topics import listed

ADAPTIVE_METHODS = adaptive.ADAPTIVE


@click.group()
def pool() -> None:
    """Build, extend and describe pools."""


def adaptive_sampling_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """An adaptive pool's reserved sample and stopping rule (`services.adaptive_pools`)."""
    from workbench import stopping

    options = [
        click.option("--sample-share", type=click.FloatRange(0, 1, max_open=True), default=0.0,
                     show_default=True,
                     help="Adaptive: share of the budget for a random sample of each topic's "
                     "pool, judged first (estimates of what the strategy missed)."),
        click.option("--stop-rule", type=click.Choice(list(stopping.RULES)), default=None,
                     help="Adaptive: the stopping rule whose verdict each topic shows."),
        click.option("--recall-target", type=click.FloatRange(0, 1, min_open=True,
                     max_open=True), default=stopping.DEFAULT_TARGET, show_default=True,
                     help="Adaptive: the rule's recall target."),
        click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                     default=stopping.DEFAULT_CONFIDENCE, show_default=True,
                     help="Adaptive: the rule's confidence."),
        click.option("--auto-stop", is_flag=True,
                     help="Adaptive: a topic whose rule says stop reveals no more documents."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def pool_strategy_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add one option per pooling parameter, generated from `pooling.option_fields()` (the
    strategies' parameter dataclasses): a new strategy's parameters appear here by
    themselves."""
    for f in reversed(pooling.option_fields()):
        used = f"({', '.join(f.strategies)})"
        shown = "" if f.default in (None, False) else f" [default: {f.default}]"
        name = "--" + f.name.replace("_", "-")
        help_text = f"{f.help[0].upper()}{f.help[1:]} {used}{shown}."
        if f.kind is bool:
            command = click.option(name, f.name, is_flag=True, default=None, help=help_text)(
                command
            )
        elif f.choices:
            command = click.option(name, f.name, type=click.Choice(f.choices), help=help_text)(
                command
            )
        elif f.kind is int:
            command = click.option(
                name, f.name, type=click.IntRange(min=f.minimum), help=help_text
            )(command)
        else:
            command = click.option(name, f.name, help=help_text)(command)
    return command


@pool.command("build")
@campaign_option
@click.option(
    "--strategy",
    default=None,
    metavar=f"[{'|'.join(pooling.STRATEGIES)}]",
    help="The pooling strategy (default: depth): "
    + "; ".join(f"{s.name}: {s.help}" for s in pooling.STRATEGIES.values())
    + ". (An adaptive method given here is the old spelling of --adaptive.)",
)
@click.option(
    "--adaptive",
    "method",
    default=None,
    metavar=f"[{'|'.join(ADAPTIVE_METHODS)}]",
    help="Judge the pool adaptively: the adaptive method picks each next document from a depth "
    "pool (--depth, default 100) up to --budget per topic ("
    + "; ".join(f"{name}: {adaptive.METHODS[name].description}" for name in ADAPTIVE_METHODS)
    + ").",
)
@pool_strategy_options
@click.option("--batch", type=int, default=5, show_default=True, help="Adaptive: reveal size.")
@click.option(
    "--secondary-share",
    type=float,
    default=0.2,
    show_default=True,
    help="Adaptive: share of the chosen documents that other judges of a topic also judge.",
)
@adaptive_sampling_options
@click.option("--runs", default=None, help="TAG,TAG (default: every contributing run).")
@click.option("--seed", type=int, default=None, help="Random seed (default: drawn and recorded).")
@click.option("--name", default="", help="A name for the pool.")
@topics_option
@click.pass_context
def pool_build(
    ctx: click.Context,
    campaign_name: str,
    strategy: str | None,
    method: str | None,
    batch: int,
    secondary_share: float,
    sample_share: float,
    stop_rule: str | None,
    recall_target: float,
    confidence: float,
    auto_stop: bool,
    runs: str | None,
    seed: int | None,
    name: str,
    topics: str | None,
    **values: Any,
) -> None:
    """Build a pool from the campaign's runs (of every topic, or of --topics): by a pooling
    --strategy, or a depth pool judged by an --adaptive method."""
    strategy, method = pool_kind(strategy, method)
    with transaction(ctx) as session:
        target = campaigns.get_campaign(session, campaign_name)
        if method is not None:
            built = adaptive_pools.build_adaptive_pool(
                session,
                target,
                method=method,
                budget=values.get("budget"),
                depth=values.get("depth") or 100,
                batch=batch,
                secondary_share=secondary_share,
                runs=split_tags(runs),
                seed=seed,
                name=name,
                sample_share=sample_share,
                stop_rule=stop_rule,
                recall_target=recall_target,
                confidence=confidence,
                auto_stop=auto_stop,
            )
            documents, _, n_topics = pools.pool_counts(session, built)
            click.echo(
                f"{pools.describe_pool(built)}: {adaptive_provenance.describe_settings(built)}; "
                f"{documents} documents to choose from over {n_topics} topics"
            )
            warn_missing_text(pools.documents_without_text(session, built))
            return
        built = pools.build_pool(
            session,
            target,
            strategy=strategy or "depth",
            runs=split_tags(runs),
            seed=seed,
            name=name,
            topics=topic_list(topics),
            **values,
        )
        documents, sampled, n_topics = pools.pool_counts(session, built)
        click.echo(
            f"{pools.describe_pool(built)}: {documents} documents "
            f"({sampled} to judge) over {n_topics} topics"
        )
        warn_missing_text(pools.documents_without_text(session, built))


def pool_kind(strategy: str | None, method: str | None) -> tuple[str | None, str | None]:
    """(pooling strategy, adaptive method) of `pool build`. An adaptive method given as
    --strategy (the old spelling) still works in this release, with a warning; an adaptive
    pool is a depth pool, so --adaptive goes with no other --strategy. The names themselves
    are checked by the services (`pools.strategy_params`, `adaptive_pools.check_method`)."""
    if strategy in ADAPTIVE_METHODS:
        if method is not None:
            raise click.UsageError(
                f"--strategy {strategy} is an adaptive method and --adaptive {method} another: "
                "give --adaptive only"
            )
        click.echo(
            f"warning: --strategy {strategy} is deprecated: {strategy} is an adaptive method, "
            f"give --adaptive {strategy} (the old spelling will be refused in the next "
            "release)",
            err=True,
        )
        return None, strategy
    if method is not None and strategy not in (None, "depth"):
        raise click.UsageError(
            f"an adaptive pool is a depth pool: --adaptive {method} cannot go with "
            f"--strategy {strategy}"
        )
    return strategy, method


def warn_missing_text(missing: list[str]) -> None:
    """A warning on stderr naming the pooled documents without text, if any."""
    if missing:
        click.echo(
            f"warning: {len(missing)} pooled document(s) have neither a title nor a text in "
            f"the store: {listed(missing)}",
            err=True,
        )


@pool.command("extend")
@campaign_option
@click.option("--runs", required=True, help="TAG,TAG of the runs to add.")
@pool_number_option
@click.pass_context
def pool_extend(ctx: click.Context, campaign_name: str, runs: str, pool_number: int | None) -> None:
    """Add runs to a pool: only documents not pooled yet are added."""
    with transaction(ctx) as session:
        target = campaigns.get_campaign(session, campaign_name)
        extended = pools.get_pool(session, target, pool_number)
        added = pools.extend_pool(session, extended, split_tags(runs) or [])
        click.echo(f"{pools.pool_label(extended)}: {added} document(s) added")
        warn_missing_text(pools.documents_without_text(session, extended))


@pool.command("stats")
@campaign_option
@pool_number_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.pass_context
def pool_stats(ctx: click.Context, campaign_name: str, pool_number: int | None, fmt: str) -> None:
    """Pool size per topic, unique documents per run, run overlap, growth with depth."""
    with transaction(ctx) as session:
        target = campaigns.get_campaign(session, campaign_name)
        described = pools.get_pool(session, target, pool_number)
        contributions, kept = pool_statistics.current_contributions(session, described)
        if not kept:
            pool_statistics.remember(session, contributions)
        stats = pool_statistics.pool_statistics(session, described, contributions)
        if fmt == "json":
            click.echo(json.dumps(stats, indent=1))
            return
        click.echo(pools.describe_pool(described))
        click.echo(f"documents: {stats['size']} ({stats['sampled']} to judge)")
        click.echo("topic\tsize\tto judge")
        for qid, sizes in stats["topics"].items():
            click.echo(f"{qid}\t{sizes['size']}\t{sizes['sampled']}")
        click.echo(f"run\tcontributed\tunique (within depth {stats['contribution_depth']})")
        for tag in stats["runs"]:
            click.echo(
                f"{tag}\t{stats['contributed_per_run'][tag]}\t{stats['unique_per_run'][tag]}"
            )
        growth = stats["growth_by_depth"]
        click.echo("depth\tpool size")
        for depth in sorted({1, 5, 10, 20, 50, 100, 200, 500, 1000, len(growth)}):
            if depth <= len(growth):
                click.echo(f"{depth}\t{growth[depth - 1]}")


pool.add_command(adaptive_group)
