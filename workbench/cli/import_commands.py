"""The `import` commands: topics, documents, runs, qrels and ir_datasets into a campaign (thin
over the import services)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from workbench.cli.common import (
    campaign_option,
    fail,
    get_store,
    topic_list,
    topics_option,
    transaction,
)
from workbench.priority import run_as_batch
from workbench.services import (
    campaigns,
    document_imports,
    import_steps,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import ServiceError
from workbench.trec import TrecFormatError

T = TypeVar("T")


def _campaign_exists(ctx: click.Context, name: str) -> None:
    """Refuse an unknown campaign before reading large files."""
    with transaction(ctx, read=True) as session:
        campaigns.get_campaign(session, name)


def _read_first(read: Callable[[], T]) -> T:
    """Files read and checked before the write transaction (the store's write lock on SQLite
    is then held for the writes alone); a bad file exits 1 with its message."""
    try:
        return read()
    except (ServiceError, TrecFormatError) as error:
        fail(str(error))
        raise


def report(result: import_steps.ImportReport) -> None:
    click.echo(result.summary())
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


files_argument = click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False)
)


@click.group("import")
@click.option(
    "--priority",
    type=click.Choice(["batch", "normal"]),
    default="batch",
    envvar="WORKBENCH_IMPORT_PRIORITY",
    show_default=True,
    help="CPU priority: batch runs behind a web server on this machine (nice +10), so that "
    "assessors' judgements do not wait; normal keeps the shell's priority.",
)
def import_group(priority: str) -> None:
    """Import topics, documents, runs or qrels into a campaign (each file set: one
    transaction; on any error nothing is stored)."""
    if priority == "batch":
        run_as_batch()


@dataclass(frozen=True)
class ImportFiles:
    """What every `import` subcommand is given first: the click context, the campaign (name
    or id) and the files."""

    ctx: click.Context
    campaign: str
    files: tuple[str, ...]


def import_command(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """An `import` subcommand taking --campaign and FILES (its function gets them as one
    ImportFiles), then its own options."""

    def decorate(function: Callable[..., Any]) -> click.Command:
        @functools.wraps(function)
        def command(
            ctx: click.Context, campaign_name: str, files: tuple[str, ...], **options: Any
        ) -> None:
            function(ImportFiles(ctx, campaign_name, files), **options)

        return import_group.command(name)(
            campaign_option(files_argument(click.pass_context(command)))
        )

    return decorate


@import_command("topics")
@click.option("--format", "fmt", type=click.Choice(["trec", "tsv", "jsonl"]), default=None)
def import_topics(given: ImportFiles, fmt: str) -> None:
    """Topics: TREC <top> SGML, TSV (qid, title) or JSONL."""
    with transaction(given.ctx) as session:
        target = campaigns.get_campaign(session, given.campaign)
        for path in given.files:
            report(topic_imports.import_topics(session, target, path, format=fmt))


@import_command("documents")
@click.option("--only-pooled", is_flag=True, help="Keep only documents some pool holds.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "trec"]), default=None)
@click.option(
    "--replace",
    is_flag=True,
    help="Change the text of judged documents (recorded in the judgement log).",
)
def import_documents(
    given: ImportFiles,
    only_pooled: bool,
    fmt: str,
    replace: bool,
) -> None:
    """Documents: JSONL {"docno","title","text",...} or TREC <DOC> SGML (.gz too), streamed."""
    _campaign_exists(given.ctx, given.campaign)
    store = get_store(given.ctx)
    # Written in short transactions of their own, shown all at once at the end (or never).
    imported = _read_first(
        lambda: document_imports.import_documents_in_steps(
            store, given.campaign, given.files, only_pooled=only_pooled, format=fmt, replace=replace
        )
    )
    report(imported)


@import_command("runs")
@click.option("--replace", is_flag=True, help="Overwrite runs whose tag is already stored.")
@click.option("--group", default="", help="Team or group that submitted the runs.")
@click.option("--no-contribute", is_flag=True, help="The runs do not contribute to pools.")
@click.option("--split-tags", is_flag=True, help="A file with several tags: one run per tag.")
@topics_option
@click.option(
    "--skip-unknown-topics", is_flag=True, help="Leave out (and report) topics the campaign lacks."
)
@click.option(
    "--efficiency",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A sidecar file (JSON or CSV) of the runs' efficiency figures, imported with them.",
)
def import_runs(
    given: ImportFiles,
    replace: bool,
    group: str,
    no_contribute: bool,
    split_tags: bool,
    topics: str | None,
    skip_unknown_topics: bool,
    efficiency: str | None,
) -> None:
    """Runs (TREC format), stored whole."""
    _campaign_exists(given.ctx, given.campaign)
    prepared = _read_first(lambda: run_imports.prepare_runs(given.files, split_tags=split_tags))
    options = {
        "replace": replace,
        "group": group,
        "contributes": not no_contribute,
        "split_tags": split_tags,
        "topics": topic_list(topics),
        "skip_unknown_topics": skip_unknown_topics,
    }
    if efficiency is None:  # short transactions of their own, shown all at once (or never)
        store = get_store(given.ctx)
        report(
            _read_first(
                lambda: run_imports.import_runs_in_steps(store, given.campaign, prepared, **options)
            )
        )
        return
    with transaction(given.ctx) as session:
        target = campaigns.get_campaign(session, given.campaign)
        report(run_imports.import_runs(session, target, prepared, **options))
        from workbench.services.efficiency import import_efficiency

        # in the same transaction: both or neither
        stored = import_efficiency(session, target, efficiency, replace=replace)
        click.echo(f"efficiency figures stored for {len(stored.runs)} runs")


@import_command("qrels")
@click.option("--name", default=None, help="Name of the qrels set (default: the file name).")
def import_qrels(given: ImportFiles, name: str | None) -> None:
    """Existing qrels, each file as a named set."""
    if name is not None and len(given.files) > 1:
        fail("--name needs exactly one file")
    _campaign_exists(given.ctx, given.campaign)
    prepared = _read_first(lambda: qrels_imports.prepare_qrels(given.files))
    with transaction(given.ctx) as session:
        target = campaigns.get_campaign(session, given.campaign)
        for qrels in prepared:
            report(qrels_imports.import_qrels(session, target, qrels, name=name))


@import_group.command("ir-datasets")
@click.argument("dataset")
@campaign_option
@click.option("--no-topics", is_flag=True, help="Leave out the dataset's queries.")
@click.option("--no-documents", is_flag=True, help="Leave out its documents.")
@click.option("--no-qrels", is_flag=True, help="Leave out its qrels.")
@click.option("--no-run", is_flag=True, help="Leave out its scored documents (a run).")
@click.option("--run-tag", default=None, help="Tag of the run (default: the dataset's id).")
@click.option("--qrels-name", default=None, help="Name of the qrels (default: the dataset's id).")
@click.option("--replace", is_flag=True, help="Replace stored documents and a run of that tag.")
@click.pass_context
def import_ir_datasets(
    ctx: click.Context,
    dataset: str,
    campaign_name: str,
    no_topics: bool,
    no_documents: bool,
    no_qrels: bool,
    no_run: bool,
    run_tag: str | None,
    qrels_name: str | None,
    replace: bool,
) -> None:
    """A dataset of ir_datasets (e.g. msmarco-passage/trec-dl-2019/judged): its queries as
    topics, documents, qrels and scored documents as a run, each streamed with its progress
    on stderr (pip install 'workbench-ir[ir_datasets]'; ir_datasets downloads the files on
    first use, into ~/.ir_datasets)."""
    from workbench.services.ir_datasets_import import PARTS, import_ir_dataset

    left_out = {"topics": no_topics, "documents": no_documents, "qrels": no_qrels, "run": no_run}
    parts = tuple(part for part in PARTS if not left_out[part])
    if not parts:
        fail("every part is left out: nothing to import")
    _campaign_exists(ctx, campaign_name)
    reports = _read_first(
        lambda: import_ir_dataset(
            get_store(ctx),
            campaign_name,
            dataset,
            parts=parts,
            run_tag=run_tag,
            qrels_name=qrels_name,
            replace=replace,
            progress=_progress_line,
        )
    )
    for result in reports:
        report(result)


def _progress_line(part: str, done: int, total: int | None) -> None:
    """``documents: 120,000 of 8,841,823 (1%)`` rewritten in place on stderr; a newline once
    the part is written."""
    share = f" of {total:,} ({100 * done // total}%)" if total else ""
    finished = total is not None and done >= total
    click.echo(f"\r{part}: {done:,}{share}", err=True, nl=finished)
