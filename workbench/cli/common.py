"""Helpers shared by the command modules: the store of this invocation, its transactions,
error reporting, writing a result, and the options several commands take."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from workbench.reports.tables import FORMATS
from workbench.services.errors import ServiceError
from workbench.services.store_handle import Session, Store, open_store
from workbench.trec import TrecFormatError


def get_store(ctx: click.Context, *, upgrade: bool = True) -> Store:
    """The store named by --db / $WORKBENCH_DATABASE_URL, migrated to head on first use."""
    obj = ctx.find_root().ensure_object(dict)
    store = obj.get("store")
    if store is None:
        store = open_store(obj.get("database_url"), upgrade=upgrade)
        obj["store"] = store
        ctx.call_on_close(store.dispose)
    return store


def fail(message: str) -> None:
    """Print `message` on stderr and exit with status 1."""
    raise click.ClickException(message)


@contextmanager
def refusals() -> Iterator[None]:
    """A refused request (ServiceError) or bad file (TrecFormatError) within exits 1 with its
    message."""
    try:
        yield
    except (ServiceError, TrecFormatError) as error:
        fail(str(error))


@contextmanager
def transaction(ctx: click.Context, *, read: bool = False) -> Iterator[Session]:
    """One store transaction (read=True: a read-only one); a refused request or bad file exits
    1 with its message."""
    store = get_store(ctx)
    with refusals(), store.read_session() if read else store.session() as session:
        yield session


def emit(text: str, output: Path | None) -> None:
    """Write `text` to standard output, or to the file `output` (saying so on stderr)."""
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


# Options several commands share (the parameter names their functions take).
campaign_option = click.option(
    "--campaign", "campaign_name", required=True, help="Campaign name or id."
)
optional_campaign_option = click.option(
    "--campaign", "campaign_name", default=None, help="Campaign name or id."
)
pool_number_option = click.option(
    "--pool",
    "pool_number",
    type=int,
    default=None,
    help="The pool's number in the campaign (default: the latest).",
)
output_option = click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None
)
table_format_option = click.option(
    "--format", "fmt", type=click.Choice(tuple(FORMATS)), default="text"
)
seed_option = click.option("--seed", type=int, default=0, show_default=True)
files_level_option = click.option(
    "-l",
    "--level",
    "relevance_level",
    type=int,
    default=1,
    show_default=True,
    help="Relevance level (files only; a campaign uses its own).",
)


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def qrels_option(help: str) -> Decorator:
    """--qrels (the parameter qrels_spec, default 'final'): which qrels a campaign is scored on."""
    return click.option("--qrels", "qrels_spec", default="final", show_default=True, help=help)


def number_option(
    *decls: str, type: click.ParamType, default: float | None, help: str | None = None
) -> Decorator:
    """An option taking a number within the bounds of `type` (click.IntRange/FloatRange); its
    default, when there is one, is shown in the help."""
    return click.option(
        *decls, type=type, default=default, show_default=default is not None, help=help
    )


def choice_option(
    *decls: str,
    choices: Iterable[str],
    default: str | None = None,
    required: bool = False,
    help: str | None = None,
) -> Decorator:
    """An option taking one of `choices` (a registry's names); its default, when there is one,
    is shown in the help."""
    return click.option(
        *decls,
        type=click.Choice(tuple(choices)),
        default=default,
        show_default=default is not None,
        required=required,
        help=help,
    )


def svg_option(help: str) -> Decorator:
    """--plot FILE: where a command writes its SVG figure (none by default)."""
    return click.option(
        "--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, help=help
    )


def measure_option(help: str | None = None) -> Decorator:
    """-m/--measure: one measure, default map."""
    return click.option("-m", "--measure", default="map", show_default=True, help=help)


def split_tags(text: str | None) -> list[str] | None:
    """TAG,TAG,... as tags (blanks dropped), None when not given."""
    if text is None:
        return None
    return [tag.strip() for tag in text.split(",") if tag.strip()]


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
    from workbench.services.run_imports import topic_list as parsed_topic_list

    return parsed_topic_list(text)
