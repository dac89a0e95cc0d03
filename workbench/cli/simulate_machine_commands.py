"""`workbench simulate-machine`: a machine judge simulated against known qrels, per hybrid
design and human budget (no store, no Flask; `workbench.machine_simulation`)."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.machine_simulation import DEFAULT_DESIGNS, DESIGNS, ERROR_MODELS
from workbench.reports.tables import FORMATS


def _shares(text: str) -> list[float]:
    """'5%,10%,0.2' -> [0.05, 0.1, 0.2]."""
    shares = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            shares.append(float(part[:-1]) / 100 if part.endswith("%") else float(part))
        except ValueError:
            raise click.ClickException(
                f"bad budget {part!r}: expected a share such as 10% or 0.1"
            ) from None
    return shares


@click.command("simulate-machine")
@click.option(
    "--qrels",
    "qrels_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The full qrels: the truth the machine and the humans are measured by.",
)
@click.option(
    "--runs",
    "run_paths",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A run file (repeatable).",
)
@click.argument("more_runs", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--designs",
    default=",".join(DEFAULT_DESIGNS),
    show_default=True,
    help=f"Comma-separated designs: {', '.join(DESIGNS)}.",
)
@click.option(
    "--budgets",
    default="5%,10%,20%",
    show_default=True,
    help="Human budgets: shares of each topic's pool.",
)
@click.option(
    "--kappa",
    type=click.FloatRange(0, 1),
    default=0.6,
    show_default=True,
    help="The machine's expected Cohen's kappa against the truth.",
)
@click.option(
    "--errors",
    type=click.Choice(tuple(ERROR_MODELS)),
    default="marginal",
    show_default=True,
    help="Where the machine's errors fall.",
)
@click.option(
    "--adversarial",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Share of the non-relevant pooled documents the machine over-rates.",
)
@click.option(
    "--detection",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Share of those flagged as suspicious (always judged by humans).",
)
@click.option(
    "--certainty-auc",
    type=click.FloatRange(0.5, 1, max_open=True),
    default=0.75,
    show_default=True,
    help="How well the machine's certainty tells its errors.",
)
@click.option(
    "--human-kappa",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="The human judges' kappa against the truth.",
)
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--repetitions", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-l", "--relevance-level", type=int, default=1, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(tuple(FORMATS)), default="text", show_default=True
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
def simulate_machine(
    qrels_path: str,
    run_paths: tuple[str, ...],
    more_runs: tuple[str, ...],
    designs: str,
    budgets: str,
    kappa: float,
    errors: str,
    adversarial: float,
    detection: float,
    certainty_auc: float,
    human_kappa: float,
    depth: int,
    repetitions: int,
    seed: int,
    relevance_level: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Simulate a machine judge of a given kappa beside humans: per design and human budget,
    the qrels error and Kendall's tau of the MAP ranking against the full qrels."""
    from workbench import machine_simulation as ms
    from workbench.reports.machine_simulation import simulation_table
    from workbench.reports.tables import render, to_json
    from workbench.trec import TrecFormatError, read_qrels, read_run

    try:
        result = ms.simulate_machine(
            read_qrels(qrels_path).to_dict(),
            [read_run(path) for path in (*run_paths, *more_runs)],
            model=ms.MachineModel(kappa, errors, adversarial, detection, certainty_auc),
            designs=[d.strip() for d in designs.split(",") if d.strip()],
            budgets=_shares(budgets), depth=depth, relevance_level=relevance_level,
            human_kappa=human_kappa, repetitions=repetitions, seed=seed,
        )  # fmt: skip
    except (TrecFormatError, ms.MachineSimulationError) as error:
        raise click.ClickException(str(error)) from None
    text = to_json(result.to_dict()) if fmt == "json" else render(simulation_table(result), fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
