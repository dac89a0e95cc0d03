"""The ``trec-eval`` subcommand of the click group; the command itself is
:mod:`workbench.trec_eval_command` (the ``workbench`` entry point runs it without click)."""

from __future__ import annotations

import sys

import click

from workbench.trec_eval_command import run_trec_eval


@click.command(
    "trec-eval",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def trec_eval(args: tuple[str, ...]) -> None:
    """trec_eval, byte for byte: workbench trec-eval [flags] QRELS RUN [RUN ...] (-h for flags)."""
    sys.exit(run_trec_eval(list(args)))
