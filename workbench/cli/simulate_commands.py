"""`workbench simulate`: replay judging strategies against known qrels (no store, no Flask)."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.reports.tables import FORMATS


def fail(message: str) -> None:
    """Exit 1 with the message (without importing the store, as cli.common does)."""
    raise click.ClickException(message)


def _groups(pairs: tuple[str, ...]) -> dict[str, str]:
    groups = {}
    for pair in pairs:
        tag, sep, group = pair.partition("=")
        if not sep or not tag or not group:
            fail(f"bad --group {pair!r}: expected RUN_TAG=GROUP")
        groups[tag] = group
    return groups


@click.command()
@click.option(
    "--qrels",
    "qrels_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The full qrels the judges read from.",
)
@click.option(
    "--runs",
    "run_paths",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A run file (repeat the option, or give several after one --runs).",
)
@click.argument("more_runs", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--strategies",
    default="depth,take,mtf,hedge,mm-ns,ts",
    show_default=True,
    help="Comma-separated judging strategies (see workbench.adaptive).",
)
@click.option(
    "--budgets",
    default=None,
    help="Per-topic budgets: shares of the depth pool (10%) or judgement counts (200). "
    "Default: 5%,10%,20%,30%,40%,50%,60%,80%,100%.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Depth of the pool the strategies judge.",
)
@click.option(
    "--judges",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Reads per judgement; the label is their majority.",
)
@click.option(
    "--noise",
    type=click.FloatRange(0, 0.5, max_open=True),
    default=0.0,
    show_default=True,
    help="Probability that a read flips the label.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-l", "--relevance-level", type=int, default=1, show_default=True)
@click.option(
    "--group",
    "group_pairs",
    multiple=True,
    help="RUN_TAG=GROUP for leave-one-group-out (default: each run its own group).",
)
@click.option("--no-reusability", is_flag=True, help="Skip leave-one-group-out.")
@click.option(
    "--documents",
    "documents_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Documents (JSONL or TREC SGML) for the 'al' strategy.",
)
@click.option(
    "--format", "fmt", type=click.Choice(tuple(FORMATS)), default="text", show_default=True
)
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write relevant-found.svg and tau-map.svg here.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
def simulate(
    qrels_path: str,
    run_paths: tuple[str, ...],
    more_runs: tuple[str, ...],
    strategies: str,
    budgets: str | None,
    depth: int,
    judges: int,
    noise: float,
    seed: int,
    relevance_level: int,
    group_pairs: tuple[str, ...],
    no_reusability: bool,
    documents_path: str | None,
    fmt: str,
    plots_dir: Path | None,
    output: Path | None,
) -> None:
    """Replay judging strategies against FULL qrels: cost, relevant found, ranking agreement."""
    from workbench import adaptive, simulation
    from workbench.documents import read_documents
    from workbench.reports import simulation as report
    from workbench.reports.tables import render, to_json
    from workbench.trec import TrecFormatError, read_qrels, read_run

    try:
        qrels = read_qrels(qrels_path).to_dict()
        runs = [read_run(path) for path in (*run_paths, *more_runs)]
        texts = None
        if documents_path is not None:
            texts = {
                d.docno: f"{d.title}\n{d.text}".strip() for d in read_documents(documents_path)
            }
        result = simulation.simulate(
            qrels,
            runs,
            strategies=[s.strip() for s in strategies.split(",") if s.strip()],
            budgets=simulation.parse_budgets(budgets or simulation.DEFAULT_BUDGETS),
            depth=depth,
            relevance_level=relevance_level,
            noise=noise,
            judges=judges,
            seed=seed,
            groups=_groups(group_pairs),
            reusability=not no_reusability,
            texts=texts,
        )
    except (TrecFormatError, simulation.SimulationError, adaptive.StrategyError) as error:
        fail(str(error))
    table = report.simulation_table(result)
    text = to_json(result) if fmt == "json" else render(table, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        (plots_dir / "relevant-found.svg").write_text(
            report.relevant_found_plot(result), encoding="utf-8"
        )
        (plots_dir / "tau-map.svg").write_text(report.tau_plot(result), encoding="utf-8")
        click.echo(f"wrote {plots_dir}/relevant-found.svg, tau-map.svg", err=True)
