"""The `workbench` command: a click group whose subcommands load lazily.

Lazy loading keeps `workbench trec-eval` free of Flask and SQLAlchemy imports, so its
whole-process time is the evaluator's own. Each area owns one module of commands.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from workbench import __version__

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "trec-eval": "workbench.cli.trec_eval:trec_eval",
    "measures": "workbench.cli.measures_command:measures",
    "db": "workbench.cli.store_commands:db",
    "campaign": "workbench.cli.store_commands:campaign",
    "import": "workbench.cli.import_commands:import_group",
    "pool": "workbench.cli.pool_commands:pool",
    "export": "workbench.cli.store_commands:export",
    "archive": "workbench.cli.store_commands:archive_command",
    "delete": "workbench.cli.store_commands:delete_command",
    "user": "workbench.cli.web_commands:user",
    "assign": "workbench.cli.web_commands:assign",
    "remainder": "workbench.cli.quality_commands:remainder",
    "gold": "workbench.cli.quality_commands:gold_group",
    "practice": "workbench.cli.quality_commands:practice_group",
    "assessors": "workbench.cli.quality_commands:assessors",
    "serve": "workbench.cli.web_commands:serve",
    "demo": "workbench.cli.web_commands:demo",
    "agreement": "workbench.cli.analysis_commands:agreement",
    "adjudicate": "workbench.cli.analysis_commands:adjudicate",
    "evaluate": "workbench.cli.report_commands:evaluate",
    "progress": "workbench.cli.report_commands:progress",
    "estimate": "workbench.cli.estimate_commands:estimate",
    "simulate": "workbench.cli.simulate_commands:simulate",
    "simulate-machine": "workbench.cli.simulate_machine_commands:simulate_machine",
    "simulate-estimates": "workbench.cli.simulate_commands:simulate_estimates",
    "simulate-stopping": "workbench.cli.simulate_commands:simulate_stopping",
    "simulate-policies": "workbench.cli.policy_simulation_commands:simulate_policies",
    "querylog": "workbench.cli.querylog_commands:querylog",
    "machine": "workbench.cli.machine_commands:machine",
    "judging": "workbench.cli.judging_commands:judging",
    "preferences": "workbench.cli.judging_commands:preferences",
    # the course notes' further analyses
    "collection-measures": "workbench.cli.course_notes_commands:collection_measures",
    "power": "workbench.cli.course_notes_commands:power",
    "sweep": "workbench.cli.course_notes_commands:sweep",
    "interleave": "workbench.cli.course_notes_commands:interleave",
    "efficiency": "workbench.cli.course_notes_commands:efficiency",
}


def db_option_first(args: list[str]) -> list[str]:
    """`--db URL` (or `--db=URL`) given after the subcommand moved before it, so that
    `workbench pool stats --db URL` works as `workbench --db URL pool stats` (not for
    trec-eval, whose arguments are trec_eval's own)."""
    words = [a for a in args if not a.startswith("-")]
    if words and words[0] == "trec-eval":
        return args
    end = args.index("--") if "--" in args else len(args)
    for i, arg in enumerate(args[:end]):
        if arg == "--db" and i + 1 < end:
            return [arg, args[i + 1], *args[:i], *args[i + 2 :]]
        if arg.startswith("--db="):
            return [arg, *args[:i], *args[i + 1 :]]
    return args


class LazyGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, db_option_first(args))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                return None
            raise
        return getattr(module, attribute)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a store that cannot be written (read-only, full disk) exits 1 with
        one line instead of a traceback."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as error:
            from workbench.services.store_handle import storage_problem

            problem = storage_problem(error)
            if problem is None:
                raise
            raise click.ClickException(problem) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    "database_url",
    envvar="WORKBENCH_DATABASE_URL",
    default=None,
    help="SQLAlchemy URL of the store (default: SQLite in ./instance).",
)
@click.version_option(__version__, prog_name="workbench")
@click.pass_context
def main(ctx: click.Context, database_url: str | None) -> None:
    """Pooling, relevance judging and trec_eval-exact evaluation for IR campaigns."""
    ctx.ensure_object(dict)
    ctx.obj["database_url"] = database_url
