"""Evaluate the runs of a campaign, compare them, and test the pool's and the ranking's stability.

Every score comes from the shared metric module (`workbench.metrics.evaluate`), every test,
correction and correlation from `workbench.stats`, every pool contribution from
`workbench.pooling`. What is evaluated (qrels, runs, topics, pools) is read by
`services.evaluation_inputs`; this module holds the analyses.

Measures are the specs the user typed (`P.5`, `nDCG@10`), kept as asked (`requested`) so that
every later evaluation (stability, reusability) parses them again, and printed under
trec_eval's names (`P_5`). A measure with no per-topic value (gm_map, num_q) is in the
summary only: the per-topic tables, the tests and the analyses leave it out and say so. A
measure that is undefined on a topic (NaN) is reported as such, never as 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, cast

import numpy as np
from sqlalchemy.orm import Session

from workbench import stats
from workbench.metrics import MeasureError, evaluate, interpolated_precision_recall
from workbench.metrics.evaluation import CannotEvaluate
from workbench.metrics.report import report_lines
from workbench.services.errors import ServiceError
from workbench.services.evaluation_inputs import (
    DEFAULT_MEASURES,
    LoadedRun,
    NamedQrels,
    Scope,
    TopicScope,
    topic_scope,
)
from workbench.store.models import Campaign
from workbench.trec import Qrels

# ---------------------------------------------------------------------------------- tables


@dataclass
class RunScores:
    tag: str
    group: str
    contributes: bool
    summary: dict[str, float]  # every numeric measure, summary-only ones too (counts are ints)
    per_topic: dict[str, dict[str, float]]  # every evaluated topic, missing ones included
    missing_topics: list[str] = field(default_factory=list)  # judged topics the run lacks
    unjudged_topics: list[str] = field(default_factory=list)  # run topics outside the qrels
    undefined: dict[str, list[str]] = field(default_factory=dict)  # measure -> NaN topics


@dataclass
class EvaluationTable:
    """Runs x measures (summary and per topic) under one set of qrels, over the topics of
    `scope` (`evaluation_inputs.TopicScope`: a missing topic scores 0 with the "all" set).

    `measures`: the measures with a per-topic value (trec_eval's printed names), what the
    per-topic tables, the tests and the analyses use; `summary_only`: those without one
    (gm_map), in the summary only; `columns`: both, in trec_eval's order; `requested`: the
    specs as asked, for any later evaluation.
    """

    campaign: str
    qrels: str
    relevance_level: int
    measures: list[str]
    runs: list[RunScores]
    scope: TopicScope
    summary_only: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    qrels_notes: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # measures that are not numbers (runid)
    summaries: dict[str, str] = field(default_factory=dict)  # measure -> trec_eval's summary rule
    specs: dict[str, str] = field(default_factory=dict)  # printed name -> the spec giving it

    def __post_init__(self) -> None:
        self.columns = self.columns or [*self.measures, *self.summary_only]
        self.requested = self.requested or list(self.measures)

    @property
    def topic_set(self) -> str:
        return self.scope.topic_set

    @property
    def topics_evaluated(self) -> list[str]:
        return list(self.scope.evaluated)

    @property
    def dropped_topics(self) -> dict[str, list[str]]:
        return self.scope.dropped

    def run(self, tag: str) -> RunScores:
        return next(r for r in self.runs if r.tag == tag)

    def topics(self) -> list[str]:
        return sorted({qid for r in self.runs for qid in r.per_topic})

    def measure(self) -> str:
        """The analyses' measure (Tukey, stability, reusability, power ...): the first one
        asked for with a per-topic value (in the order the specs were given, then trec_eval's);
        a ServiceError says why when there is none."""
        if not self.measures:
            raise ServiceError(
                f"none of the measures {', '.join(self.requested)} has a per-topic value "
                "(runid, num_q, gm_map and the like have none): add a measure such as map"
            )
        order = {spec: i for i, spec in reversed(list(enumerate(self.requested)))}
        return min(
            self.measures,
            key=lambda m: (order.get(self.spec_of(m), len(order)), self.measures.index(m)),
        )

    def spec_of(self, measure: str) -> str:
        """The spec, as asked, that gives `measure` (P.5,10 for P_10): what a later
        evaluation of that measure alone parses."""
        return self.specs.get(measure, measure)

    def summary_only_note(self) -> list[str]:
        """Why the per-topic tables and the tests leave the summary-only measures out."""
        if not self.summary_only:
            return []
        names = ", ".join(self.summary_only)
        return [
            f"{names}: trec_eval gives no per-topic value (only one over all topics), so it "
            "is in the summary table only; the per-topic tables and the paired tests leave it "
            "out."
        ]

    def notes(self) -> list[str]:
        """What every rendering says beside the scores: the topics, each run's missing
        topics, undefined (NaN) scores, incomplete qrels, measures left out."""
        notes = self.scope.notes()
        if self.topic_set == "all":
            notes += _topics_of_runs(
                ((r.tag, r.missing_topics) for r in self.runs),
                "lacks {n} judged topic(s), scored 0",
            )
        notes += _topics_of_runs(
            ((r.tag, r.unjudged_topics) for r in self.runs),
            "has {n} topic(s) without judgements, not evaluated",
        )
        notes += [
            f"{measure} of {r.tag} is undefined (NaN, not 0) on topic(s) {', '.join(topics)}."
            for r in self.runs
            for measure, topics in r.undefined.items()
        ]
        notes += [f"{m} is not a number (a run's name or a text): left out." for m in self.left_out]
        return [*notes, *self.qrels_notes]

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "topic_set": self.topic_set,
            "topics_evaluated": self.topics_evaluated,
            "notes": self.notes(),
        }


def _topics_of_runs(topics: Iterable[tuple[str, list[str]]], says: str) -> list[str]:
    """``<tag> <says>: qid, qid.`` for each run's (tag, topics) with topics; ``{n}`` in
    ``says`` counts them."""
    return [f"{tag} {says.format(n=len(qids))}: {', '.join(qids)}." for tag, qids in topics if qids]


def _evaluate(qrels: Qrels, run: LoadedRun, measures: Sequence[str], level: int) -> Any:
    """The metric module's evaluation of one run over the `qrels` topics (trec_eval -c -l: the
    run's topics outside the qrels are not evaluated); refusals (unknown measure, a topic
    trec_eval cannot evaluate) as ServiceError."""
    try:
        return evaluate(
            qrels,
            run.trec_run,
            measures=list(measures),
            relevance_level=level,
            average_over_all_topics=True,
        )
    except MeasureError as error:
        raise ServiceError(str(error)) from None
    except CannotEvaluate as error:
        raise ServiceError(f"run {run.tag}: {error}") from None


def evaluate_runs(
    runs: Sequence[LoadedRun],
    qrels: NamedQrels,
    measures: Sequence[str],
    *,
    campaign: str,
    relevance_level: int,
    topics: TopicScope | None = None,
) -> EvaluationTable:
    """Evaluate every run with the metric module over the `topics` (default: every judged
    topic of the qrels), always averaging over all of them (trec_eval -c): a topic a run
    lacks is evaluated as an empty ranking, 0 for every score."""
    scope = topics if topics is not None else topic_scope(runs, qrels)
    scoped = qrels.of_topics(scope.evaluated)
    scored = []
    columns: list[str] = []
    per_topic_measures: list[str] = []
    left_out: list[str] = []
    summaries: dict[str, str] = {}
    specs: dict[str, str] = {}
    for run in runs:
        result = _evaluate(scoped, run, measures, relevance_level)
        if not columns:
            for spec in measures:  # which spec gives which printed names (one run suffices)
                alone = (
                    result
                    if len(measures) == 1
                    else _evaluate(scoped, run, [spec], relevance_level)
                )
                for line in alone.lines:
                    specs.setdefault(line.name, spec)
            summaries = {line.name: line.summary for line in result.lines}
            columns = [line.name for line in result.lines if line.kind != "string"]
            per_topic_measures = [
                line.name for line in result.lines if line.kind != "string" and line.per_topic
            ]
            left_out = [line.name for line in result.lines if line.kind == "string"]
        # columns leave out string measures: every value here is a number
        per_topic = {
            q: {m: cast(float, v[m]) for m in per_topic_measures}
            for q, v in result.per_topic.items()
        }
        undefined = {
            m: [q for q in scope.evaluated if q in per_topic and _is_nan(per_topic[q][m])]
            for m in per_topic_measures
        }
        scored.append(
            RunScores(
                tag=run.tag,
                group=run.group,
                contributes=run.contributes,
                summary={m: cast(float, result.summary[m]) for m in columns},
                per_topic=per_topic,
                missing_topics=[q for q in scope.evaluated if q not in run.trec_run],
                unjudged_topics=sorted(q for q in run.trec_run.topics() if q not in qrels.qrels),
                undefined={m: qs for m, qs in undefined.items() if qs},
            )
        )
    if scored and not columns:
        raise ServiceError(
            f"none of the measures {', '.join(measures)} is a number (runid and the like are "
            "not): choose a measure such as map or P_10"
        )
    return EvaluationTable(
        campaign,
        qrels.label,
        relevance_level,
        per_topic_measures,
        scored,
        scope,
        summary_only=[m for m in columns if m not in per_topic_measures],
        columns=columns,
        requested=list(measures),
        qrels_notes=list(qrels.notes),
        left_out=left_out,
        summaries=summaries,
        specs=specs,
    )


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def evaluate_campaign(
    session: Session,
    campaign: Campaign,
    qrels: str = "final",
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    relevance_level: int | None = None,
    scope: Scope = Scope(),
    allow_files: bool = False,
) -> EvaluationTable:
    """Evaluate every run of the campaign (contributing or not) against the named qrels over
    the judged topics of the scope."""
    named = scope.qrels(session, campaign, qrels, allow_files=allow_files)
    runs = scope.loaded_runs(session, campaign)
    level = campaign.relevance_level if relevance_level is None else relevance_level
    return evaluate_runs(
        runs,
        named,
        measures,
        campaign=campaign.name,
        relevance_level=level,
        topics=scope.topics(session, campaign, runs, named),
    )


def trec_eval_output(
    runs: Sequence[LoadedRun],
    qrels: NamedQrels,
    measures: Sequence[str],
    topics: TopicScope,
    relevance_level: int,
) -> str:
    """``trec_eval -c -q -l LEVEL -m ... QRELS RUN`` for each run in turn, byte for byte, on
    the qrels of the `topics` evaluated (the campaign convention: a topic a run lacks scores
    0, as trec_eval's -c): the measures asked for in trec_eval's order, summary-only ones
    (gm_map) in the summary, runid only when asked. Each run is evaluated once."""
    scoped = qrels.of_topics(topics.evaluated)
    parts: list[str] = []
    for run in runs:
        result = _evaluate(scoped, run, measures, relevance_level)
        parts.extend(report_lines(result, per_topic=True))
    return "".join(parts)


def precision_recall(
    runs: Sequence[LoadedRun], qrels: NamedQrels, table: EvaluationTable
) -> dict[str, list[float]]:
    """Run tag -> the 11-point interpolated precision (recall 0.0 .. 1.0), mean over the
    table's topics as the table's scores are (trec_eval -c: a topic the run lacks is scored 0
    at every recall; its topics outside the qrels are not evaluated). A topic given as a
    ranking without documents would be 0/0 at the low recall points, as trec_eval computes
    it for a topic that retrieves nothing (`metrics.evaluation`), not what -c gives."""
    scoped = qrels.of_topics(table.topics_evaluated)
    curves = {}
    for run in runs:
        curve = interpolated_precision_recall(
            scoped,
            run.trec_run,
            relevance_level=table.relevance_level,
            average_over_all_topics=True,
        )["all"]
        curves[run.tag] = [float(v) for v in curve]
    return curves


# ---------------------------------------------------------------------------------- tests


@dataclass
class PairComparison:
    """first vs second on one measure over the runs' common topics (difference first - second)."""

    measure: str
    first: str
    second: str
    n_topics: int
    mean_difference: float
    statistic: float
    p_value: float
    p_adjusted: float
    effect_size: float | None
    ci: tuple[float, float] | None
    wins: int
    ties: int
    losses: int
    significant: bool


_PAIR_FIELDS = tuple(f.name for f in fields(PairComparison))


@dataclass
class Comparisons:
    """All pairs of runs per measure; p-values corrected within each measure's family."""

    test: str  # the test's name, as `workbench.stats` gives it
    correction: str  # the correction's name
    alpha: float
    pairs: list[PairComparison]
    notes: list[str] = field(default_factory=list)  # topics a measure's tests left out
    p_values: str = ""  # how the p-values were found, when not analytic (`p_value_method`)

    def beats(self, measure: str, tag: str) -> list[str]:
        """The runs `tag` is significantly better than on `measure`."""
        return self.beaten(measure).get(tag, [])

    def beaten(self, measure: str) -> dict[str, list[str]]:
        """Each run -> the runs it is significantly better than on `measure` (in pair order;
        runs that beat none are absent): one pass over the pairs for every run."""
        beaten: dict[str, list[str]] = {}
        for p in self.pairs:
            if p.measure != measure or not p.significant:
                continue
            if p.mean_difference > 0:
                beaten.setdefault(p.first, []).append(p.second)
            elif p.mean_difference < 0:
                beaten.setdefault(p.second, []).append(p.first)
        return beaten

    def to_dict(self) -> dict[str, Any]:
        """`asdict` written out for its one nested type (a campaign's 33,525 pairs took
        `asdict`'s generic deep copy seconds)."""
        document = {f.name: getattr(self, f.name) for f in fields(self)}
        document["pairs"] = [{f: getattr(p, f) for f in _PAIR_FIELDS} for p in self.pairs]
        document["notes"] = list(self.notes)
        return document


def common_topics(table: EvaluationTable, measure: str | None = None) -> list[str]:
    """The topics on which every run has a score (the paired design): every evaluated topic,
    less those where some run's `measure` is undefined (NaN)."""
    topics = sorted(set.intersection(*(set(r.per_topic) for r in table.runs)))
    if measure is None:
        return topics
    return [q for q in topics if not any(_is_nan(r.per_topic[q][measure]) for r in table.runs)]


def score_matrix(table: EvaluationTable, measure: str) -> tuple[list[str], np.ndarray]:
    """(common topics with `measure` defined, runs x topics scores), runs in table order."""
    topics = common_topics(table, measure)
    return topics, np.array([[r.per_topic[q][measure] for q in topics] for r in table.runs])


def compare_runs(
    table: EvaluationTable,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    measures: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Comparisons:
    """`stats.pairwise_tests` on every pair of runs for every measure, over common topics."""
    if test not in stats.PAIRED_TESTS:
        raise ServiceError(
            f"unknown test {test!r}; expected one of {', '.join(stats.PAIRED_TESTS)}"
        )
    if correction not in stats.CORRECTIONS:
        raise ServiceError(
            f"unknown correction {correction!r}; expected one of {', '.join(stats.CORRECTIONS)}"
        )
    options: dict[str, Any] = {}
    if stats.PAIRED_TESTS[test].resampling:
        options = {"n_resamples": n_resamples, "seed": seed}
    test_name = stats.PAIRED_TESTS[test].label
    notes: list[str] = []
    tested: list[tuple[str, dict[str, np.ndarray]]] = []
    for measure in measures or table.measures:
        topics, matrix = score_matrix(table, measure)
        left_out = sorted(set(common_topics(table)) - set(topics))
        if left_out:
            notes.append(
                f"Tests on {measure} leave out topic(s) {', '.join(left_out)}, where a run's "
                f"{measure} is undefined (NaN)."
            )
        if len(table.runs) < 2 or len(topics) < 2:
            if len(table.runs) >= 2:
                notes.append(f"No test on {measure}: fewer than 2 topics with scores.")
            continue
        tested.append((measure, {r.tag: matrix[i] for i, r in enumerate(table.runs)}))
    checked = cast(stats.Correction, correction)  # in stats.CORRECTIONS, checked above
    families = stats.pairwise_test_families(
        [scores for _, scores in tested], test=test, correction=checked, **options
    )  # every measure's pairs at once: a resampling test draws its samples once
    pairs: list[PairComparison] = []
    for (measure, _), family in zip(tested, families, strict=True):
        for result in family:
            r = result.result
            test_name = r.test
            pairs.append(
                PairComparison(
                    measure=measure,
                    first=result.a,
                    second=result.b,
                    n_topics=r.n,
                    mean_difference=r.mean_difference,
                    statistic=r.statistic,
                    p_value=r.p_value,
                    p_adjusted=result.adjusted_p_value,
                    effect_size=r.effect_size,
                    ci=r.ci,
                    wins=r.wins,
                    ties=r.ties,
                    losses=r.losses,
                    significant=result.adjusted_p_value <= alpha,
                )
            )
    if measures is None:
        notes += table.summary_only_note()
    how = p_value_method(test, [r.result for family in families for r in family])
    return Comparisons(test_name, stats.CORRECTIONS[correction], alpha, pairs, notes, how)


def p_value_method(test: str, results: Sequence[stats.TestResult]) -> str:
    """How the p-values of `results` (of `stats.PAIRED_TESTS[test]`) were found, as every
    report's captions say it: '' for an analytic test; the randomization test's Monte Carlo
    estimates from B random sign vectors, p = (hits + 1)/(B + 1), and its exact
    enumerations of all 2^n (n <= `stats.RANDOMIZATION_EXACT_MAX_N` topics that differ),
    with how many tests each; the bootstrap's B."""
    estimated = [r.n_resamples for r in results if r.n_resamples is not None]
    exact = len(results) - len(estimated)
    if test == "bootstrap" and estimated:
        return (
            f"Bootstrap test p-values: Monte Carlo estimates from B = {estimated[0]:,} "
            "resamples of the topics, p = (hits + 1)/(B + 1)."
        )
    if test != "randomization" or not results:
        return ""
    most = stats.RANDOMIZATION_EXACT_MAX_N
    parts = []
    if estimated:
        parts.append(
            f"Monte Carlo estimates from B = {estimated[0]:,} random sign vectors, p = "
            f"(hits + 1)/(B + 1), for the {len(estimated):,} of the {len(results):,} tests "
            f"with more than {most} topics that differ"
        )
    if exact:
        parts.append(
            f"exact (all 2^n sign vectors enumerated) for the {exact:,} of the "
            f"{len(results):,} tests with n <= {most} topics that differ"
        )
    return "Randomization test p-values: " + "; ".join(parts) + "."


def tukey_hsd(table: EvaluationTable, measure: str) -> stats.TukeyResult | None:
    """Paired (two-way, systems x topics) Tukey HSD over the common topics; None if < 2x2."""
    topics, matrix = score_matrix(table, measure)
    if len(table.runs) < 2 or len(topics) < 2:
        return None
    return stats.paired_tukey_hsd(matrix, names=[r.tag for r in table.runs])


def score_like(
    table: EvaluationTable, run: LoadedRun, qrels: Qrels
) -> tuple[float, dict[str, float]]:
    """The run's summary and per-topic values of the table's measure at its relevance level
    under `qrels` (a `trec.Qrels` of the topics to evaluate): what `evaluate_like` gives one
    run, without the table around it."""
    measure = table.measure()
    result = _evaluate(qrels, run, [table.spec_of(measure)], table.relevance_level)
    per_topic = {q: cast(float, v[measure]) for q, v in result.per_topic.items()}
    return cast(float, result.summary[measure]), per_topic


def evaluate_like(
    table: EvaluationTable, runs: Sequence[LoadedRun], qrels: NamedQrels, topics: TopicScope
) -> EvaluationTable:
    """The runs evaluated on the table's measure (`EvaluationTable.measure`, parsed from the
    spec that gave it) at its relevance level, under other qrels over `topics`."""
    return evaluate_runs(
        runs,
        qrels,
        [table.spec_of(table.measure())],
        campaign=table.campaign,
        relevance_level=table.relevance_level,
        topics=topics,
    )
