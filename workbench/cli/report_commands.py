"""`workbench evaluate` (the campaign's report, in any format) and `workbench progress`.

The evaluate command's options are generated from the report's options
(`reports.pipeline.REPORT_OPTIONS`) and their values read by the report's one parser, so that a
parameter means here what it means on the web page and in the API, and the same parameters
give the same bytes (`reports.formats`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from workbench.cli.common import (
    campaign_option,
    emit,
    fail,
    output_option,
    refusals,
    transaction,
)
from workbench.reports.formats import REPORT_FORMATS, render_report
from workbench.reports.pipeline import REPORT_OPTIONS, build_report, parse
from workbench.services.evaluation_report import ReportOption
from workbench.services.scope import parse_pools

F = Callable[..., Any]


def report_option(option: ReportOption) -> Callable[[F], F]:
    """The click option of a report option; its value is kept as text (or texts) for the
    report's parser."""
    shown = option.default not in (None, (), "") and option.kind in ("choice", "text", "float")
    help_ = option.help + (f" [default: {option.default}]" if shown else "")
    metavar = {"int": "INTEGER", "float": "NUMBER", "list": "VALUES"}.get(option.kind, "TEXT")
    if option.kind == "flag":
        return click.option(*option.flags(), option.name, is_flag=True, help=option.help)
    if option.kind == "list":
        choice = click.Choice(option.choices) if option.choices else None
        return click.option(*option.flags(), option.name, multiple=True, type=choice,
                            metavar=None if choice else metavar,
                            help=option.help + " Repeatable.")  # fmt: skip
    if option.kind == "choice":
        return click.option(*option.flags(), option.name, type=click.Choice(option.choices),
                            default=None, help=help_)  # fmt: skip
    return click.option(*option.flags(), option.name, default=None, metavar=metavar, help=help_)


def report_options(command: F) -> F:
    for option in reversed(REPORT_OPTIONS):
        command = report_option(option)(command)
    return command


def _texts(value: Any) -> list[str]:
    """A click value as the texts a query string would give."""
    if value is None or value is False:
        return []
    if value is True:
        return ["1"]
    if isinstance(value, tuple | list):
        return [str(v) for v in value]
    return [str(value)]


def write(data: bytes, output: Path | None) -> None:
    """Bytes to standard output, or to the file `output` (saying so on stderr)."""
    if output is None:
        stream = click.get_binary_stream("stdout")
        stream.write(data)
        stream.flush()
    else:
        output.write_bytes(data)
        click.echo(f"wrote {output}", err=True)


@click.command()
@campaign_option
@report_options
@click.option(
    "--against",
    default="final",
    show_default=True,
    help="With --qrels clicks:LOG: the assessors' qrels to rank the runs by as well.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(tuple(REPORT_FORMATS)),
    default="text",
    help="; ".join(f"{k}: {v.help}" for k, v in REPORT_FORMATS.items()) + ".",
)
@output_option
@click.pass_context
def evaluate(
    ctx: click.Context,
    campaign_name: str,
    against: str,
    fmt: str,
    output: Path | None,
    **given: Any,
) -> None:
    """The campaign's evaluation report: every section (--section for some), in any format.
    --qrels clicks:LOG ranks the runs on a query log's click preferences instead."""
    from workbench.services.campaigns import get_campaign
    from workbench.services.evaluation_report import trec_output

    qrels_spec = given.get("qrels") or ""
    if qrels_spec.startswith("clicks:"):
        from workbench.cli.querylog_commands import click_evaluation_text

        measures = given.get("measures") or ("map",)
        text = click_evaluation_text(
            ctx,
            campaign_name,
            qrels_spec[7:],
            against,
            measures[0],
            fmt,
            allow_incomplete=bool(given.get("allow_incomplete")),
        )
        emit(text, output)  # fmt: skip
        return
    with refusals():
        request = parse({name: _texts(value) for name, value in given.items()}, allow_files=True)
    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        if fmt == "trec":
            trec = trec_output(session, campaign, request)
            data, warnings, notes = trec.text.encode(), [trec.warning], list(trec.notes)
        else:
            report = build_report(session, campaign, request)
            data, warnings, notes = render_report(report, fmt), list(report.warnings), []
            failed = [s for s in report.sections if (s.reason or "").startswith("the section")]
            warnings += [f"section {s.name}: {s.reason}" for s in failed]
    for warning in filter(None, warnings):
        click.echo(f"warning: {warning}", err=True)
    for note in notes:  # trec_eval's format has no place for them
        click.echo(f"note: {note}", err=True)
    write(data, output)
    if fmt != "trec":
        runs = [s for s in report.sections if s.name == "summary"]
        if runs and not runs[0].available:  # the report says why in every section
            fail(f"the runs could not be evaluated: {runs[0].reason}")


@click.command()
@campaign_option
@click.option("--pools", default=None,
              help="The pools whose assignments count, e.g. 1,2 (default: the pools with "
              "assignments; archived pools never).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
@click.pass_context
def progress(ctx: click.Context, campaign_name: str, pools: str | None, fmt: str) -> None:
    """Judging progress of a campaign: overall, per topic and per assessor."""
    from workbench.reports.tables import render, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.progress import campaign_progress, progress_document
    from workbench.tabular import Table, cells

    with refusals():
        numbers = parse_pools(pools)
    with transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        report = campaign_progress(session, campaign.id, numbers)
        document = progress_document(campaign.name, report)
    if fmt == "json":
        click.echo(to_json(document), nl=False)
        return
    overall = document["overall"]
    click.echo(
        f"{campaign_name}: {overall['judged']} of {overall['total']} documents judged "
        f"({overall['percent']:.0f} %); scope: {document['scope']}."
    )
    topics = Table(
        ["Topic", "Assessors", "Judged", "Total"],
        [cells(t["qid"], ", ".join(t["assessors"]), t["judged"], t["total"])
         for t in document["topics"]],
    )  # fmt: skip
    assessors = Table(
        ["Assessor", "Judged", "Total"],
        [cells(a["username"], a["judged"], a["total"]) for a in document["assessors"]],
    )
    click.echo(render(topics, "text") + "\n" + render(assessors, "text"), nl=False)
