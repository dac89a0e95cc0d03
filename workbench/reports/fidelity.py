"""The random-click fidelity check of interleaving (`interleaving.fidelity`), as a table."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.interleaving import Fidelity
from workbench.tabular import Table, cells


def fidelity_table(checks: Sequence[Fidelity]) -> Table:
    """Per method and pair of runs: impressions won by each under random clicks, the bias
    (first - second wins) / impressions and its binomial p-value."""
    rows = [
        cells(
            c.method,
            p.first,
            p.second,
            p.impressions,
            p.first_wins,
            p.second_wins,
            p.bias,
            p.p_value,
        )
        for c in checks
        for p in c.pairs
    ]
    summary = "; ".join(
        f"{c.method}: mean |bias| {c.mean_abs_bias:.3f}, {c.biased_pairs} of {len(c.pairs)} "
        f"pairs with p < {c.alpha:g}"
        for c in checks
    )
    first = checks[0] if checks else None
    return Table(
        ["Method", "Run A", "Run B", "Impressions", "A wins", "B wins", "Bias", "p"],
        rows,
        caption=(
            "Fidelity check: every pair interleaved with clicks at random (each shown document "
            f"clicked with probability {first.p_click:g} whatever its relevance, "
            f"{first.impressions} impressions per query, seed {first.seed}). A method with "
            "fidelity prefers neither run (Hofmann, Whiteson & de Rijke, TOIS 2013): bias near "
            f"0 and about 5 % of the pairs significant by chance. {summary}."
            if first
            else "Fidelity check: no pair of runs."
        ),
        label="tab:interleaving-fidelity",
        digits=3,
        notes=[
            "Balanced interleaving credits the lowest click's best rank in either ranking, "
            "which favours one ranking when the two hold the same documents in other orders; "
            "team-draft (the default) credits each click to the run that placed the document."
        ],
    )
