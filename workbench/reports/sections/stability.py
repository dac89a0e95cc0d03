"""Ranking stability: the runs ranked under each assessor's qrels against the final ranking
(Kendall's tau, tau_AP, the runs that move)."""

from __future__ import annotations

from workbench.reports.document import Section
from workbench.reports.evaluation import stability_table
from workbench.services.evaluation_stability import RankingStability, ranking_stability
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> RankingStability:
    final = context.qrels if context.table.qrels == "final" else None
    return ranking_stability(
        context.session, context.campaign, context.table, context.scope, context.assessors, final
    )


def tables(stability: RankingStability) -> list[Table]:
    return [stability_table(stability)]


SECTION = Section(
    "ranking-stability",
    "Ranking stability",
    "The runs ranked under each assessor's qrels against the final ranking.",
    build,
    tables,
    needs=("table", "per-topic measure", "final labels", "assessors"),
    notes=lambda stability: stability.notes,
    to_dict=lambda stability: stability.to_dict(),
)
