"""Tables of the evaluation report's further sections (services.extended_evaluation)."""

from __future__ import annotations

from workbench.reports.tables import Table, bold_best, cells
from workbench.services.extended_evaluation import CollectionScale

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
