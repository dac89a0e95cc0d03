"""Reusability: each contributing run (or group) left out of the pools in scope, re-scored
without the documents only it contributed (leave-one-run-out, leave-one-group-out)."""

from __future__ import annotations

from collections.abc import Callable

from workbench.reports.document import Section
from workbench.reports.evaluation import reusability_table
from workbench.reports.tables import Table
from workbench.services.evaluation_stability import Reusability, leave_out
from workbench.services.report_context import ReportContext


def builder(by: str) -> Callable[[ReportContext], Reusability]:
    def build(context: ReportContext) -> Reusability:
        return leave_out(
            context.session, context.campaign, context.table, context.qrels, context.scope, by=by
        )

    return build


def tables(reusability: Reusability) -> list[Table]:
    return [reusability_table(reusability)]


BY_RUN = Section(
    "reusability-run",
    "Reusability: leave one run out",
    "Each contributing run re-scored without the pooled documents only it contributed.",
    builder("run"),
    tables,
    needs=("table", "per-topic measure", "pools"),
    to_dict=lambda reusability: reusability.to_dict(),
)
BY_GROUP = Section(
    "reusability-group",
    "Reusability: leave one group out",
    "Each contributing run re-scored without the pooled documents only its group contributed.",
    builder("group"),
    tables,
    needs=("table", "per-topic measure", "pools"),
    to_dict=lambda reusability: reusability.to_dict(),
)
