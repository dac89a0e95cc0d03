"""Tables and plots of the course notes' sections of the report (services.extended_evaluation),
shown by their sections (`reports.sections`) and the course notes' own commands."""

from __future__ import annotations

from workbench.interleaving import InterleavingStudy
from workbench.reports import plots
from workbench.services.extended_evaluation import (
    CollectionScale,
    EfficiencyReport,
    PowerAnalysis,
)
from workbench.sweeps import SweepResult
from workbench.tabular import Cell, Table, bold_best, cells

_COLLECTION_COLUMNS = {
    "accuracy": "Accuracy",
    "error": "Error",
    "fallout": "Fallout",
    "precision": "Precision",
    "recall": "Recall",
    "arithmetic_mean": "(P+R)/2",
    "f1": "F1",
}


def collection_scale_table(scale: CollectionScale) -> Table:
    """Per run, the mean over topics of the collection-scale set measures."""
    rows = [cells(r.tag, r.topics, *(r.values[m] for m in scale.measures)) for r in scale.rows]
    table = Table(
        ["Run", "Topics", *(_COLLECTION_COLUMNS[m] for m in scale.measures)],
        rows,
        caption=(
            f"Set measures of each run's retrieved set at collection scale, N = "
            f"{scale.num_docs:,} documents ({scale.source}), {scale.qrels} qrels (relevant: "
            f"grade >= {scale.relevance_level}); mean over topics."
        ),
        label="tab:collection-scale",
        digits=6,
        notes=[scale.note],
    )
    for column, measure in enumerate(scale.measures, start=2):
        bold_best(table, column, lower_is_better=measure in ("error", "fallout"))
    return table


def power_table(analysis: PowerAnalysis) -> Table:
    """Per pair: mean and sd of the differences, effect size, detectable difference at the
    requested power (no post-hoc power: see `power.PairPower`)."""
    rows = [
        cells(
            p.first,
            p.second,
            p.mean_difference,
            p.sd_difference,
            p.effect_size,
            p.detectable_difference,
            p.method,
        )
        for p in analysis.pairs
    ]
    return Table(
        [
            "Run A",
            "Run B",
            "Mean A-B",
            "SD A-B",
            "Effect size",
            f"Detectable at {100 * analysis.power:g} %",
            "Computed by",
        ],
        rows,
        caption=(
            f"The smallest difference in {analysis.measure} that the {analysis.test} test "
            f"detects at {100 * analysis.power:g} % power with these {analysis.n_topics} "
            f"topics ({analysis.qrels} qrels, alpha = {analysis.alpha:g}), given each pair's "
            "variability."
        ),
        label="tab:power",
        digits=3,
        notes=[
            "No achieved (post-hoc) power at the observed effect is shown: it is a function "
            "of the p-value and adds nothing to it (Hoenig & Heisey 2001)."
        ],
    )


def topic_set_size_table(analysis: PowerAnalysis) -> Table:
    """Sakai's topic-set size design from the residual variance of the two-way ANOVA."""
    d = analysis.design
    rows = [
        cells("Within-system variance V_E (two-way ANOVA)", d.variance),
        cells(
            f"Detectable difference, paired t-test, {d.n_topics} topics", d.detectable_difference
        ),
        cells(
            f"Detectable range, one-way ANOVA over {d.systems} runs, {d.n_topics} topics",
            d.detectable_range,
        ),
    ]
    if d.min_difference is not None:
        rows += [
            cells(f"Topics to detect {d.min_difference:g}, paired t-test", d.topics_t_test),
            cells(
                f"Topics to detect a range {d.min_difference:g}, one-way ANOVA over "
                f"{d.systems} runs",
                d.topics_anova,
            ),
        ]
    return Table(
        ["Topic-set size design", analysis.measure],
        rows,
        caption=(
            f"{analysis.sentence} Topic-set size design after Sakai (Information Retrieval "
            f"Journal 2016): alpha = {d.alpha:g}, power = {100 * d.power:g} %, variance of a "
            "difference 2 V_E."
        ),
        label="tab:topic-set-size",
        digits=4,
    )


def sweep_table(result: SweepResult) -> Table:
    """One row per setting: its parameters, mean, and how many folds chose it."""
    chosen = result.cv.chosen
    names = result.grid.parameters
    rows = [
        [
            Cell(tag),
            *(Cell(setting[p]) for p in names),
            Cell(result.means[tag]),
            Cell(chosen.get(tag, 0)),
        ]
        for tag, setting in sorted(
            result.grid.settings.items(), key=lambda item: -result.means[item[0]]
        )
    ]
    notes = []
    if result.grid.excluded:
        notes.append(f"Runs not in the grid: {', '.join(result.grid.excluded)}.")
    if result.dropped_topics:
        notes.append(
            f"{len(result.dropped_topics)} topics left out because some setting has no score "
            f"on them: {', '.join(result.dropped_topics)}."
        )
    table = Table(
        ["Run", *names, result.measure, "Folds choosing it"],
        rows,
        caption=(
            f"{result.measure} over the parameter grid ({len(rows)} settings, "
            f"{len(result.topics)} topics), best first."
        ),
        label="tab:sweep",
        notes=notes,
    )
    bold_best(table, len(names) + 1)
    return table


def cross_validation_table(result: SweepResult) -> Table:
    """Per fold: held-out topics, the setting chosen on the others, training and test scores;
    the caption gives the cross-validated score, the best in hindsight and the gap."""
    cv = result.cv
    rows = [
        cells(
            f.index, len(f.test_topics), f.chosen, f.training_score, f.test_score, f.best_test_score
        )
        for f in cv.folds
    ]
    return Table(
        ["Fold", "Test topics", "Chosen on training", "Training", "Test", "Best on test"],
        rows,
        caption=(
            f"{cv.k}-fold cross-validation over topics (seed {cv.seed}) of {result.measure}: "
            f"cross-validated {cv.cv_score:.4f}; best in hindsight {cv.best_tag} "
            f"{cv.best_score:.4f}; overfitting gap {cv.overfitting_gap:.4f}."
        ),
        label="tab:cross-validation",
    )


def sweep_plot(result: SweepResult) -> str:
    """The heat map of a two-parameter grid (best in hindsight outlined), or a curve."""
    names = result.grid.parameters
    if len(names) >= 2:
        xs, ys, rows = result.heat()
        best = result.grid.settings[result.cv.best_tag]
        return plots.parameter_heatmap(
            xs,
            ys,
            rows,
            x_name=names[0],
            y_name=names[1],
            measure=result.measure,
            best=(best[names[0]], best[names[1]]),
        )
    xs = result.grid.values(names[0])
    by_value = {s[names[0]]: t for t, s in result.grid.settings.items()}
    return plots.parameter_curve(
        xs, [result.means[by_value[x]] for x in xs], x_name=names[0], measure=result.measure
    )


def interleaving_table(result: InterleavingStudy) -> Table:
    """Per pair: query wins/ties/losses, sign-test p, the interleaving preference and the
    offline one; the caption gives the agreement rate."""
    rows = []
    for outcome in result.pairs:
        c = outcome.comparison
        online = {1: c.first, -1: c.second}.get(c.preference, "none")
        offline = {1: c.first, -1: c.second}.get(
            int((outcome.offline_difference > 0) - (outcome.offline_difference < 0)), "none"
        )
        rows.append(
            cells(
                c.first,
                c.second,
                f"{c.wins}/{c.ties}/{c.losses}",
                c.p_value,
                online,
                outcome.offline_difference,
                offline,
                "-" if "none" in (online, offline) else "yes" if online == offline else "no",
            )
        )
    a = result.agreement
    m = result.model
    notes = []
    skipped = sorted({q for o in result.pairs for q in o.comparison.skipped})
    if skipped:
        notes.append(
            f"Topics without qrels or without both rankings, not interleaved: {', '.join(skipped)}."
        )
    return Table(
        [
            "Run A",
            "Run B",
            "Queries W/T/L",
            "Sign test p",
            "Interleaving prefers",
            f"Offline {result.measure} A-B",
            "Offline prefers",
            "Agree",
        ],
        rows,
        caption=(
            f"{result.method} interleaving, {result.impressions} simulated impressions per "
            f"query (seed {result.seed}); clicks from a position-based model (examination "
            f"1/rank^{m.decay:g}, click {m.p_relevant:g} on the top grade, "
            f"{m.p_nonrelevant:g} below grade {m.relevance_level}). Interleaving agrees with "
            f"the offline {result.measure} on {a.agree} of {a.agree + a.disagree} pairs both "
            f"decide ({_percent(a.rate)}); {a.undecided} undecided."
        ),
        label="tab:interleaving",
        digits=4,
        notes=notes,
    )


def _percent(rate: float) -> str:
    return "-" if rate != rate else f"{100 * rate:.0f} %"


COSTS = {"mean_latency_ms": "mean latency (ms)", "cost_per_1000_queries": "cost per 1,000 queries"}


def efficiency_table(report: EfficiencyReport) -> Table:
    """Each run's effectiveness beside its efficiency figures; Pareto marks."""
    rows = []
    for row in report.rows:
        f = row.figures
        marks = [
            name
            for name, frontier in (("latency", report.latency_frontier),
                                   ("cost", report.cost_frontier))
            if row.tag in frontier
        ]  # fmt: skip
        rows.append(
            cells(
                row.tag,
                row.effectiveness,
                *(
                    (f.mean_latency_ms, f.p95_latency_ms, f.throughput_qps, f.index_size_bytes,
                     f.cost_per_1000_queries, f.hardware or None)
                    if f is not None
                    else (None,) * 6
                ),
                ", ".join(marks) or ("no figures" if f is None else "-"),
            )
        )  # fmt: skip
    notes = []
    if report.missing:
        notes.append(
            f"Runs without efficiency figures (left out of the frontiers): "
            f"{', '.join(report.missing)}."
        )
    table = Table(
        ["Run", report.measure, "Mean latency (ms)", "p95 latency (ms)", "Throughput (q/s)",
         "Index size (bytes)", "Cost / 1,000 queries", "Hardware", "Pareto frontier"],
        rows,
        caption=(
            f"Efficiency beside effectiveness ({report.measure}, {report.qrels} qrels). A run is "
            "on the Pareto frontier when no other run is both at least as fast (or cheap) and "
            "at least as effective, and better in one."
        ),
        label="tab:efficiency",
        digits=4,
        notes=notes,
    )  # fmt: skip
    bold_best(table, 1)
    return table


def efficiency_plot(report: EfficiencyReport, cost: str = "mean_latency_ms") -> str | None:
    """Effectiveness against ``cost`` with the Pareto frontier; None when no run gives it."""
    points = report.points(cost)
    if not points:
        return None
    frontier = report.latency_frontier if cost == "mean_latency_ms" else report.cost_frontier
    return plots.pareto_plot(points, frontier, cost=COSTS[cost], measure=report.measure)
