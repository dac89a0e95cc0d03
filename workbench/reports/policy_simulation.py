"""`workbench simulate-policies` as a report table (text, CSV, JSON, Markdown, LaTeX)."""

from __future__ import annotations

import math

from workbench.policy_simulation import PolicySimulation
from workbench.tabular import Table, cells


def _pm(mean: float, sd: float, scale: float = 1.0, digits: int = 3) -> str:
    if math.isnan(mean):
        return "-"
    text = f"{scale * mean:.{digits}f}"
    return text + (f" ± {scale * sd:.{digits}f}" if sd else "")


def policy_table(result: PolicySimulation) -> Table:
    """One row per collection and policy."""
    rows = []
    for r in result.results:
        kappa = (
            "-" if math.isnan(r.kappa) else f"{r.kappa:.2f} [{r.kappa_low:.2f}, {r.kappa_high:.2f}]"
        )
        rows.append(
            cells(
                r.collection,
                r.policy,
                round(r.judgements),
                round(r.judgements / r.pool_documents, 2) if r.pool_documents else None,
                round(r.hours, 1),
                round(r.adjudications),
                round(r.overlap_documents),
                kappa,
                _pm(r.qrels_error, r.qrels_error_sd, 100, 1),
                _pm(r.tau, r.tau_sd),
            )
        )
    judges = ", ".join(f"{m.name} ({m.seconds:g} s)" for m in result.assessors)
    return Table(
        [
            "Collection",
            "Policy",
            "Judgements",
            "Per pooled doc",
            "Hours",
            "Adjudications",
            "Docs with 2+ judges",
            "Kappa [95 % CI]",
            "Qrels error %",
            "Kendall's tau (MAP)",
        ],
        rows,
        caption=(
            f"Assignment policies simulated: depth-{result.depth} pools, mean over "
            f"{result.repetitions} repetitions (± standard deviation), seed {result.seed}"
        ),
        label="tab:policy-simulation",
        digits=2,
        notes=[
            *result.notes,
            f"assessors: {judges}; ties are adjudicated by {result.adjudicator.name}, counted "
            "in adjudications and hours",
        ],
    )
