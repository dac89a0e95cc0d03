"""Efficiency beside effectiveness: the runs' stored figures (latency, cost ...), the Pareto
frontiers and the plots of the measure against latency and cost."""

from __future__ import annotations

from workbench.reports.document import Plot, Section, Unavailable
from workbench.reports.extended import COSTS, efficiency_plot, efficiency_table
from workbench.services.extended_evaluation import EfficiencyReport, efficiency_report
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> EfficiencyReport:
    report = efficiency_report(
        context.session, context.campaign, context.table, context.table.measure()
    )
    if len(report.missing) == len(report.rows):
        raise Unavailable(
            "No run has efficiency figures: upload a sidecar file for the runs (JSON or CSV, on "
            "the campaign's page, or `workbench efficiency import`)."
        )
    return report


def tables(report: EfficiencyReport) -> list[Table]:
    return [efficiency_table(report)]


def figures(report: EfficiencyReport) -> list[Plot]:
    found = []
    for cost, label in COSTS.items():
        svg = efficiency_plot(report, cost)
        if svg is not None:
            found.append(Plot(cost, f"{report.measure} against {label}", svg))
    return found


SECTION = Section(
    "efficiency",
    "Efficiency beside effectiveness",
    "The runs' efficiency figures beside the measure, with the Pareto frontiers.",
    build,
    tables,
    needs=("table", "per-topic measure"),
    plots=figures,
)
