"""Store commands: db, campaign, import, pool, export (thin over workbench.services)."""

from __future__ import annotations

import functools
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workbench import adaptive, limits, pooling
from workbench.cli.common import (
    campaign_option,
    fail,
    get_store,
    pool_number_option,
    transaction,
)
from workbench.priority import run_as_batch
from workbench.services import (
    adaptive_pools,
    adaptive_provenance,
    archive,
    campaigns,
    document_imports,
    import_steps,
    pools,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import ServiceError
from workbench.services.store_handle import Session, shown_url
from workbench.services.topics import listed
from workbench.trec import TrecFormatError

if TYPE_CHECKING:
    from workbench.services import exports

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


def split_tags(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def report(result: import_steps.ImportReport) -> None:
    click.echo(result.summary())
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


# ---------------------------------------------------------------- db


@click.group()
def db() -> None:
    """The store's schema."""


@db.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Apply the migrations up to the newest schema."""
    store = get_store(ctx, upgrade=False)
    store.upgrade()
    click.echo(f"store at {shown_url(store)} is up to date")


# ---------------------------------------------------------------- campaign


@click.group()
def campaign() -> None:
    """Judging campaigns."""


@campaign.command("create")
@click.argument("name")
@click.option(
    "--scale",
    default="0=Not relevant,1=Relevant,2=Highly relevant",
    show_default=True,
    help="Grades as VALUE=LABEL or VALUE:LABEL:KEY, comma-separated.",
)
@click.option("--relevance-level", default=1, show_default=True, help="Lowest relevant grade.")
@click.option("--description", default="")
@click.pass_context
def campaign_create(
    ctx: click.Context, name: str, scale: str, relevance_level: int, description: str
) -> None:
    """Create a campaign with its relevance scale."""
    with transaction(ctx) as session:
        created = campaigns.create_campaign(
            session, name, scale=scale, relevance_level=relevance_level, description=description
        )
        grades = ", ".join(f"{g.value}={g.label} [{g.key}]" for g in created.grades)
        click.echo(f"campaign {created.name!r} (id {created.id}): {grades}")


@campaign.command("list")
@click.pass_context
def campaign_list(ctx: click.Context) -> None:
    """List the campaigns (the archived ones last, marked so)."""
    with transaction(ctx) as session:
        current = campaigns.list_campaigns(session)
        for item in [*current, *campaigns.list_campaigns(session, archived=True)]:
            scale = ",".join(f"{g.value}={g.label}" for g in item.grades)
            mark = "\tarchived" if item.archived_at is not None else ""
            click.echo(f"{item.id}\t{item.name}\t{scale}\tlevel {item.relevance_level}{mark}")


# ---------------------------------------------------------------- import

ADAPTIVE_METHODS = adaptive.ADAPTIVE
topics_option = click.option(
    "--topics", default=None, help="Only these topics: QID,QID,... or @FILE (one qid a line)."
)


def topic_list(text: str | None) -> list[str] | None:
    """The --topics value (QID,QID,... or @FILE) as qids, None for every topic; call it inside
    `transaction`, which turns a bad list into an exit with its message."""
    if text is None:
        return None
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ServiceError(f"cannot read the topic list {text[1:]!r}: {error}") from None
    return run_imports.topic_list(text)


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


# ---------------------------------------------------------------- pool


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
            warn_missing_text(session, built)
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
        warn_missing_text(session, built)


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


def warn_missing_text(session: Session, built: Any) -> None:
    missing = pools.documents_without_text(session, built)
    if missing:
        click.echo(
            f"warning: {len(missing)} pooled document(s) have no text in the store: "
            f"{listed(missing)}",
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
        warn_missing_text(session, extended)


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
        stats = pools.pool_statistics(session, described)
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


# ---------------------------------------------------------------- export


class ExportGroup(click.Group):
    """`workbench export NAME`: a subcommand per entry of exports.EXPORTS."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_exports().EXPORTS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        export = _exports().EXPORTS.get(cmd_name)
        return None if export is None else export_command(export)


def _exports() -> ModuleType:
    """workbench.services.exports, imported when an export is asked for: the exports reach
    the statistics modules and scipy, most of the start-up of every other store command."""
    from workbench.services import exports

    return exports


@click.group(cls=ExportGroup)
def export() -> None:
    """Export a campaign's pool, qrels, judgement log, ... as a file."""


output_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    default=None,
    help="Output file (default, or '-': standard output).",
)


def export_option(
    option: exports.ExportOption,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option `--name` of an export's option."""
    flag = "--" + option.name.replace("_", "-")
    if option.kind == "flag":
        return click.option(flag, option.name, is_flag=True, help=option.help)
    if option.kind == "int":
        bounds = click.IntRange(option.minimum, limits.INT32_MAX)
        return click.option(flag, option.name, type=bounds, default=None, help=option.help)
    if option.kind == "choice":
        choice = click.Choice(option.choices)
        default = option.choices[0]
        return click.option(flag, option.name, type=choice, default=default, help=option.help)
    return click.option(flag, option.name, default=None, help=option.help)


def export_command(export: exports.Export) -> click.Command:
    """The CLI command of `export`: written in full before the output file is opened, so a
    refusal leaves no file; the count and any warnings go to standard error."""

    @click.pass_context
    def run(ctx: click.Context, campaign_name: str, output: str | None, **options: Any) -> None:
        text = io.StringIO()
        with transaction(ctx, read=True) as session:
            campaign = campaigns.get_campaign(session, campaign_name)
            written = export.write(session, campaign, text, options)
        if output is None or output == "-":
            sys.stdout.write(text.getvalue())
        else:
            with open(output, "w", encoding="utf-8", newline="") as dest:
                dest.write(text.getvalue())
        for warning in written.warnings:
            click.echo(f"warning: {warning}", err=True)
        click.echo(f"{written.count} {export.counted} written", err=True)

    decorators: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        campaign_option,
        output_option,
        *map(export_option, export.options),
    ]
    command: Callable[..., Any] = run
    for decorate in reversed(decorators):
        command = decorate(command)
    return click.command(export.name, help=export.help)(command)


from workbench.cli.adaptive_commands import adaptive_group  # noqa: E402  (uses the helpers above)

pool.add_command(adaptive_group)


# ---------------------------------------------------------------- archive and delete

kind_argument = click.argument("kind", type=click.Choice(list(archive.KINDS)))
within_option = click.option(
    "--campaign", "campaign_name", default=None, help="The campaign of a run, topic or pool."
)


def object_command(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """A command on one stored object, KIND NAME [--campaign C], then its own options."""

    def decorate(function: Callable[..., Any]) -> click.Command:
        command = click.pass_context(function)
        return click.command(name)(kind_argument(click.argument("name")(within_option(command))))

    return decorate


@object_command("archive")
@click.option("--restore", is_flag=True, help="Bring an archived object back.")
def archive_command(
    ctx: click.Context, kind: str, name: str, campaign_name: str | None, restore: bool
) -> None:
    """Archive (hide, make read-only) or --restore a campaign, run, topic, pool (by number) or
    user. Archived users cannot log in; the last active admin cannot be archived."""
    with transaction(ctx) as session:
        obj = archive.find_object(session, kind, name, campaign_name)
        archive.set_archived(session, obj, not restore)
        click.echo(f"{archive.name_of(obj)} {'restored' if restore else 'archived'}")


@object_command("delete")
@click.option("--yes", is_flag=True, help="Delete without asking.")
def delete_command(
    ctx: click.Context, kind: str, name: str, campaign_name: str | None, yes: bool
) -> None:
    """Delete a campaign, run, topic, pool or user that nothing judged depends on (the
    dependents are shown first); judgements are never deleted: archive instead."""
    with transaction(ctx, read=True) as session:  # the question is asked outside any write
        obj = archive.find_object(session, kind, name, campaign_name)
        shown, found = archive.name_of(obj), archive.dependents(session, obj)
    click.echo(f"{shown}: depends on it: {found.summary()}")
    if found.deletable and not yes:
        click.confirm("Delete it for good?", abort=True)
    with transaction(ctx) as session:
        archive.delete_object(session, archive.find_object(session, kind, name, campaign_name))
    click.echo(f"{shown} deleted")
