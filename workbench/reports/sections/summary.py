"""The summary: runs x measures, every measure asked for (summary-only ones such as gm_map
too), the best in bold and the significance marks of the pairwise tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.reports.document import Section
from workbench.reports.evaluation import runs_table
from workbench.services.evaluation import Comparisons, EvaluationTable
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


@dataclass(frozen=True)
class Summary:
    table: EvaluationTable
    comparisons: Comparisons


def build(context: ReportContext) -> Summary:
    return Summary(context.table, context.comparisons)


def tables(summary: Summary) -> list[Table]:
    return [runs_table(summary.table, summary.comparisons)]


def to_dict(summary: Summary) -> dict[str, Any]:
    return summary.table.to_dict()


SECTION = Section(
    "summary",
    "Runs x measures",
    "Every run's score on every measure, the best in bold, significance marks.",
    build,
    tables,
    needs=("table",),
    to_dict=to_dict,
)
