"""The table of a machine-judge simulation (`workbench.machine_simulation`)."""

from __future__ import annotations

from workbench.machine_simulation import DESIGNS, MachineSimulation
from workbench.tabular import Table, cells


def simulation_table(result: MachineSimulation) -> Table:
    """One row per design and human budget: human judgements, qrels error, the machine's
    realised kappa, Kendall's tau (mean, least) and tau_AP of the MAP ranking, the largest
    rank change."""
    order = list(DESIGNS)
    rows = [
        cells(r.design, f"{r.budget:.0%}", round(r.human_judgements), r.human_share,
              r.qrels_error, r.machine_kappa, r.tau, r.tau_min, r.tau_ap, r.max_rank_change)
        for r in sorted(result.rows, key=lambda r: (r.budget, order.index(r.design)))
    ]  # fmt: skip
    m = result.model
    return Table(
        [
            "Design",
            "Human budget",
            "Human judgements",
            "Human share",
            "Qrels error",
            "Machine kappa",
            "tau (MAP)",
            "least tau",
            "tau_AP",
            "Largest move",
        ],
        rows,
        caption=(
            f"A machine judge of kappa {m.kappa:g} ({m.errors} errors, {m.adversarial:.0%} "
            f"adversarial over-rated, {m.detection:.0%} of them flagged) on {result.topics} "
            f"topics, {result.runs} runs, a depth-{result.depth} pool of {result.pooled} "
            f"documents; means over {result.repetitions} draws"
        ),
        label="machine-simulation",
        digits=3,
        notes=[
            f"{name}: {text}."
            for name, text in DESIGNS.items()
            if any(r.design == name for r in result.rows)
        ],
    )
