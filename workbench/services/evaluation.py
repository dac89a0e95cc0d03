"""Evaluate the runs of a campaign, compare them, and test the pool's and the ranking's stability.

Every score comes from the shared metric module (`workbench.metrics.evaluate`), every test,
correction and correlation from `workbench.stats`, every pool contribution from
`workbench.pooling`. Qrels are named by a spec: "final" (the adjudicated FinalLabel rows),
an assessor's username (that assessor's current grades), the name of an imported QrelsSet,
or, from the command line only, the path of a qrels file. Final and assessor qrels are
`services.qrels.campaign_qrels`, as the export writes them, so a report scores exactly the
exported files, and like the export they are refused while documents lack a label unless
allow_incomplete (then the report says so).

Topics (`TOPIC_SETS`): by default every run is evaluated over every judged topic of the qrels
and a topic the run lacks scores 0 (trec_eval's -c), so every run keeps every topic in the
paired tests; "common" evaluates only the topics every run has and names what it drops. A
measure that is undefined on a topic (NaN) is reported as such, never as 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import pooling, stats
from workbench.metrics import MeasureError, evaluate, interpolated_precision_recall
from workbench.relevance import is_relevant
from workbench.services import pools
from workbench.services.current_judgements import current_judgements
from workbench.services.errors import ServiceError
from workbench.services.qrels import IncompleteQrels, campaign_qrels, has_final_labels
from workbench.store.models import (
    Campaign,
    Pool,
    PoolEntry,
    QrelsEntry,
    QrelsSet,
    Run,
    User,
)
from workbench.store.runs import load_run
from workbench.trec import read_qrels

QrelsDict = dict[str, dict[str, int]]
RunDict = dict[str, dict[str, float]]
DEFAULT_MEASURES = ("map", "P.10", "ndcg_cut.10")


# ---------------------------------------------------------------------------------- qrels


TOPIC_SETS = {
    "all": "every judged topic; a topic a run lacks scores 0 (trec_eval -c)",
    "common": "only the judged topics every run has (names the topics it drops)",
}


@dataclass(frozen=True)
class NamedQrels:
    label: str  # what the report calls them: "final", "assessor alice", "qrels set X", a path
    qrels: QrelsDict
    notes: tuple[str, ...] = ()  # e.g. that they are incomplete and were asked for anyway


def assessors(session: Session, campaign: Campaign) -> list[User]:
    """The users with at least one current grade in the campaign, by username."""
    ids = {j.user_id for j in current_judgements(session, campaign.id) if j.grade is not None}
    users = session.scalars(select(User).where(User.id.in_(ids)).order_by(User.username))
    return list(users)


def qrels_choices(session: Session, campaign: Campaign) -> list[str]:
    """The qrels specs a campaign offers: 'final', its assessors, its imported qrels sets."""
    sets = session.scalars(
        select(QrelsSet.name).where(QrelsSet.campaign_id == campaign.id).order_by(QrelsSet.name)
    )
    return ["final", *(u.username for u in assessors(session, campaign)), *sets]


def resolve_qrels(
    session: Session,
    campaign: Campaign,
    spec: str = "final",
    *,
    allow_files: bool = False,
    allow_incomplete: bool = False,
) -> NamedQrels:
    """Qrels named by `spec`: 'final', an assessor's username, a QrelsSet name, or (only with
    allow_files, i.e. from the command line, never from the web) a qrels file. Final and
    assessor qrels that lack labels are refused unless allow_incomplete."""
    if spec == "final":
        if not has_final_labels(session, campaign):
            raise ServiceError(
                f"campaign {campaign.name!r} has no final labels yet: adjudicate first (apply a "
                "merge rule, or decide in the adjudication queue)"
            )
        final = campaign_qrels(session, campaign, final=True, allow_incomplete=allow_incomplete)
        return NamedQrels("final", final.qrels, final.notes())
    if spec in {user.username for user in assessors(session, campaign)}:
        graded = campaign_qrels(session, campaign, assessor=spec, allow_incomplete=allow_incomplete)
        return NamedQrels(f"assessor {spec}", graded.qrels, graded.notes())
    qrels_set = session.scalar(
        select(QrelsSet).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == spec)
    )
    if qrels_set is not None:
        entries = session.scalars(select(QrelsEntry).where(QrelsEntry.qrels_set_id == qrels_set.id))
        imported: QrelsDict = defaultdict(dict)
        for entry in entries:
            imported[entry.qid][entry.docno] = entry.rel
        return NamedQrels(f"qrels set {spec}", dict(imported))
    if allow_files and Path(spec).is_file():
        return NamedQrels(spec, read_qrels(spec).to_dict())
    raise ServiceError(
        f"qrels {spec!r}: not 'final', an assessor with judgements, or a qrels set of "
        f"{campaign.name!r}" + (", nor a file" if allow_files else "")
    )


# ---------------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class LoadedRun:
    tag: str
    group: str
    contributes: bool
    ranked_lists: dict[str, pooling.RankedList]  # qid -> documents in trec_eval order

    def as_dict(self) -> RunDict:
        return {
            qid: {d: float(s) for d, s in zip(r.docnos, r.scores, strict=True)}
            for qid, r in self.ranked_lists.items()
        }


def load_runs(session: Session, campaign: Campaign) -> list[LoadedRun]:
    """Every run of the campaign, contributing or not, by tag."""
    runs = session.scalars(select(Run).where(Run.campaign_id == campaign.id).order_by(Run.tag))
    loaded = []
    for run in runs:
        ranked_lists = pooling.topic_ranked_lists(load_run(session, run))
        loaded.append(LoadedRun(run.tag, run.group, run.contributes, ranked_lists))
    if not loaded:
        raise ServiceError(f"campaign {campaign.name!r} has no runs")
    return loaded


@dataclass(frozen=True)
class Scope:
    """What an evaluation of a campaign covers: its `runs` (from `load_runs`, given when one
    page needs several analyses; None: loaded), the judged topics of `topic_set`
    (`TOPIC_SETS`), and whether qrels that lack labels may be used (`allow_incomplete`)."""

    runs: Sequence[LoadedRun] | None = None
    topic_set: str = "all"
    allow_incomplete: bool = False

    def loaded_runs(self, session: Session, campaign: Campaign) -> Sequence[LoadedRun]:
        return self.runs if self.runs is not None else load_runs(session, campaign)


# ---------------------------------------------------------------------------------- tables


@dataclass
class RunScores:
    tag: str
    group: str
    contributes: bool
    summary: dict[str, float]  # counts (num_rel ...) are ints
    per_topic: dict[str, dict[str, float]]  # every evaluated topic, missing ones included
    missing_topics: list[str] = field(default_factory=list)  # judged topics the run lacks
    unjudged_topics: list[str] = field(default_factory=list)  # run topics outside the qrels
    undefined: dict[str, list[str]] = field(default_factory=dict)  # measure -> NaN topics


@dataclass
class EvaluationTable:
    """Runs x measures (summary and per topic) under one set of qrels.

    topic_set "all": every run over every judged topic (`topics_evaluated`), a missing topic
    scoring 0; "common": the judged topics every run has, `dropped_topics` naming the others
    (topic -> the runs that lack it).
    """

    campaign: str
    qrels: str
    relevance_level: int
    measures: list[str]  # canonical trec_eval names
    runs: list[RunScores]
    topic_set: str = "all"
    topics_evaluated: list[str] = field(default_factory=list)
    judged_topics: int = 0  # topics of the qrels
    dropped_topics: dict[str, list[str]] = field(default_factory=dict)
    qrels_notes: list[str] = field(default_factory=list)

    def run(self, tag: str) -> RunScores:
        return next(r for r in self.runs if r.tag == tag)

    def topics(self) -> list[str]:
        return sorted({qid for r in self.runs for qid in r.per_topic})

    def notes(self) -> list[str]:
        """What every rendering says beside the scores: the topic convention, each run's
        missing topics, the topics dropped, undefined (NaN) scores, incomplete qrels."""
        n = len(self.topics_evaluated)
        if self.topic_set == "common":
            dropped = "; ".join(
                f"{qid} (lacked by {', '.join(tags)})" for qid, tags in self.dropped_topics.items()
            )
            notes = [
                f"Common-topic set: only the {n} of the {self.judged_topics} judged topics that "
                "every run has are evaluated"
                + (f"; dropped: {dropped}." if dropped else "; none dropped.")
            ]
        else:
            notes = [
                f"Every run is evaluated over the {n} judged topics of the {self.qrels} qrels; "
                "a topic a run lacks scores 0 (trec_eval -c)."
            ]
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
        return [*notes, *self.qrels_notes]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "notes": self.notes()}


def _topics_of_runs(topics: Iterable[tuple[str, list[str]]], says: str) -> list[str]:
    """``<tag> <says>: qid, qid.`` for each run's (tag, topics) with topics; ``{n}`` in
    ``says`` counts them."""
    return [f"{tag} {says.format(n=len(qids))}: {', '.join(qids)}." for tag, qids in topics if qids]


def _topic_scope(
    runs: Sequence[LoadedRun], qrels: QrelsDict, topic_set: str
) -> tuple[list[str], dict[str, list[str]]]:
    """(the judged topics to evaluate, topic -> runs lacking it for those dropped)."""
    if topic_set not in TOPIC_SETS:
        raise ServiceError(
            f"unknown topic set {topic_set!r}; expected one of {', '.join(TOPIC_SETS)}"
        )
    judged = sorted(qrels)
    if topic_set == "all":
        return judged, {}
    lacking = {q: [r.tag for r in runs if q not in r.ranked_lists] for q in judged}
    common = [q for q in judged if not lacking[q]]
    if not common:
        raise ServiceError(
            "no judged topic is common to every run; evaluate over all judged topics instead "
            "(missing topics score 0)"
        )
    return common, {q: tags for q, tags in lacking.items() if tags}


def evaluate_runs(
    runs: Sequence[LoadedRun],
    qrels: NamedQrels,
    measures: Sequence[str],
    *,
    campaign: str,
    relevance_level: int,
    topic_set: str = "all",
) -> EvaluationTable:
    """Evaluate every run with the metric module (measure names canonicalised by it) over the
    judged topics of `topic_set`, always averaging over all of them (trec_eval -c): a topic a
    run lacks is evaluated as an empty ranking, 0 for every score."""
    topics, dropped = _topic_scope(runs, qrels.qrels, topic_set)
    scoped = {q: qrels.qrels[q] for q in topics}
    scored = []
    canonical: list[str] = []
    for run in runs:
        try:
            result = evaluate(
                scoped,
                {q: v for q, v in run.as_dict().items() if q in scoped},
                measures=list(measures),
                relevance_level=relevance_level,
                average_over_all_topics=True,
            )
        except MeasureError as error:
            raise ServiceError(str(error)) from None
        # numeric measures with per-topic values (runid and num_q are not scores)
        canonical = canonical or [
            line.name for line in result.lines if line.kind != "string" and line.per_topic
        ]
        # canonical leaves out string measures: every value here is a number
        per_topic = {
            q: {m: cast(float, v[m]) for m in canonical} for q, v in result.per_topic.items()
        }
        undefined = {
            m: [q for q in topics if q in per_topic and _is_nan(per_topic[q][m])] for m in canonical
        }
        scored.append(
            RunScores(
                tag=run.tag,
                group=run.group,
                contributes=run.contributes,
                summary={m: cast(float, result.summary[m]) for m in canonical},
                per_topic=per_topic,
                missing_topics=[q for q in topics if q not in run.ranked_lists],
                unjudged_topics=sorted(q for q in run.ranked_lists if q not in qrels.qrels),
                undefined={m: qs for m, qs in undefined.items() if qs},
            )
        )
    if scored and not canonical:
        raise ServiceError(
            f"none of the measures {', '.join(measures)} is a score per topic "
            "(runid, num_q and the like are not): choose a measure such as map or P_10"
        )
    return EvaluationTable(
        campaign,
        qrels.label,
        relevance_level,
        canonical,
        scored,
        topic_set=topic_set,
        topics_evaluated=topics,
        judged_topics=len(qrels.qrels),
        dropped_topics=dropped,
        qrels_notes=list(qrels.notes),
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
    the judged topics of the scope's topic set."""
    named = resolve_qrels(
        session, campaign, qrels, allow_files=allow_files, allow_incomplete=scope.allow_incomplete
    )
    level = campaign.relevance_level if relevance_level is None else relevance_level
    return evaluate_runs(
        scope.loaded_runs(session, campaign),
        named,
        measures,
        campaign=campaign.name,
        relevance_level=level,
        topic_set=scope.topic_set,
    )


def precision_recall(
    session: Session,
    campaign: Campaign,
    qrels: str = "final",
    scope: Scope = Scope(),
) -> dict[str, list[float]]:
    """Run tag -> the 11-point interpolated precision (recall 0.0 .. 1.0), mean over the
    judged topics of the scope's topic set, a topic the run lacks counting as an empty
    ranking."""
    named = resolve_qrels(session, campaign, qrels, allow_incomplete=scope.allow_incomplete)
    runs = scope.loaded_runs(session, campaign)
    topics, _ = _topic_scope(runs, named.qrels, scope.topic_set)
    scoped = {q: named.qrels[q] for q in topics}
    curves = {}
    for run in runs:
        ranked = run.as_dict()
        with_empty = {q: ranked.get(q, {}) for q in topics}
        curve = interpolated_precision_recall(
            scoped, with_empty, relevance_level=campaign.relevance_level
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


@dataclass
class Comparisons:
    """All pairs of runs per measure; p-values corrected within each measure's family."""

    test: str  # the test's name, as `workbench.stats` gives it
    correction: str  # the correction's name
    alpha: float
    pairs: list[PairComparison]
    notes: list[str] = field(default_factory=list)  # topics a measure's tests left out

    def beats(self, measure: str, tag: str) -> list[str]:
        """The runs `tag` is significantly better than on `measure`."""
        beaten = []
        for p in self.pairs:
            if p.measure != measure or not p.significant:
                continue
            if p.first == tag and p.mean_difference > 0:
                beaten.append(p.second)
            elif p.second == tag and p.mean_difference < 0:
                beaten.append(p.first)
        return beaten

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    pairs: list[PairComparison] = []
    notes: list[str] = []
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
        scores = {r.tag: matrix[i] for i, r in enumerate(table.runs)}
        checked = cast(stats.Correction, correction)  # in stats.CORRECTIONS, checked above
        for result in stats.pairwise_tests(scores, test=test, correction=checked, **options):
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
    return Comparisons(test_name, stats.CORRECTIONS[correction], alpha, pairs, notes)


def tukey_hsd(table: EvaluationTable, measure: str) -> stats.TukeyResult | None:
    """Paired (two-way, systems x topics) Tukey HSD over the common topics; None if < 2x2."""
    topics, matrix = score_matrix(table, measure)
    if len(table.runs) < 2 or len(topics) < 2:
        return None
    return stats.paired_tukey_hsd(matrix, names=[r.tag for r in table.runs])


# ------------------------------------------------------------------------ ranking stability


@dataclass
class RankingStability:
    measure: str
    reference: str
    reference_order: list[str]
    comparisons: list[stats.RankingComparison]
    notes: list[str] = field(default_factory=list)  # assessors left out, incomplete qrels

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ranking_stability(
    session: Session,
    campaign: Campaign,
    measure: str = "map",
    scope: Scope = Scope(),
) -> RankingStability:
    """Rank the runs under the final qrels and under each assessor's; compare the ranked_lists.

    An assessor whose qrels are incomplete is left out, and the notes say so, unless
    allow_incomplete (then their qrels are used, and the notes say that).
    """
    runs, topic_set, allow_incomplete = (
        scope.loaded_runs(session, campaign), scope.topic_set, scope.allow_incomplete
    )
    level = campaign.relevance_level
    final = resolve_qrels(session, campaign, "final", allow_incomplete=allow_incomplete)
    reference = evaluate_runs(
        runs, final, [measure], campaign=campaign.name, relevance_level=level, topic_set=topic_set
    )
    canonical = reference.measures[0]
    reference_scores = {r.tag: r.summary[canonical] for r in reference.runs}
    comparisons = []
    notes = list(final.notes)
    for user in assessors(session, campaign):
        try:
            qrels = resolve_qrels(
                session, campaign, user.username, allow_incomplete=allow_incomplete
            )
        except IncompleteQrels as refused:
            notes.append(f"assessor {user.username} left out: {refused.completeness.describe()}.")
            continue
        notes.extend(f"assessor {user.username}: {note}" for note in qrels.notes)
        table = evaluate_runs(
            runs,
            qrels,
            [measure],
            campaign=campaign.name,
            relevance_level=level,
            topic_set=topic_set,
        )
        scores = {r.tag: r.summary[canonical] for r in table.runs}
        comparisons.append(stats.compare_system_rankings(reference_scores, scores, qrels.label))
    return RankingStability(
        canonical, "final", stats.system_ranking(reference_scores), comparisons, notes
    )


# ------------------------------------------------------------------------------ reusability


@dataclass
class LeaveOut:
    """One run scored with the full qrels and without the documents only its unit contributed."""

    tag: str
    unit: str  # the run itself (leave-one-run-out) or its group (leave-one-group-out)
    unique_documents: int
    unique_relevant: int
    score: float
    score_left_out: float
    delta: float  # score - score_left_out
    percent_delta: float
    rank: int
    rank_left_out: int


@dataclass
class Reusability:
    measure: str
    qrels: str
    by: str  # "run" or "group"
    pool: str
    rows: list[LeaveOut]
    kendall_tau: float
    tau_ap: float
    judged: dict[str, float] = field(default_factory=dict)  # judged@k per run
    judged_measure: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def contributed_documents(
    session: Session, pool: Pool, runs: Sequence[LoadedRun]
) -> dict[str, dict[str, set[str]]]:
    """qid -> run tag -> pooled documents that run retrieved within the contribution depth
    (the pool depth, the last stratum bound, or the deepest best rank: as `services.pools`).

    Only the runs that contributed to the pool are listed.
    """
    contributing = {run.tag for run in pools.pool_runs(session, pool)}
    pooled: dict[str, set[str]] = defaultdict(set)
    deepest = 1
    for qid, docno, best_rank in session.execute(
        select(PoolEntry.qid, PoolEntry.docno, PoolEntry.best_rank).where(
            PoolEntry.pool_id == pool.id
        )
    ):
        pooled[qid].add(docno)
        deepest = max(deepest, best_rank)
    depth = pools.contribution_depth(pool, deepest)  # one home: the pool service
    result = {}
    for qid, docs in pooled.items():
        ranked_lists = {
            r.tag: r.ranked_lists[qid]
            for r in runs
            if r.tag in contributing and qid in r.ranked_lists
        }
        result[qid] = pooling.contributions(ranked_lists, docs, depth)
    return result


def leave_out(
    session: Session,
    campaign: Campaign,
    *,
    qrels: str = "final",
    measure: str = "map",
    by: str = "run",
    judged_measure: str = "Judged@10",
    scope: Scope = Scope(),
    allow_files: bool = False,
) -> Reusability:
    """Leave-one-run-out (by="run") or leave-one-group-out (by="group") for every
    contributing run: U = pooled documents contributed by the unit's runs and by no other
    run; the run is re-scored with qrels minus U, the others keep the full qrels.
    """
    if by not in ("run", "group"):
        raise ServiceError(f"leave-one-out unit must be 'run' or 'group'; got {by!r}")
    named = resolve_qrels(
        session, campaign, qrels, allow_files=allow_files, allow_incomplete=scope.allow_incomplete
    )
    level = campaign.relevance_level
    runs, topic_set = scope.loaded_runs(session, campaign), scope.topic_set
    pool = pools.get_pool(session, campaign)
    contributed = contributed_documents(session, pool, runs)
    full = evaluate_runs(
        runs, named, [measure], campaign=campaign.name, relevance_level=level, topic_set=topic_set
    )
    canonical = full.measures[0]
    scores = {r.tag: r.summary[canonical] for r in full.runs}
    order = stats.system_ranking(scores)

    def unit_of(run: LoadedRun) -> str:
        return run.tag if by == "run" or not run.group else run.group

    contributing = {tag for per_run in contributed.values() for tag in per_run}
    unit = {r.tag: unit_of(r) for r in runs}
    rows = []
    left_out_scores = dict(scores)
    for run in runs:
        if run.tag not in contributing:
            continue
        reduced: QrelsDict = {}
        n_unique = n_relevant = 0
        for qid in full.topics_evaluated:
            labels = named.qrels[qid]
            unique = pooling.unique_to_unit(contributed.get(qid, {}), unit, unit[run.tag])
            n_unique += len(unique)
            n_relevant += sum(1 for d in unique if is_relevant(labels.get(d, 0), level))
            reduced[qid] = {d: g for d, g in labels.items() if d not in unique}
        table = evaluate_runs(  # over the same topics as `full`
            [run],
            NamedQrels("left out", reduced),
            [measure],
            campaign=campaign.name,
            relevance_level=level,
        )
        score_out = table.runs[0].summary[canonical]
        left_out_scores[run.tag] = score_out
        rank_out = stats.system_ranking({**scores, run.tag: score_out}).index(run.tag) + 1
        delta = scores[run.tag] - score_out
        rows.append(
            LeaveOut(
                tag=run.tag,
                unit=unit[run.tag],
                unique_documents=n_unique,
                unique_relevant=n_relevant,
                score=scores[run.tag],
                score_left_out=score_out,
                delta=delta,
                percent_delta=100 * delta / scores[run.tag] if scores[run.tag] else math.nan,
                rank=order.index(run.tag) + 1,
                rank_left_out=rank_out,
            )
        )
    comparison = stats.compare_system_rankings(scores, left_out_scores, "left out")
    judged = evaluate_runs(
        runs,
        named,
        [judged_measure],
        campaign=campaign.name,
        relevance_level=level,
        topic_set=topic_set,
    )
    return Reusability(
        measure=canonical,
        qrels=named.label,
        by=by,
        pool=pool.name or f"pool {pool.number}",
        rows=rows,
        kendall_tau=comparison.kendall_tau,
        tau_ap=comparison.tau_ap,
        judged={r.tag: r.summary[judged.measures[0]] for r in judged.runs},
        judged_measure=judged.measures[0],
    )
