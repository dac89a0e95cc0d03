"""Commands for the course notes' further analyses: collection-scale set measures, power and
topic-set size, parameter sweeps, interleaving, and run efficiency figures."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.common import fail, get_store
from workbench.services.errors import ServiceError
from workbench.trec import TrecFormatError

FORMATS = ("text", "json", "csv", "md", "latex")


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


_output = click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None
)
_format = click.option("--format", "fmt", type=click.Choice(FORMATS), default="text")


@click.command("collection-measures")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--campaign", "campaign_name", default=None, help="Campaign name or id.")
@click.option("--qrels", "qrels_spec", default="final", show_default=True,
              help="With --campaign: 'final', an assessor, a qrels set name, or a qrels file.")
@click.option("--num-docs", "-N", type=click.IntRange(min=1), default=None,
              help="Collection size N (default with --campaign: its document count).")
@click.option("-l", "--level", "relevance_level", type=int, default=1, show_default=True,
              help="Relevance level (files only; a campaign uses its own).")
@click.option("-q", "per_topic", is_flag=True, help="Files only: also one line per topic.")
@_format
@_output
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
    from workbench.reports.tables import Table, cells, render, to_json

    if campaign_name is None:
        if len(files) < 2 or num_docs is None:
            fail("give QRELS RUN [RUN ...] and --num-docs N, or --campaign")
        from workbench.trec import read_qrels, read_run

        try:
            qrels = read_qrels(files[0])
            rows = []
            for path in files[1:]:
                run = read_run(path)
                result = collection_set_measures(
                    qrels, run, num_docs, relevance_level=relevance_level
                )
                tag = run.tag or Path(path).name
                if per_topic:
                    rows.extend(
                        cells(tag, qid, *(getattr(m, name) for name in MEASURES))
                        for qid, m in result.per_topic.items()
                    )
                rows.append(cells(tag, "all", *(result.mean[name] for name in MEASURES)))
        except (TrecFormatError, ValueError) as error:
            fail(str(error))
        table = Table(["Run", "Topic", *MEASURES], rows, digits=6,
                      caption=f"Set measures at collection scale, N = {num_docs:,} documents.",
                      notes=[IMBALANCE_NOTE])  # fmt: skip
        _emit(render(table, fmt), output)
        return
    from workbench.services.campaigns import get_campaign
    from workbench.services.extended_evaluation import collection_scale

    try:
        with get_store(ctx).session() as session:
            campaign = get_campaign(session, campaign_name)
            scale = collection_scale(
                session, campaign, qrels_spec, num_docs=num_docs, allow_files=True
            )
    except (ServiceError, TrecFormatError) as error:
        fail(str(error))
    _emit(to_json(scale) if fmt == "json" else render(collection_scale_table(scale), fmt), output)
