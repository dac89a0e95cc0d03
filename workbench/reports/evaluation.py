"""Evaluation report tables: runs x measures, pairwise tests, Tukey HSD, ranking stability,
reusability and per-topic scores (shown by the sections of `reports.sections`).

Conventions (docs/methods.md section 5): rows are lettered a, b, c...; a letter j on row i's
cell means run i is significantly better than run j on that measure (significant after the
correction, and a higher mean); the best value per measure is bold; the caption names the
qrels, the test, the correction and alpha.
"""

from __future__ import annotations

import string

from workbench.services.evaluation import Comparisons, EvaluationTable
from workbench.services.evaluation_stability import RankingStability, Reusability
from workbench.stats import TukeyResult
from workbench.tabular import Cell, Table, bold_best, cells


def letter(index: int) -> str:
    """a, b, ..., z, aa, ab, ... for row 0, 1, ..."""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = letters[rest] + name
    return name


def significance_note(comparisons: Comparisons) -> str:
    """What the runs table's marks mean, and how the test's p-values were found when they
    are not analytic (Monte Carlo estimates, or exact enumeration)."""
    return (
        f"Superscripts give the runs a run is significantly better than "
        f"({comparisons.test}, {comparisons.correction} correction over all pairs of runs "
        f"per measure, alpha = {comparisons.alpha:g})." + _p_values(comparisons)
    )


def _p_values(comparisons: Comparisons) -> str:
    return f" {comparisons.p_values}" if comparisons.p_values else ""


def runs_table(table: EvaluationTable, comparisons: Comparisons | None = None) -> Table:
    """Runs x measures (summary-only ones such as gm_map too) with letters, the best value
    per measure in bold, significance marks, and each run's missing judged topics (scored 0,
    or dropped with the common-topic set); the caption states the topic convention and every
    note of the evaluation."""
    tags = [r.tag for r in table.runs]
    index = {tag: i for i, tag in enumerate(tags)}
    rows = []
    by_measure = (
        {m: comparisons.beaten(m) for m in table.columns} if comparisons is not None else {}
    )
    for i, run in enumerate(table.runs):
        row = [Cell(letter(i)), Cell(run.tag)]
        for measure in table.columns:
            cell = Cell(run.summary[measure])
            if comparisons is not None:
                beaten = by_measure[measure].get(run.tag, [])
                cell.marks = "".join(sorted(letter(index[t]) for t in beaten))
            row.append(cell)
        missing = [q for q, lacking in table.dropped_topics.items() if run.tag in lacking]
        row.append(Cell(" ".join(run.missing_topics or missing) or "none"))
        rows.append(row)
    notes = table.notes() + (comparisons.notes if comparisons is not None else [])
    result = Table(
        ["", "Run", *table.columns, "Missing topics"],
        rows,
        caption=(
            f"Effectiveness of the {len(tags)} runs of {table.campaign} against the "
            f"{table.qrels} qrels (relevant: grade >= {table.relevance_level}). "
            "The best value per measure is in bold. " + " ".join(notes)
        ).strip(),
        label=f"tab:{table.campaign}-runs",
    )
    measure_columns = range(2, 2 + len(table.columns))
    if comparisons is not None:
        result.caption += " " + significance_note(comparisons)
        tested = set(table.measures)  # summary-only measures are not tested: no marks
        columns = zip(measure_columns, table.columns, strict=True)
        result.marked = {c for c, m in columns if m in tested}
    for column in measure_columns:
        bold_best(result, column)
    return result


def comparisons_table(comparisons: Comparisons, digits: int = 4) -> Table:
    """Every tested pair: mean difference, statistic, p, corrected p, effect size, CI, W/T/L
    (the tests' notes are the section's, `reports.sections.pairwise`)."""
    rows = []
    for p in comparisons.pairs:
        low, high = p.ci if p.ci is not None else (None, None)
        row = cells(
            p.measure,
            p.first,
            p.second,
            p.n_topics,
            p.mean_difference,
            p.statistic,
            p.p_value,
            p.p_adjusted,
            p.effect_size,
            low,
            high,
            f"{p.wins}/{p.ties}/{p.losses}",
            "yes" if p.significant else "no",
        )
        rows.append(row)
    return Table(
        [
            "Measure",
            "Run A",
            "Run B",
            "Topics",
            "Mean A-B",
            "Statistic",
            "p",
            f"p ({comparisons.correction})",
            "Effect size",
            "CI low",
            "CI high",
            "W/T/L",
            "Significant",
        ],
        rows,
        caption=(
            f"Pairwise comparisons: {comparisons.test}, p-values corrected with "
            f"{comparisons.correction} over all pairs of runs per measure; significant at "
            f"alpha = {comparisons.alpha:g}. W/T/L: topics where A is better/tied/worse."
            + _p_values(comparisons)
        ),
        label="tab:comparisons",
        digits=digits,
    )


def tukey_table(result: TukeyResult, measure: str) -> Table:
    rows = [
        cells(p.name_i, p.name_j, p.mean_difference, p.statistic, p.p_value, p.effect_size)
        for p in result.pairs
    ]
    caption = f"{result.test} on {measure} (systems x topics)"
    if result.anova is not None:
        caption += (
            f"; two-way ANOVA: F = {result.anova.f_a:.3f}, p = {result.anova.p_a:.4f}, "
            f"V_E = {result.anova.v_e:.4f}"
        )
    return Table(
        ["Run A", "Run B", "Mean A-B", "q", "p", "Effect size"],
        rows,
        caption=caption + ".",
        label="tab:tukey",
    )


def per_topic_table(table: EvaluationTable, measure: str) -> Table:
    """Topics x runs for one measure; the best run per topic in bold."""
    tags = [r.tag for r in table.runs]
    rows = [
        [Cell(qid), *(Cell(table.run(t).per_topic.get(qid, {}).get(measure)) for t in tags)]
        for qid in table.topics()
    ]
    result = Table(["Topic", *tags], rows, caption=f"{measure} per topic ({table.qrels} qrels).")
    for row in result.rows:
        values = [c.value for c in row[1:] if c.value is not None]
        if len(set(values)) > 1:
            for c in row[1:]:
                c.bold = c.value == max(values)
    return result


def stability_table(stability: RankingStability) -> Table:
    """Per alternative qrels: Kendall tau, tau_AP against the reference ranking, runs moved."""
    rows = []
    for c in stability.comparisons:
        moved = ", ".join(f"{ch.run} {ch.reference_rank}->{ch.other_rank}" for ch in c.changes)
        rows.append(cells(c.qrels, c.kendall_tau, c.tau_ap, len(c.changes), moved or "none"))
    return Table(
        ["Qrels", "Kendall tau", "tau_AP", "Runs moved", "Rank changes"],
        rows,
        caption=(
            f"Ranking of the runs by {stability.measure} under each assessor's qrels against "
            f"the ranking under the {stability.reference} qrels "
            f"({' > '.join(stability.reference_order)}); tau_AP takes the {stability.reference} "
            "ranking as ground truth."
        ),
        label="tab:ranking-stability",
        digits=3,
    )


def reusability_table(reusability: Reusability) -> Table:
    """Leave-one-run/group-out: unique documents, score change and rank change per run."""
    unit = "run" if reusability.by == "run" else "group"
    by_group = unit == "group"
    rows = [
        cells(
            r.tag,
            *([r.unit] if by_group else []),
            r.unique_documents,
            r.unique_relevant,
            r.score,
            r.score_left_out,
            r.delta,
            r.percent_delta,
            r.rank,
            r.rank_left_out,
            reusability.judged.get(r.tag),
        )
        for r in reusability.rows
    ]
    return Table(
        [
            "Run",
            *(["Group"] if by_group else []),
            "Unique docs",
            "Unique relevant",
            reusability.measure,
            f"{reusability.measure} left out",
            "Delta",
            "Delta %",
            "Rank",
            "Rank left out",
            reusability.judged_measure,
        ],
        rows,
        caption=(
            f"Leave-one-{unit}-out on {reusability.pool} with the {reusability.qrels} qrels: "
            f"each contributing run re-scored without the pooled documents only its {unit} "
            f"contributed (the other runs keep the full qrels). Kendall tau between the "
            f"rankings {reusability.kendall_tau:.3f}, tau_AP {reusability.tau_ap:.3f}."
        ),
        label=f"tab:leave-one-{unit}-out",
    )
