"""Store commands: db, campaign, export, archive and delete (thin over workbench.services);
the imports are in import_commands.py, the pools in pool_commands.py."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import click

from workbench import limits
from workbench.cli.common import campaign_option, get_store, transaction
from workbench.services import archive, campaigns
from workbench.services.store_handle import shown_url

if TYPE_CHECKING:
    from workbench.services import exports


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
    with transaction(ctx, read=True) as session:
        current = campaigns.list_campaigns(session)
        for item in [*current, *campaigns.list_campaigns(session, archived=True)]:
            scale = ",".join(f"{g.value}={g.label}" for g in item.grades)
            mark = "\tarchived" if item.archived_at is not None else ""
            click.echo(f"{item.id}\t{item.name}\t{scale}\tlevel {item.relevance_level}{mark}")


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
