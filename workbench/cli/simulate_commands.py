"""`workbench simulate`, `simulate-estimates` and `simulate-stopping`: replay adaptive
methods, sampled judgements and stopping rules against known qrels (no store, no Flask)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def methods_option(default: str, help: str) -> Callable[..., Any]:
    """--methods: comma-separated adaptive methods (`workbench.adaptive.METHODS`), passed as
    `methods`. The old spelling --strategies still works in this release, with a warning;
    both together are refused."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_methods(*args: Any, methods: str | None, old_methods: str | None, **kw: Any):
            if old_methods is not None:
                if methods is not None:
                    raise click.UsageError("give --methods only (--strategies is its old name)")
                click.echo(
                    "warning: --strategies is deprecated: give the adaptive methods as "
                    "--methods (the old spelling will be refused in the next release)",
                    err=True,
                )
            return command(*args, methods=old_methods or methods or default, **kw)

        hidden = click.option("--strategies", "old_methods", default=None, hidden=True)
        shown = click.option("--methods", default=None, help=f"{help} [default: {default}]")
        return shown(hidden(with_methods))

    return decorate


def _inputs(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every simulation reads its data with (qrels, runs, depth, level, seed,
    documents, format, output)."""
    for option in reversed([
        click.option("--qrels", "qrels_path", required=True,
                     type=click.Path(exists=True, dir_okay=False),
                     help="The full qrels the judges read from."),
        click.option("--runs", "run_paths", required=True, multiple=True,
                     type=click.Path(exists=True, dir_okay=False),
                     help="A run file (repeat the option, or give several after one --runs)."),
        click.argument("more_runs", nargs=-1, type=click.Path(exists=True, dir_okay=False)),
        click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True,
                     help="Depth of the pool."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("-l", "--relevance-level", type=int, default=1, show_default=True),
        click.option("--documents", "documents_path", default=None,
                     type=click.Path(exists=True, dir_okay=False),
                     help="Documents (JSONL or TREC SGML) for the 'al' method."),
        click.option("--format", "fmt", type=click.Choice(tuple(FORMATS)), default="text",
                     show_default=True),
        click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                     default=None),
    ]):  # fmt: skip
        command = option(command)
    return command


def _read(qrels_path: str, run_paths: tuple[str, ...], documents_path: str | None):
    """(qrels dict, runs, texts or None), or exit 1 with the file's error."""
    from workbench.documents import read_documents
    from workbench.trec import TrecFormatError, read_qrels, read_run

    try:
        qrels = read_qrels(qrels_path).to_dict()
        runs = [read_run(path) for path in run_paths]
        texts = (
            {d.docno: f"{d.title}\n{d.text}".strip() for d in read_documents(documents_path)}
            if documents_path is not None
            else None
        )
    except TrecFormatError as error:
        fail(str(error))
    return qrels, runs, texts


def _write(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)


def _names(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


@click.command("simulate-estimates")
@_inputs
@click.option(
    "--designs",
    default="uniform,stratified,prior",
    show_default=True,
    help="Sampling designs: uniform, stratified, prior ('' for none).",
)
@methods_option("mm", "Adaptive methods judged with a reserved sample ('' for none).")
@click.option(
    "--budgets",
    default="10%,20%,30%",
    show_default=True,
    help="Shares of each topic's pool (10%) or judgements per topic (200).",
)
@click.option(
    "--sample-share",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.2,
    show_default=True,
    help="Adaptive methods: share of the budget for the reserved sample.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Samples per design and budget.",
)
@click.option(
    "--bootstrap",
    "replicates",
    type=click.IntRange(min=2),
    default=100,
    show_default=True,
    help="Bootstrap replicates per topic.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
)
def simulate_estimates(
    qrels_path: str, run_paths: tuple[str, ...], more_runs: tuple[str, ...], depth: int,
    seed: int, relevance_level: int, documents_path: str | None, fmt: str,
    output: Path | None, designs: str, methods: str, budgets: str, sample_share: float,
    repeats: int, replicates: int, confidence: float,
) -> None:  # fmt: skip
    """Estimate every run's MAP from sampled judgements (statAP, xinfAP, infAP, judged-only):
    bias, RMSE, ranking tau and interval coverage against the pool judged in full."""
    from workbench import adaptive, estimate_simulation, simulation
    from workbench.reports.estimates import estimate_simulation_table
    from workbench.reports.tables import render, to_json

    qrels, runs, texts = _read(qrels_path, (*run_paths, *more_runs), documents_path)
    try:
        result = estimate_simulation.simulate_estimates(
            qrels, runs, designs=_names(designs), strategies=_names(methods),
            budgets=simulation.parse_budgets(budgets), depth=depth, sample_share=sample_share,
            repeats=repeats, replicates=replicates, confidence=confidence,
            relevance_level=relevance_level, seed=seed, texts=texts,
        )  # fmt: skip
    except (simulation.SimulationError, adaptive.MethodError) as error:
        fail(str(error))
    _write(to_json(result.to_dict()) if fmt == "json"
           else render(estimate_simulation_table(result), fmt), output)  # fmt: skip


@click.command("simulate-stopping")
@_inputs
@methods_option("mm", "Adaptive methods (workbench.adaptive).")
@click.option(
    "--rules",
    default="knee,hypergeometric,target,sample",
    show_default=True,
    help="Stopping rules (workbench.stopping).",
)
@click.option(
    "--target",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.9,
    show_default=True,
    help="The recall target.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
)
@click.option(
    "--sample-share",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.1,
    show_default=True,
    help="The reserved sample of the target and sample rules (share of the pool).",
)
@click.option(
    "--check-every",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Consult the rule every N judgements (the live pools' batch).",
)
def simulate_stopping(
    qrels_path: str, run_paths: tuple[str, ...], more_runs: tuple[str, ...], depth: int,
    seed: int, relevance_level: int, documents_path: str | None, fmt: str,
    output: Path | None, methods: str, rules: str, target: float, confidence: float,
    sample_share: float, check_every: int,
) -> None:  # fmt: skip
    """Judge each topic until a stopping rule says stop: recall reached and judgements used."""
    from workbench import adaptive, simulation, stopping, stopping_simulation
    from workbench.reports.estimates import stopping_simulation_table
    from workbench.reports.tables import render, to_json

    qrels, runs, texts = _read(qrels_path, (*run_paths, *more_runs), documents_path)
    try:
        result = stopping_simulation.simulate_stopping(
            qrels, runs, strategies=_names(methods), rules=_names(rules), depth=depth,
            target=target, confidence=confidence, sample_share=sample_share,
            check_every=check_every, relevance_level=relevance_level, seed=seed, texts=texts,
        )  # fmt: skip
    except (simulation.SimulationError, adaptive.MethodError, stopping.StoppingError) as error:
        fail(str(error))
    _write(to_json(result.to_dict()) if fmt == "json"
           else render(stopping_simulation_table(result), fmt), output)  # fmt: skip


@click.command()
@_inputs
@methods_option(
    "depth,take,mtf,hedge,mm,ts",
    "Comma-separated adaptive methods and fixed orders (workbench.adaptive.METHODS).",
)
@click.option(
    "--budgets",
    default=None,
    help="Per-topic budgets: shares of the depth pool (10%) or judgement counts (200). "
    "Default: 5%,10%,20%,30%,40%,50%,60%,80%,100%.",
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
@click.option(
    "--group",
    "group_pairs",
    multiple=True,
    help="RUN_TAG=GROUP for leave-one-group-out (default: each run its own group).",
)
@click.option("--no-reusability", is_flag=True, help="Skip leave-one-group-out.")
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write relevant-found.svg and tau-map.svg here.",
)
def simulate(
    qrels_path: str, run_paths: tuple[str, ...], more_runs: tuple[str, ...], depth: int,
    seed: int, relevance_level: int, documents_path: str | None, fmt: str,
    output: Path | None, methods: str, budgets: str | None, judges: int, noise: float,
    group_pairs: tuple[str, ...], no_reusability: bool, plots_dir: Path | None,
) -> None:  # fmt: skip
    """Replay adaptive methods against FULL qrels: cost, relevant found, ranking agreement."""
    from workbench import adaptive, simulation
    from workbench.reports import simulation as report
    from workbench.reports.tables import render, to_json

    qrels, runs, texts = _read(qrels_path, (*run_paths, *more_runs), documents_path)
    try:
        result = simulation.simulate(
            qrels,
            runs,
            strategies=_names(methods),
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
    except (simulation.SimulationError, adaptive.MethodError) as error:
        fail(str(error))
    table = report.simulation_table(result)
    _write(to_json(result) if fmt == "json" else render(table, fmt), output)
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        (plots_dir / "relevant-found.svg").write_text(
            report.relevant_found_plot(result), encoding="utf-8"
        )
        (plots_dir / "tau-map.svg").write_text(report.tau_plot(result), encoding="utf-8")
        click.echo(f"wrote {plots_dir}/relevant-found.svg, tau-map.svg", err=True)
