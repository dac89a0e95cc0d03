"""Clicks against the assessors, where the campaign has a query log: the share of click
preferences the qrels agree with, and the runs ranked on clicks beside the qrels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.reports.document import Section
from workbench.reports.querylogs import agreement_table, click_evaluation_table
from workbench.services.evaluation_report import ReportOption
from workbench.services.querylogs import (
    ClickAgreement,
    ClickComparison,
    ClickEvaluation,
    click_agreement,
    click_evaluation,
)
from workbench.services.report_context import ReportContext
from workbench.tabular import Table

RESAMPLES = 1000


@dataclass(frozen=True)
class Clicks:
    agreement: ClickAgreement
    evaluation: ClickEvaluation


def build(context: ReportContext) -> Clicks:
    from workbench.services.querylogs import list_query_logs

    name = context.option("querylog") or list_query_logs(context.session, context.campaign)[-1].name
    request = context.request
    compared = ClickComparison(name, request.qrels, allow_incomplete=request.allow_incomplete)
    table = context.table
    session, campaign, files = context.session, context.campaign, request.allow_files
    return Clicks(
        click_agreement(session, campaign, compared, n_resamples=RESAMPLES, allow_files=files),
        click_evaluation(
            session, campaign, compared, measure=table.spec_of(table.measure()), allow_files=files
        ),
    )


def tables(clicks: Clicks) -> list[Table]:
    return [agreement_table(clicks.agreement), click_evaluation_table(clicks.evaluation)]


def to_dict(clicks: Clicks) -> dict[str, Any]:
    return {"agreement": clicks.agreement.to_dict(), "evaluation": clicks.evaluation.to_dict()}


SECTION = Section(
    "clicks",
    "Clicks against the assessors",
    "Click preferences of a query log against the qrels; the runs ranked on clicks.",
    build,
    tables,
    needs=("query log", "table", "per-topic measure"),
    to_dict=to_dict,
    options=(
        ReportOption("querylog", "text", "The query log of the clicks section (default: the "
                     "last by name)."),
    ),
)  # fmt: skip
