"""`workbench simulate-policies`: compare assignment policies with simulated assessors on CACM
and a generated collection (no store, no Flask)."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.reports.tables import FORMATS


@click.command("simulate-policies")
@click.option(
    "--cacm",
    "cacm_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The CACM collection's folder (cacm.all, query.text, qrels.text).",
)
@click.option(
    "--generated/--no-generated",
    default=True,
    show_default=True,
    help="Simulate on a generated collection too.",
)
@click.option(
    "--topics",
    type=click.IntRange(min=1),
    default=40,
    show_default=True,
    help="Topics of the generated collection.",
)
@click.option(
    "--policies",
    default=None,
    help="Policies separated by ';', each NAME[:key=value...] (workbench.routing), "
    "default: 1 and 2 judges per topic, primary + 10 %, adaptive up to 3.",
)
@click.option(
    "--assessor",
    "assessor_specs",
    multiple=True,
    help="NAME:flip=0.1[:up=0.2][:seconds=30][:sigma=0.5] or NAME:matrix=ROW/ROW..."
    "[:seconds=30] (repeat; default: six assessors, from careful to hasty).",
)
@click.option(
    "--adjudicator",
    "adjudicator_spec",
    default="adjudicator:flip=0.03:seconds=60",
    show_default=True,
    help="The model that decides ties.",
)
@click.option(
    "--depth", type=click.IntRange(min=1), default=20, show_default=True, help="Depth of the pools."
)
@click.option("--repetitions", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(tuple(FORMATS)), default="text", show_default=True
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
def simulate_policies(
    cacm_dir: Path | None,
    generated: bool,
    topics: int,
    policies: str | None,
    assessor_specs: tuple[str, ...],
    adjudicator_spec: str,
    depth: int,
    repetitions: int,
    seed: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Judgements spent, agreement measurable, qrels error and Kendall's tau of the run
    ranking for each assignment policy, with simulated assessors."""
    from workbench import policy_simulation as sim
    from workbench.reports.policy_simulation import policy_table
    from workbench.reports.tables import render, to_json

    collections = []
    try:
        if cacm_dir is not None:
            collections.append(sim.cacm_collection(cacm_dir, seed=seed))
        if generated:
            collections.append(sim.generated_collection(topics=topics, seed=seed))
        if not collections:
            raise sim.PolicySimulationError("choose a collection: --cacm DIR and/or --generated")
        results = []
        for collection in collections:
            grades = len(collection.scale)
            panel = (
                sim.parse_models(assessor_specs, grades)
                if assessor_specs
                else sim.default_panel(grades)
            )
            (adjudicator,) = sim.parse_models([adjudicator_spec], grades)
            results.append(
                sim.simulate_policies(
                    [collection],
                    sim.parse_policies(policies or sim.DEFAULT_POLICIES),
                    panel,
                    adjudicator=adjudicator,
                    depth=depth,
                    repetitions=repetitions,
                    seed=seed,
                )
            )
    except (sim.PolicySimulationError, OSError, UnicodeDecodeError) as error:
        raise click.ClickException(str(error)) from None
    merged = sim.PolicySimulation(
        tuple(r for result in results for r in result.results),
        results[0].assessors,
        results[0].adjudicator,
        depth,
        repetitions,
        seed,
        tuple(n for result in results for n in result.notes),
    )
    text = to_json(merged) if fmt == "json" else render(policy_table(merged), fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
