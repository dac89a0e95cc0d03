"""``workbench measures``: every measure with its trec_eval name, its ir_measures names, its
friendly names and what it is."""

from __future__ import annotations

import textwrap

import click

from workbench.cli.common import table_format_option


@click.command("measures")
@table_format_option
@click.option(
    "--compat",
    type=click.Choice(["10", "9"]),
    default="10",
    show_default=True,
    help="trec_eval version whose measures are listed (9.0.8 lacks dcg, rbp, unj ...).",
)
def measures(fmt: str, compat: str) -> None:
    """Every measure: trec_eval name, ir_measures names, friendly names, parameters, help.

    Any of these names works wherever a measure is asked for (-m), except that `workbench
    trec-eval` takes only trec_eval's names and the friendly ones, as trec_eval would.
    """
    from workbench.metrics.names import measure_catalogue
    from workbench.reports.tables import render
    from workbench.tabular import Table, cells

    entries = measure_catalogue(int(compat))
    if fmt == "text":
        click.echo("".join(_text(entry) for entry in entries), nl=False)
        return
    table = Table(
        columns=["measure", "ir_measures", "also", "parameters", "from", "description"],
        rows=[
            cells(
                e.name,
                ", ".join(e.ir_measures),
                ", ".join(e.aliases),
                e.parameters,
                "trec_eval" if e.trec_eval else "workbench",
                e.help,
            )
            for e in entries
        ],
        caption=f"Measures (trec_eval {'10.0' if compat == '10' else '9.0.8'} and ours)",
        label="measures",
    )
    click.echo(render(table, fmt), nl=False)


def _text(entry) -> str:
    names = []
    if entry.ir_measures:
        names.append(f"ir_measures: {', '.join(entry.ir_measures)}")
    if entry.aliases:
        names.append(f"also: {', '.join(entry.aliases)}")
    if not entry.trec_eval:
        names.append("not trec_eval's")
    head = entry.name + (f"  ({'; '.join(names)})" if names else "")
    body = entry.help + (f" Parameters: {entry.parameters}." if entry.parameters else "")
    indent = "    "
    return f"{head}\n{textwrap.fill(body, 96, initial_indent=indent, subsequent_indent=indent)}\n"
