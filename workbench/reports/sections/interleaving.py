"""Online testing: every pair of runs interleaved (team-draft or balanced) with clicks
simulated from the qrels, and how often the interleaving preference agrees with the offline
one."""

from __future__ import annotations

from workbench import interleaving
from workbench.interleaving import InterleavingStudy
from workbench.reports.document import Section
from workbench.reports.extended import interleaving_table
from workbench.services.evaluation_report import ReportOption
from workbench.services.extended_evaluation import interleaving_study
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> InterleavingStudy:
    method = context.option("interleaving") or "team-draft"
    return interleaving_study(
        context.table,
        context.runs,
        context.qrels,
        measure=context.table.measure(),
        setup=interleaving.Setup(method),
    )


def tables(study: InterleavingStudy) -> list[Table]:
    return [interleaving_table(study)]


SECTION = Section(
    "interleaving",
    "Online testing: interleaving (simulated clicks)",
    "Every pair of runs interleaved with simulated clicks, against the offline preference.",
    build,
    tables,
    needs=("table", "per-topic measure", "two runs"),
    options=(
        ReportOption("interleaving", "choice", "The interleaving method.",
                     default="team-draft", choices=tuple(interleaving.METHODS)),
    ),
)  # fmt: skip
