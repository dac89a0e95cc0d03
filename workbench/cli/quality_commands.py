"""Judging quality commands: `remainder` (reassign an assessor's unjudged documents, after a
confirmation), `gold` (gold documents and the quality settings), `practice` (the practice
set) and `assessors` (the assessor dashboard). Thin over the services."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.common import (
    campaign_option,
    choice_option,
    emit,
    fail,
    output_option,
    split_tags,
    table_format_option,
    topic_list,
    topics_option,
    transaction,
)
from workbench.services import assessor_dashboard, calibration, gold
from workbench.services import campaigns as campaign_service
from workbench.services import remainder as remainder_service
from workbench.services.errors import ServiceError


@click.command()
@campaign_option
@click.option("--assessor", required=True, help="The assessor whose remainder moves.")
@click.option(
    "--to",
    "to",
    default=None,
    help="Comma-separated usernames (default: every other active assessor).",
)
@click.option("--yes", is_flag=True, help="Do it without asking (after printing the plan).")
@click.pass_context
def remainder(
    ctx: click.Context, campaign_name: str, assessor: str, to: str | None, yes: bool
) -> None:
    """Reassign the unjudged documents of ASSESSOR's active assignments to other assessors
    (least loaded first); what they judged stays theirs. Prints the plan and asks first."""
    targets = split_tags(to) or None
    with transaction(ctx, read=True) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        plan = remainder_service.remainder_plan(session, campaign, assessor, to=targets)
    click.echo(plan.describe())
    for move in plan.moves:
        click.echo(f"pool {move.pool}\ttopic {move.qid}\t{move.documents}\t{move.to or '-'}")
    for note in plan.notes:
        click.echo(f"note: {note}", err=True)
    if not plan.documents:
        return
    if not yes and not click.confirm(f"Reassign {plan.documents} document(s)?", default=False):
        fail("nothing changed")
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        done = remainder_service.reassign_remainder(session, campaign, assessor, to=targets)
    click.echo(f"reassigned: {done.describe()}")


@click.group("gold")
def gold_group() -> None:
    """Gold documents (known grades mixed into assessors' queues) and quality settings."""


@gold_group.command("mark")
@campaign_option
@choice_option(
    "--from",
    "source",
    choices=gold.SOURCES,
    default="qrels",
    help="Imported qrels (--qrels NAME) or the final (adjudicated) labels.",
)
@click.option("--qrels", "qrels_name", default=None, help="The imported qrels' name.")
@click.option(
    "--per-topic",
    type=click.IntRange(min=1),
    default=None,
    help="Documents per topic, in turn from each grade (default: all).",
)
@topics_option
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--reason", default="", help="The reason shown with these gold documents.")
@click.pass_context
def gold_mark(
    ctx: click.Context,
    campaign_name: str,
    source: str,
    qrels_name: str | None,
    per_topic: int | None,
    topics: str | None,
    seed: int,
    reason: str,
) -> None:
    """Mark gold documents taken from labels the campaign already has."""
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        result = gold.mark_from(
            session,
            campaign,
            source,
            qrels_name=qrels_name,
            topics=topic_list(topics),
            per_topic=per_topic,
            seed=seed,
            reason=reason,
        )
    left = f"; {result.left_out()} left out" if result.left_out() else ""
    click.echo(f"{result.marked} gold document(s) in {result.topics} topic(s){left}")


@gold_group.command("add")
@campaign_option
@click.argument("qid")
@click.argument("docno")
@click.argument("grade", type=int)
@click.option("--reason", default="")
@click.pass_context
def gold_add(
    ctx: click.Context, campaign_name: str, qid: str, docno: str, grade: int, reason: str
) -> None:
    """Mark one document of topic QID as gold with GRADE."""
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        gold.mark(session, campaign, [gold.GoldItem(qid, docno, grade, reason)])
    click.echo(f"gold: topic {qid} document {docno} grade {grade}")


@gold_group.command("remove")
@campaign_option
@click.option("--topic", "qid", default=None)
@click.option("--docno", default=None)
@click.pass_context
def gold_remove(ctx: click.Context, campaign_name: str, qid: str | None, docno: str | None) -> None:
    """Remove gold marks (one document, one topic's, or all)."""
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        n = gold.unmark(session, campaign, qid=qid, docno=docno)
    click.echo(f"{n} gold mark(s) removed")


@gold_group.command("list")
@campaign_option
@click.pass_context
def gold_list(ctx: click.Context, campaign_name: str) -> None:
    """The gold documents and the quality settings."""
    with transaction(ctx, read=True) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        rows = gold.gold_rows(session, campaign)
        config = gold.quality_config(session, campaign.id)
    click.echo(
        f"# gold share {config.gold_share:g}; gold judgements "
        f"{'count' if config.gold_in_qrels else 'do not count'} in qrels; assessors "
        f"{'see' if config.show_gold_accuracy else 'do not see'} their gold accuracy"
    )
    for g in rows:
        click.echo(f"{g.qid}\t{g.docno}\t{g.grade}\t{g.reason}")


@gold_group.command("settings")
@campaign_option
@click.option(
    "--share",
    type=click.FloatRange(0, gold.MAX_GOLD_SHARE),
    default=None,
    help="Share of each queue that is gold.",
)
@click.option(
    "--in-qrels/--not-in-qrels",
    default=None,
    help="Whether gold judgements count in agreement, adjudication and qrels.",
)
@click.option(
    "--show-accuracy/--hide-accuracy",
    default=None,
    help="Whether assessors see their own gold accuracy.",
)
@click.pass_context
def gold_settings(
    ctx: click.Context,
    campaign_name: str,
    share: float | None,
    in_qrels: bool | None,
    show_accuracy: bool | None,
) -> None:
    """Change the campaign's quality settings (those given)."""
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        config = gold.set_quality(
            session,
            campaign,
            gold_share=share,
            gold_in_qrels=in_qrels,
            show_gold_accuracy=show_accuracy,
        )
    click.echo(
        f"gold share {config.gold_share:g}, in qrels: {config.gold_in_qrels}, "
        f"accuracy shown: {config.show_gold_accuracy}"
    )


@click.group("practice")
def practice_group() -> None:
    """The practice set judged before an assessor's first topic."""


@practice_group.command("set")
@campaign_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def practice_set(ctx: click.Context, campaign_name: str, path: Path) -> None:
    """Replace the practice set with PATH's lines: qid<TAB>docno<TAB>grade<TAB>reason."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"{path}: not UTF-8 text")
    with transaction(ctx) as session:
        campaign = campaign_service.get_campaign(session, campaign_name)
        n = calibration.set_items(session, campaign, calibration.parse_items(text, str(path)))
    click.echo(f"practice set of {n} item(s)")


@practice_group.command("clear")
@campaign_option
@click.pass_context
def practice_clear(ctx: click.Context, campaign_name: str) -> None:
    """Remove the practice set and its answers."""
    with transaction(ctx) as session:
        n = calibration.clear(session, campaign_service.get_campaign(session, campaign_name))
    click.echo(f"{n} practice item(s) removed")


@click.command()
@campaign_option
@choice_option(
    "--by",
    "period",
    choices=("day", "session"),
    default="day",
    help="Drift per UTC day or per session.",
)
@choice_option(
    "--weights", choices=assessor_dashboard.WEIGHTS, default="linear", help="Weights of the kappas."
)
@table_format_option
@output_option
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the dashboard's SVG plots into this folder.",
)
@click.pass_context
def assessors(
    ctx: click.Context,
    campaign_name: str,
    period: str,
    weights: str,
    fmt: str,
    output: Path | None,
    plots_dir: Path | None,
) -> None:
    """The assessor dashboard: pace, grades, agreement, gold accuracy, drift and outliers."""
    from workbench.reports.assessors import dashboard_plots, dashboard_tables
    from workbench.reports.tables import render_all, to_json

    with transaction(ctx, read=True) as session:
        try:
            board = assessor_dashboard.assessor_dashboard(
                session, campaign_name, period=period, weights=weights
            )
        except ServiceError as error:
            fail(str(error))
    text = to_json(board.to_dict()) if fmt == "json" else render_all(dashboard_tables(board), fmt)
    emit(text, output)
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        for name, svg in dashboard_plots(board).items():
            (plots_dir / f"{name}.svg").write_text(svg, encoding="utf-8")
        click.echo(f"wrote the plots in {plots_dir}", err=True)
