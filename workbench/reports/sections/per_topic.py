"""Per topic: topics x runs for each measure with a per-topic value, and a figure of the
first one (bars, or a heat map above `plots.PER_TOPIC_BARS_AT_MOST` bars)."""

from __future__ import annotations

from typing import Any

from workbench.reports import plots
from workbench.reports.document import Plot, Section, needs_only
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
    name, title, svg = plots.per_topic_figure(
        {r.tag: {q: v[measure] for q, v in r.per_topic.items()} for r in table.runs},
        table.topics(),
        measure=measure,
    )
    return [Plot(name, title, svg)]


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
    "Topics x runs for each measure with a per-topic value; a figure of the first.",
    build,
    tables,
    needs=("table", "per-topic measure"),
    plots=bars,
    notes=lambda table: table.summary_only_note(),
    to_dict=to_dict,
    apart=needs_only,
)
