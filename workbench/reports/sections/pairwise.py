"""Pairwise tests: every pair of runs on every measure with a per-topic value, the paired
test and the correction asked for."""

from __future__ import annotations

from workbench.reports.document import Section
from workbench.reports.evaluation import comparisons_table
from workbench.services.evaluation import Comparisons
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> Comparisons:
    return context.comparisons


def tables(comparisons: Comparisons) -> list[Table]:
    return [comparisons_table(comparisons)]


SECTION = Section(
    "pairwise-tests",
    "Pairwise tests",
    "Every pair of runs on every measure: the paired test, corrected p-values, effect sizes.",
    build,
    tables,
    needs=("table", "per-topic measure", "two runs"),
    notes=lambda comparisons: comparisons.notes,
    to_dict=lambda comparisons: comparisons.to_dict(),
)
