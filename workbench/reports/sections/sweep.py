"""Parameter sweep and cross-validation: the runs whose tags match a pattern as one system's
parameter grid, the measure per setting and K-fold cross-validation over topics."""

from __future__ import annotations

from workbench.reports.document import Plot, Section, Unavailable
from workbench.reports.extended import cross_validation_table, sweep_plot, sweep_table
from workbench.services.evaluation_report import ReportOption
from workbench.services.extended_evaluation import parameter_sweep
from workbench.services.report_context import ReportContext
from workbench.sweeps import SweepResult
from workbench.tabular import Table

FOLDS = 5


def build(context: ReportContext) -> SweepResult:
    pattern = context.option("sweep")
    if not pattern:
        raise Unavailable("Give a run-tag pattern such as bm25_k1={k1}_b={b} (option sweep).")
    table = context.table
    return parameter_sweep(
        table,
        pattern=pattern,
        measure=table.measure(),
        folds=min(FOLDS, len(table.topics())),  # K is named in the report
    )


def tables(result: SweepResult) -> list[Table]:
    return [sweep_table(result), cross_validation_table(result)]


def grid_plot(result: SweepResult) -> list[Plot]:
    return [Plot("grid", f"{result.measure} over the parameter grid", sweep_plot(result))]


SECTION = Section(
    "sweep",
    "Parameter sweep and cross-validation",
    "Runs named by a tag pattern as a parameter grid, with K-fold cross-validation.",
    build,
    tables,
    needs=("table", "per-topic measure"),
    plots=grid_plot,
    options=(
        ReportOption("sweep", "text", "The runs' tag pattern of a parameter grid, e.g. "
                     "bm25_k1={k1}_b={b}."),
    ),
)  # fmt: skip
