"""Per topic: topics x runs for each measure with a per-topic value, and a bar chart of the
first one."""

from __future__ import annotations

from typing import Any

from workbench.reports import plots
from workbench.reports.document import Plot, Section
from workbench.reports.evaluation import per_topic_table
from workbench.services.evaluation import EvaluationTable
from workbench.services.report_context import ReportContext
from workbench.tabular import Table


def build(context: ReportContext) -> EvaluationTable:
    return context.table


def tables(table: EvaluationTable) -> list[Table]:
    return [per_topic_table(table, measure) for measure in table.measures]


def bars(table: EvaluationTable) -> list[Plot]:
    measure = table.measure()
    svg = plots.per_topic_bars(
        {r.tag: {q: v[measure] for q, v in r.per_topic.items()} for r in table.runs},
        table.topics(),
        measure=measure,
    )
    return [Plot("bars", f"{measure} per topic", svg)]


def to_dict(table: EvaluationTable) -> dict[str, Any]:
    return {
        "measures": table.measures,
        "topics": table.topics(),
        "scores": {
            m: {r.tag: {q: v[m] for q, v in r.per_topic.items()} for r in table.runs}
            for m in table.measures
        },
    }


SECTION = Section(
    "per-topic",
    "Per topic",
    "Topics x runs for each measure with a per-topic value; bars of the first.",
    build,
    tables,
    needs=("table", "per-topic measure"),
    plots=bars,
    notes=lambda table: table.summary_only_note(),
    to_dict=to_dict,
)
