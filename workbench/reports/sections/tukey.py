"""Tukey's HSD: every pair of runs on the first measure, as one family (two-way ANOVA of
systems x topics)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.reports.document import Section, Unavailable, needs_only
from workbench.reports.evaluation import tukey_table
from workbench.services import evaluation
from workbench.services.report_context import ReportContext
from workbench.stats import TukeyResult
from workbench.tabular import Table


@dataclass(frozen=True)
class Tukey:
    measure: str
    result: TukeyResult


def build(context: ReportContext) -> Tukey:
    measure = context.table.measure()
    result = evaluation.tukey_hsd(context.table, measure)
    if result is None:
        raise Unavailable(f"Tukey's HSD needs two runs sharing two topics with a {measure} score")
    return Tukey(measure, result)


def tables(tukey: Tukey) -> list[Table]:
    return [tukey_table(tukey.result, tukey.measure)]


SECTION = Section(
    "tukey",
    "Tukey HSD",
    "Tukey's honestly significant differences on the first measure (systems x topics).",
    build,
    tables,
    needs=("table", "per-topic measure", "two runs"),
    apart=needs_only,
)
