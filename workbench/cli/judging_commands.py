"""How a campaign is judged (`workbench judging`) and what its pairwise preferences say
(`workbench preferences`): thin over services.campaigns and services.preferences."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from workbench import judging_modes
from workbench.cli import common


def _mode_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--mode and one option per option of any judging mode (`judging_modes.JUDGING_MODES`)."""
    declared: dict[str, judging_modes.ModeOption] = {}
    for mode in judging_modes.JUDGING_MODES.values():
        for option in mode.options:
            declared.setdefault(option.name, option)
    for option in reversed(declared.values()):
        flag = "--" + option.name.replace("_", "-")
        if option.choices:
            command = common.choice_option(
                flag, option.name, choices=option.choices, help=option.help
            )(command)
        else:
            kind = click.IntRange(option.minimum, option.maximum)
            command = click.option(flag, option.name, type=kind, default=None, help=option.help)(
                command
            )
    return common.choice_option(
        "--mode",
        choices=judging_modes.JUDGING_MODES,
        help="; ".join(
            f"{m.name}: {m.help.rstrip('.')}" for m in judging_modes.JUDGING_MODES.values()
        ),
    )(command)


@click.group()
def judging() -> None:
    """How a campaign's assessors judge: one document, a list of passages or pairs per
    screen; evidence passages."""


@judging.command("set")
@common.campaign_option
@_mode_options
@click.option(
    "--evidence/--no-evidence",
    default=None,
    help="Assessors mark the passages that make a document relevant (the one-document page).",
)
@click.pass_context
def judging_set(
    ctx: click.Context, campaign_name: str, mode: str | None, evidence: bool | None, **options: Any
) -> None:
    """Set the judging mode (the options of another mode are refused) and evidence."""
    from workbench.services import campaigns

    given = {name: value for name, value in options.items() if value is not None}
    with common.transaction(ctx) as session:
        campaign = campaigns.get_campaign(session, campaign_name)
        campaigns.set_judging(session, campaign, mode=mode, options=given, evidence=evidence)
        shown = campaigns.campaign_info(campaign).judging()
    click.echo(f"campaign {campaign_name!r}: {shown}")


@judging.command("show")
@common.campaign_option
@click.pass_context
def judging_show(ctx: click.Context, campaign_name: str) -> None:
    """Say how the campaign is judged."""
    from workbench.services import campaigns

    with common.transaction(ctx, read=True) as session:
        campaign = campaigns.get_campaign(session, campaign_name)
        click.echo(campaigns.campaign_info(campaign).judging())


@click.group()
def preferences() -> None:
    """Pairwise preferences of a campaign (export them with `workbench export prefs`)."""


@preferences.command("evaluate")
@common.campaign_option
@click.option(
    "--qrels",
    "against",
    default="final",
    show_default=True,
    help="The assessors' qrels to compare with (final, an assessor, a qrels set or a file).",
)
@common.measure_option("The measure under the qrels.")
@click.option("--assessor", default=None, help="One assessor's preferences (default: majority).")
@common.table_format_option
@common.output_option
@click.pass_context
def preferences_evaluate(
    ctx: click.Context,
    campaign_name: str,
    against: str,
    measure: str,
    assessor: str | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Rank the runs on the pairwise preferences (trec_eval -R prefs, prefs_simp) and on the
    qrels, as `querylog evaluate` does for clicks; Kendall's tau between the rankings."""
    from workbench.reports.querylogs import click_evaluation_table
    from workbench.reports.tables import render, to_json
    from workbench.services import campaigns
    from workbench.services.preferences import preference_evaluation

    with common.transaction(ctx, read=True) as session:
        campaign = campaigns.get_campaign(session, campaign_name)
        result = preference_evaluation(
            session, campaign, against, measure=measure, assessor=assessor, allow_files=True
        )
    text = (
        to_json(result.to_dict()) if fmt == "json" else render(click_evaluation_table(result), fmt)
    )
    common.emit(text, output)
