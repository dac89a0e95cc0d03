"""Tables of the evaluation report's further sections (services.extended_evaluation)."""

from __future__ import annotations

from workbench.reports.tables import Table, bold_best, cells
from workbench.services.extended_evaluation import CollectionScale, PowerAnalysis

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
    """Per pair: mean and sd of the differences, effect size, achieved power, detectable
    difference at the requested power."""
    rows = [
        cells(
            p.first,
            p.second,
            p.mean_difference,
            p.sd_difference,
            p.effect_size,
            p.power,
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
            "Power",
            f"Detectable at {100 * analysis.power:g} %",
            "Power of",
        ],
        rows,
        caption=(
            f"Achieved (post-hoc) power of the {analysis.test} test on {analysis.measure} "
            f"({analysis.qrels} qrels, {analysis.n_topics} topics, alpha = {analysis.alpha:g}) "
            f"and the smallest difference these topics detect at {100 * analysis.power:g} % "
            "power given each pair's variability."
        ),
        label="tab:power",
        digits=3,
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
