"""Precision-recall: each run's 11-point interpolated precision, mean over the topics."""

from __future__ import annotations

from workbench.reports import plots
from workbench.reports.document import Plot, Section, needs_only
from workbench.services.evaluation import precision_recall
from workbench.services.report_context import ReportContext
from workbench.tabular import Cell, Table, bold_best

Curves = dict[str, list[float]]


def build(context: ReportContext) -> Curves:
    return precision_recall(context.runs, context.qrels, context.table)


def tables(curves: Curves) -> list[Table]:
    levels = [f"{r / 10:.1f}" for r in range(11)]
    table = Table(
        ["Run", *levels],
        [[Cell(tag), *(Cell(v) for v in values)] for tag, values in curves.items()],
        caption="Interpolated precision at recall 0.0, 0.1, ..., 1.0 (mean over the topics; "
        "a topic a run lacks scores 0 at every recall, as trec_eval -c).",
        label="tab:precision-recall",
    )
    for column in range(1, 12):
        bold_best(table, column)
    return [table]


def curve_plot(curves: Curves) -> list[Plot]:
    svg = plots.precision_recall_curves(curves)
    return [Plot("curves", "11-point interpolated precision-recall curves", svg)]


SECTION = Section(
    "precision-recall",
    "Precision-recall",
    "Each run's 11-point interpolated precision-recall curve.",
    build,
    tables,
    needs=("table",),
    plots=curve_plot,
    apart=needs_only,
)
