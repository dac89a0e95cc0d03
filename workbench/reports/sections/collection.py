"""Set measures at collection scale: accuracy, error and fallout need the collection size N
(the course notes' example of why accuracy is not used)."""

from __future__ import annotations

from workbench.reports.document import Section
from workbench.reports.extended import collection_scale_table
from workbench.services.evaluation_report import ReportOption
from workbench.services.extended_evaluation import (
    CollectionScale,
    collection_scale,
    document_count,
)
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> CollectionScale:
    return collection_scale(
        context.table,
        context.qrels,
        context.runs,
        num_docs=context.option("num_docs"),
        documents=document_count(context.session, context.campaign),
    )


def tables(scale: CollectionScale) -> list[Table]:
    return [collection_scale_table(scale)]


SECTION = Section(
    "collection-measures",
    "Set measures at collection scale",
    "Accuracy, error, fallout, P, R, (P+R)/2 and F1 of each run's retrieved set.",
    build,
    tables,
    needs=("table",),
    options=(
        ReportOption("num_docs", "int", "The collection size N (default: the campaign's "
                     "documents).", minimum=1),
    ),
)  # fmt: skip
