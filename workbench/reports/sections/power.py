"""Power and topic-set size: the achieved power of the paired test on each pair of runs, and
Sakai's topic-set size design from the residual variance of the two-way ANOVA."""

from __future__ import annotations

from workbench.reports.document import Section, needs_only
from workbench.reports.extended import power_table, topic_set_size_table
from workbench.services.evaluation_report import ReportOption
from workbench.services.extended_evaluation import PowerAnalysis, power_analysis
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> PowerAnalysis:
    return power_analysis(
        context.table,
        context.table.measure(),
        test=context.request.test,
        alpha=context.request.alpha,
        min_difference=context.option("delta"),
    )


def tables(analysis: PowerAnalysis) -> list[Table]:
    return [topic_set_size_table(analysis), power_table(analysis)]


SECTION = Section(
    "power",
    "Power and topic-set size",
    "Achieved power per pair of runs and the topics needed for a difference delta.",
    build,
    tables,
    needs=("table", "per-topic measure", "two runs"),
    notes=lambda analysis: [analysis.sentence],
    apart=needs_only,
    options=(
        ReportOption("delta", "float", "The minimum difference to design the topic set for.",
                     minimum=0, open_bounds=True),
    ),
)  # fmt: skip
