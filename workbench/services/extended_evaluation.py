"""The evaluation report's further sections from the course notes, assembled once for the CLI
and the web: set measures at collection scale, power and topic-set size, parameter sweeps
with cross-validation, interleaving with simulated clicks, and efficiency beside effectiveness.

Scores come from `services.evaluation` (hence the shared metric module); the formulas live in
the pure modules `metrics.collection`, `power`, `sweeps`, `interleaving` and `efficiency`.
Every section returns a frozen dataclass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import efficiency, interleaving, stats, sweeps
from workbench import power as power_design
from workbench.metrics.collection import IMBALANCE_NOTE, MEASURES, collection_set_measures
from workbench.services.efficiency import run_efficiency
from workbench.services.errors import ServiceError
from workbench.services.evaluation import (
    EvaluationTable,
    LoadedRun,
    load_runs,
    resolve_qrels,
    score_matrix,
)
from workbench.store.models import Campaign, Document

T = TypeVar("T")

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
    session: Session,
    campaign: Campaign,
    qrels: str = "final",
    *,
    num_docs: int | None = None,
    runs: Sequence[LoadedRun] | None = None,
    allow_files: bool = False,
    allow_incomplete: bool = False,
) -> CollectionScale:
    """Accuracy, error, fallout, P, R, (P+R)/2 and F1 of every run's retrieved set, mean over
    topics; N = ``num_docs`` or else the campaign's document count."""
    named = resolve_qrels(
        session, campaign, qrels, allow_files=allow_files, allow_incomplete=allow_incomplete
    )
    if num_docs is None:
        num_docs, source = document_count(session, campaign), "the campaign's documents"
        if num_docs == 0:
            raise ServiceError(
                f"campaign {campaign.name!r} has no documents: give the collection size N"
            )
    else:
        source = "given"
    rows = []
    for run in runs if runs is not None else load_runs(session, campaign):
        try:
            result = collection_set_measures(
                named.qrels, run.as_dict(), num_docs, relevance_level=campaign.relevance_level
            )
        except ValueError as error:
            raise ServiceError(f"run {run.tag}: {error}") from None
        rows.append(CollectionScaleRow(run.tag, len(result.per_topic), result.mean))
    return CollectionScale(named.label, campaign.relevance_level, num_docs, source, tuple(rows))


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
    measure = measure or table.measures[0]
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
    measure = measure or table.measures[0]
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


def interleaving_study(
    session: Session,
    campaign: Campaign,
    table: EvaluationTable,
    runs: Sequence[LoadedRun],
    qrels: str = "final",
    *,
    measure: str | None = None,
    setup: interleaving.Setup = interleaving.Setup(),
    allow_files: bool = False,
    allow_incomplete: bool = False,
) -> interleaving.InterleavingStudy:
    """Interleave every pair of the campaign's runs with clicks simulated from the ``qrels``
    (the spec ``table`` was evaluated with) and compare each preference with the offline
    ``measure`` of the table. Without a click model in `setup`, the default one with the
    table's relevance level."""
    measure = measure or table.measures[0]
    if measure not in table.measures:
        raise ServiceError(f"measure {measure!r} is not in the evaluation ({table.measures})")
    if len(runs) < 2:
        raise ServiceError("interleaving needs at least two runs")
    named = resolve_qrels(
        session, campaign, qrels, allow_files=allow_files, allow_incomplete=allow_incomplete
    )
    ranked_lists = {r.tag: {q: list(x.docnos) for q, x in r.ranked_lists.items()} for r in runs}
    offline = {  # undefined (NaN) scores stay out of the offline mean difference
        r.tag: {q: float(v[measure]) for q, v in r.per_topic.items() if v[measure] == v[measure]}
        for r in table.runs
    }
    try:
        if setup.model is None:
            model = interleaving.ClickModel(relevance_level=table.relevance_level)
            setup = replace(setup, model=model)
        return interleaving.study(ranked_lists, named.qrels, offline, measure=measure, setup=setup)
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
    measure = measure or table.measures[0]
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


# ------------------------------------------------------------------ the report's sections

MAX_INTERLEAVINGS = 50_000  # pairs x topics x impressions computed inside a report request


@dataclass(frozen=True)
class ExtendedSections:
    """The further sections of a campaign's evaluation report; a section that cannot be
    built carries the reason instead (shown where the section would be)."""

    collection: CollectionScale | None
    collection_reason: str
    power: PowerAnalysis | None
    power_reason: str
    efficiency: EfficiencyReport | None
    efficiency_reason: str
    interleaving: interleaving.InterleavingStudy | None
    interleaving_reason: str
    sweep: sweeps.SweepResult | None
    sweep_reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def extended_sections(
    session: Session,
    campaign: Campaign,
    table: EvaluationTable,
    runs: Sequence[LoadedRun],
    qrels: str = "final",
    *,
    test: str = "t",
    alpha: float = 0.05,
    num_docs: int | None = None,
    min_difference: float | None = None,
    sweep_pattern: str | None = None,
    folds: int = 5,
    interleaving_method: str = "team-draft",
    impressions: int = 10,
    seed: int = 0,
    max_interleavings: int = MAX_INTERLEAVINGS,
    allow_files: bool = False,
    allow_incomplete: bool = False,
) -> ExtendedSections:
    """Every further section for the table's first measure (one call for the CLI and web)."""
    measure = table.measures[0]

    def attempt(build: Callable[[], T]) -> tuple[T | None, str]:
        try:
            return build(), ""
        except ServiceError as error:
            return None, str(error)

    collection, collection_reason = attempt(
        lambda: collection_scale(
            session,
            campaign,
            qrels,
            num_docs=num_docs,
            runs=runs,
            allow_files=allow_files,
            allow_incomplete=allow_incomplete,
        )
    )
    power, power_reason = attempt(
        lambda: power_analysis(
            table, measure, test=test, alpha=alpha, min_difference=min_difference
        )
    )
    efficiency_section, efficiency_reason = attempt(
        lambda: efficiency_report(session, campaign, table, measure)
    )
    if efficiency_section is not None and len(efficiency_section.missing) == len(table.runs):
        efficiency_section = None
        efficiency_reason = (
            "No run has efficiency figures: upload a sidecar file for the runs (JSON or CSV, on "
            "the campaign's page)."
        )
    n_pairs = len(runs) * (len(runs) - 1) // 2
    work = n_pairs * len(table.topics()) * impressions
    if work > max_interleavings:
        study, study_reason = (
            None,
            (
                f"{n_pairs} pairs x {len(table.topics())} topics x {impressions} impressions "
                f"= {work:,} interleavings is more than a report computes "
                f"({max_interleavings:,}), so the section is left out."
            ),
        )
    else:
        study, study_reason = attempt(
            lambda: interleaving_study(
                session, campaign, table, runs, qrels, measure=measure,
                setup=interleaving.Setup(interleaving_method, impressions, seed=seed),
                allow_files=allow_files, allow_incomplete=allow_incomplete,
            )
        )  # fmt: skip
    if sweep_pattern:
        sweep, sweep_reason = attempt(
            lambda: parameter_sweep(
                table,
                pattern=sweep_pattern,
                measure=measure,
                folds=min(folds, len(table.topics())),  # K is named in the report
                seed=seed,
            )
        )
    else:
        sweep, sweep_reason = None, "Give a run-tag pattern such as bm25_k1={k1}_b={b}."
    return ExtendedSections(
        collection, collection_reason, power, power_reason, efficiency_section,
        efficiency_reason, study, study_reason, sweep, sweep_reason,
    )  # fmt: skip
