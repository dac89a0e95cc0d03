"""Rendering of a judging simulation: one table (every strategy and budget) and two plots."""

from __future__ import annotations

from workbench.reports import plots
from workbench.simulation import Simulation
from workbench.tabular import Cell, Table

SHOWN = ("MAP", "P@10", "nDCG@10", "bpref", "infAP")


def simulation_table(simulation: Simulation) -> Table:
    """Per strategy and budget: cost, relevant found, ranking agreement, reusability."""
    columns = ["strategy", "budget", "judged", "judged %", "rel found", "rel %"]
    columns += ["tau MAP", "tau_AP MAP", "max drop MAP"]
    columns += [f"tau {m}" for m in SHOWN[1:]]
    columns += ["LOGO |dMAP|", "LOGO max"]
    rows = []
    for r in simulation.results:
        main = r.agreement("MAP")
        values = [
            r.strategy,
            r.budget,
            r.judgements,
            100 * r.judged_share,
            r.relevant_found,
            100 * r.relevant_share,
            main.kendall_tau,
            main.tau_ap,
            main.max_rank_change,
            *(r.agreement(m).kendall_tau for m in SHOWN[1:]),
            r.logo_mean_error,
            r.logo_max_error,
        ]
        rows.append([Cell(v) for v in values])
    noise = (
        f"judges read labels flipped with probability {simulation.noise} "
        f"(majority of {simulation.judges})"
        if simulation.noise
        else "judges read the full qrels' labels"
    )
    caption = (
        f"Judging simulation: {len(simulation.runs)} runs, {len(simulation.topics)} topics, "
        f"depth-{simulation.depth} pool of {simulation.pool_documents} documents holding "
        f"{simulation.relevant_in_pool} of the {simulation.relevant_in_qrels} relevant "
        f"documents; {noise}; seed {simulation.seed}."
    )
    notes = [
        "rel % = relevant found / relevant in the depth pools. tau = Kendall's tau-b between "
        "the runs' ranking under the budget's qrels (unjudged = non-relevant) and under the "
        "full qrels, for the same measure; bpref and infAP (pooled-unjudged as unjudged) "
        "against the full qrels' MAP (both biased when a strategy chose what was judged: "
        "see workbench simulate-estimates). LOGO: mean and largest |MAP error| of each "
        "group's runs when the group is left out of the pool that the strategy judges at the "
        "same budget.",
        *simulation.notes,
    ]
    return Table(columns, rows, caption=caption, label="tab:simulation", digits=3, notes=notes)


def _series(simulation: Simulation, value) -> dict[str, tuple[list[float], list[float]]]:
    series: dict[str, tuple[list[float], list[float]]] = {}
    for r in simulation.results:
        xs, ys = series.setdefault(r.strategy, ([], []))
        xs.append(100 * r.judged_share)
        ys.append(value(r))
    return series


def relevant_found_plot(simulation: Simulation, *, title: str = "") -> str:
    """Share of the pools' relevant documents found against the share of the pool judged."""
    return plots.curves(
        _series(simulation, lambda r: 100 * r.relevant_share),
        xlabel=f"judgements (% of the depth-{simulation.depth} pool)",
        ylabel="relevant found (%)",
        title=title or "Relevant documents found",
        ylim=(0, 101),
    )


def tau_plot(simulation: Simulation, *, measure: str = "MAP", title: str = "") -> str:
    """Kendall's tau (the measure's ranking vs the full qrels) against the share judged."""
    return plots.curves(
        _series(simulation, lambda r: r.agreement(measure).kendall_tau),
        xlabel=f"judgements (% of the depth-{simulation.depth} pool)",
        ylabel=f"Kendall's tau ({measure} ranking)",
        title=title or f"System ranking by {measure} vs the full qrels",
        ylim=(-0.05, 1.02),
    )
