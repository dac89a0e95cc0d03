"""The evaluation report's further sections from the course notes: set measures at collection
scale, power and topic-set size, parameter sweeps with cross-validation, interleaving with
simulated clicks, and efficiency beside effectiveness (each a section of
`workbench.reports.sections`).

Scores come from `services.evaluation` (hence the shared metric module); the formulas live in
the pure modules `metrics.collection`, `power`, `sweeps`, `interleaving` and `efficiency`.
Every analysis returns a frozen dataclass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import efficiency, interleaving, stats, sweeps
from workbench import power as power_design
from workbench.metrics.collection import IMBALANCE_NOTE, MEASURES, collection_set_measures
from workbench.services.efficiency import run_efficiency
from workbench.services.errors import ServiceError
from workbench.services.evaluation import EvaluationTable, score_matrix
from workbench.services.evaluation_inputs import LoadedRun, NamedQrels
from workbench.store.models import Campaign, Document

# ------------------------------------------------------------------ collection-scale measures


@dataclass(frozen=True)
class CollectionScaleRow:
    tag: str
    topics: int
    values: dict[str, float]  # mean over topics of each of metrics.collection.MEASURES


@dataclass(frozen=True)
class CollectionScale:
    qrels: str
    relevance_level: int
    num_docs: int
    source: str  # where N came from
    rows: tuple[CollectionScaleRow, ...]
    note: str = IMBALANCE_NOTE
    measures: tuple[str, ...] = MEASURES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def document_count(session: Session, campaign: Campaign) -> int:
    """The number of documents stored for the campaign."""
    query = select(func.count(Document.id)).where(Document.campaign_id == campaign.id)
    return int(session.scalar(query) or 0)


def collection_scale(
    table: EvaluationTable,
    qrels: NamedQrels,
    runs: Sequence[LoadedRun],
    *,
    num_docs: int | None,
    documents: int,
) -> CollectionScale:
    """Accuracy, error, fallout, P, R, (P+R)/2 and F1 of every run's retrieved set, mean over
    the table's topics; N = ``num_docs`` or else the campaign's ``documents``."""
    if num_docs is None:
        num_docs, source = documents, "the campaign's documents"
        if num_docs == 0:
            raise ServiceError(
                f"campaign {table.campaign!r} has no documents: give the collection size N"
            )
    else:
        source = "given"
    scoped = qrels.of_topics(table.topics_evaluated)
    rows = []
    for run in runs:
        try:  # the run's topics outside `scoped` are not evaluated (trec_eval's topics)
            result = collection_set_measures(
                scoped, run.trec_run, num_docs, relevance_level=table.relevance_level
            )
        except ValueError as error:
            raise ServiceError(f"run {run.tag}: {error}") from None
        rows.append(CollectionScaleRow(run.tag, len(result.per_topic), result.mean))
    return CollectionScale(qrels.label, table.relevance_level, num_docs, source, tuple(rows))


# ------------------------------------------------------------------ power and topic-set size


@dataclass(frozen=True)
class PowerAnalysis:
    """Per pair of runs the detectable difference (no post-hoc power); the topic-set design."""

    measure: str
    qrels: str
    test: str
    alpha: float
    power: float
    n_topics: int  # the common topics (the paired design)
    pairs: tuple[power_design.PairPower, ...]
    design: power_design.TopicSetSize
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def power_analysis(
    table: EvaluationTable,
    measure: str | None = None,
    *,
    test: str = "t",
    alpha: float = 0.05,
    power: float = 0.8,
    min_difference: float | None = None,
) -> PowerAnalysis:
    """Power of ``test`` on every pair of runs over the common topics, and Sakai's topic-set
    size design from the residual variance V_E of the two-way ANOVA (runs x topics)."""
    if test not in stats.PAIRED_TESTS:
        raise ServiceError(
            f"unknown test {test!r}; expected one of {', '.join(stats.PAIRED_TESTS)}"
        )
    measure = measure or table.measure()
    if measure not in table.measures:
        raise ServiceError(f"measure {measure!r} is not in the evaluation ({table.measures})")
    topics, matrix = score_matrix(table, measure)
    if len(table.runs) < 2 or len(topics) < 2:
        raise ServiceError("power analysis needs at least two runs sharing two topics")
    anova = stats.two_way_anova(matrix)
    if anova.v_e <= 0:
        raise ServiceError(f"the residual variance of {measure} is 0: nothing to design from")
    try:
        pairs = tuple(
            power_design.pair_power(
                table.runs[i].tag,
                table.runs[j].tag,
                matrix[i] - matrix[j],
                test=test,
                alpha=alpha,
                power=power,
            )
            for i in range(len(table.runs))
            for j in range(i + 1, len(table.runs))
        )
        design = power_design.topic_set_size(
            anova.v_e,
            n_topics=len(topics),
            systems=len(table.runs),
            alpha=alpha,
            power=power,
            min_difference=min_difference,
        )
    except ValueError as error:
        raise ServiceError(str(error)) from None
    return PowerAnalysis(
        measure,
        table.qrels,
        test,
        alpha,
        power,
        len(topics),
        pairs,
        design,
        design.sentence(measure),
    )


# ------------------------------------------------------------------ parameter sweeps


def parameter_sweep(
    table: EvaluationTable,
    *,
    pattern: str | None = None,
    mapping: str | None = None,
    mapping_name: str = "mapping",
    measure: str | None = None,
    folds: int = 5,
    seed: int = 0,
) -> sweeps.SweepResult:
    """The runs named by a tag ``pattern`` (or a ``mapping`` file's text) as one system's
    parameter grid: mean ``measure`` per setting and K-fold cross-validation over topics."""
    measure = measure or table.measure()
    if measure not in table.measures:
        raise ServiceError(f"measure {measure!r} is not in the evaluation ({table.measures})")
    tags = [r.tag for r in table.runs]
    try:
        if (pattern is None) == (mapping is None):
            raise sweeps.SweepError("give either a tag pattern or a mapping file")
        grid = (
            sweeps.grid_from_tags(tags, pattern)
            if pattern is not None
            else sweeps.grid_from_mapping(mapping or "", tags, name=mapping_name)
        )
        scores = {  # an undefined (NaN) score leaves the topic out, and the report says so
            tag: {
                q: float(v[measure])
                for q, v in table.run(tag).per_topic.items()
                if not math.isnan(float(v[measure]))
            }
            for tag in grid.settings
        }
        return sweeps.sweep(grid, scores, measure=measure, k=folds, seed=seed)
    except sweeps.SweepError as error:
        raise ServiceError(str(error)) from None


# ------------------------------------------------------------------ interleaving


MAX_INTERLEAVINGS = 50_000  # pairs x topics x impressions computed inside a report request


def interleaving_study(
    table: EvaluationTable,
    runs: Sequence[LoadedRun],
    qrels: NamedQrels,
    *,
    measure: str | None = None,
    setup: interleaving.Setup = interleaving.Setup(),
    max_interleavings: int | None = MAX_INTERLEAVINGS,
) -> interleaving.InterleavingStudy:
    """Interleave every pair of the runs with clicks simulated from the ``qrels`` (those the
    ``table`` was evaluated with) and compare each preference with the offline ``measure`` of
    the table. Without a click model in `setup`, the default one with the table's relevance
    level. Refused when it would take more than ``max_interleavings`` interleavings (None:
    no bound)."""
    measure = measure or table.measure()
    if measure not in table.measures:
        raise ServiceError(f"measure {measure!r} is not in the evaluation ({table.measures})")
    if len(runs) < 2:
        raise ServiceError("interleaving needs at least two runs")
    n_pairs = len(runs) * (len(runs) - 1) // 2
    work = n_pairs * len(table.topics()) * setup.impressions
    if max_interleavings is not None and work > max_interleavings:
        raise ServiceError(
            f"{n_pairs} pairs x {len(table.topics())} topics x {setup.impressions} impressions "
            f"= {work:,} interleavings is more than a report computes ({max_interleavings:,}), "
            "so the section is left out."
        )
    scoped = {q: qrels.qrels[q] for q in table.topics_evaluated}
    ranked_lists = {r.tag: {q: list(x.docnos) for q, x in r.ranked_lists.items()} for r in runs}
    offline = {  # undefined (NaN) scores stay out of the offline mean difference
        r.tag: {q: float(v[measure]) for q, v in r.per_topic.items() if v[measure] == v[measure]}
        for r in table.runs
    }
    try:
        if setup.model is None:
            model = interleaving.ClickModel(relevance_level=table.relevance_level)
            setup = replace(setup, model=model)
        return interleaving.study(ranked_lists, scoped, offline, measure=measure, setup=setup)
    except ValueError as error:
        raise ServiceError(str(error)) from None


# ------------------------------------------------------------------ efficiency


@dataclass(frozen=True)
class EfficiencyRow:
    tag: str
    effectiveness: float
    figures: efficiency.Efficiency | None  # None: the run has no efficiency figures


@dataclass(frozen=True)
class EfficiencyReport:
    """Efficiency beside effectiveness, and the Pareto frontiers against latency and cost."""

    measure: str
    qrels: str
    rows: tuple[EfficiencyRow, ...]
    latency_frontier: tuple[str, ...]  # runs with a mean latency that no other dominates
    cost_frontier: tuple[str, ...]  # the same against the cost per 1,000 queries

    @property
    def missing(self) -> tuple[str, ...]:
        """The runs without figures (shown, but left out of the frontiers and plots)."""
        return tuple(r.tag for r in self.rows if r.figures is None)

    def points(self, cost: str) -> dict[str, tuple[float, float]]:
        """Run -> (cost, effectiveness) for the runs that give ``cost``."""
        result = {}
        for row in self.rows:
            value = getattr(row.figures, cost, None) if row.figures is not None else None
            if value is not None:
                result[row.tag] = (float(value), row.effectiveness)
        return result

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def efficiency_report(
    session: Session, campaign: Campaign, table: EvaluationTable, measure: str | None = None
) -> EfficiencyReport:
    """The stored efficiency figures of every run beside its ``measure`` (summary)."""
    measure = measure or table.measure()
    if measure not in table.measures:
        raise ServiceError(f"measure {measure!r} is not in the evaluation ({table.measures})")
    figures = run_efficiency(session, campaign)
    rows = tuple(
        EfficiencyRow(r.tag, float(r.summary[measure]), figures.get(r.tag)) for r in table.runs
    )
    report = EfficiencyReport(measure, table.qrels, rows, (), ())
    return EfficiencyReport(
        measure,
        table.qrels,
        rows,
        tuple(efficiency.pareto_frontier(report.points("mean_latency_ms"))),
        tuple(efficiency.pareto_frontier(report.points("cost_per_1000_queries"))),
    )
