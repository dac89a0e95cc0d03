"""Reusability: each contributing run (or group) left out of the pools in scope, re-scored
without the documents only it contributed (leave-one-run-out, leave-one-group-out)."""

from __future__ import annotations

from workbench.reports.document import Section
from workbench.reports.evaluation import reusability_table
from workbench.services.evaluation_stability import Reusability, leave_out
from workbench.services.report_context import ReportContext


def section(by: str) -> Section[Reusability]:
    """The section leaving out one run (`by` "run") or one group ("group") at a time."""

    def build(context: ReportContext) -> Reusability:
        return leave_out(
            context.session,
            context.campaign,
            context.table,
            context.qrels,
            context.scope,
            by=by,
            inputs=context.leave_out_inputs,
        )

    return Section(
        f"reusability-{by}",
        f"Reusability: leave one {by} out",
        f"Each contributing run re-scored without the pooled documents only its {by} contributed.",
        build,
        lambda reusability: [reusability_table(reusability)],
        needs=("table", "per-topic measure", "pools"),
        to_dict=lambda reusability: reusability.to_dict(),
        apart=lambda context: context.leave_out_inputs,  # the pools' entries, read here
    )


BY_RUN = section("run")
BY_GROUP = section("group")
