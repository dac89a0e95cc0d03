"""How stable the campaign's ranking of the runs is: under each assessor's qrels instead of
the final ones (ranking stability), and without the documents only one run or group
contributed to the pools in scope (reusability: leave-one-run-out, leave-one-group-out).

Both re-evaluate the runs as the report's table was evaluated (`evaluation.evaluate_like`:
the measures as asked, its relevance level) and compare the rankings with
`stats.compare_system_rankings` (Kendall's tau, tau_AP); contributions come from
`pool_contributions.contributed` at each pool's contribution depth (`services.pools`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import pool_contributions, stats
from workbench.relevance import is_relevant
from workbench.services import pools
from workbench.services.errors import ServiceError
from workbench.services.evaluation import (
    EvaluationTable,
    evaluate_like,
    evaluate_runs,
    score_like,
)
from workbench.services.evaluation_inputs import (
    LoadedRun,
    NamedQrels,
    Scope,
    assessors,
)
from workbench.services.qrels import IncompleteQrels
from workbench.services.scope import PoolScope
from workbench.store.models import Campaign, Pool, PoolEntry, User
from workbench.trec import Qrels

# ------------------------------------------------------------------------ ranking stability


@dataclass
class RankingStability:
    measure: str
    reference: str
    reference_order: list[str]
    comparisons: list[stats.RankingComparison]
    notes: list[str] = field(default_factory=list)  # assessors and topics left out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ranking_stability(
    session: Session,
    campaign: Campaign,
    table: EvaluationTable,
    scope: Scope,
    judges: Sequence[User] | None = None,
    final: NamedQrels | None = None,
) -> RankingStability:
    """Rank the runs by the table's measure (`EvaluationTable.measure`) under the final qrels
    and under each assessor's, and compare the rankings (Kendall's tau, as Voorhees, IP&M
    2000; tau_AP, Yilmaz, Aslam & Robertson, SIGIR 2008).

    The final ranking is the table's when it is over the final qrels. Each assessor's ranking
    is over the topics that assessor judged, and the notes name the others; an assessor whose
    qrels are incomplete is left out, and the notes say so, unless allow_incomplete.
    `judges`: the campaign's `assessors`, when the caller has them (read when None);
    `final`: the final qrels, when the caller has them (read when None and needed).
    Each assessor's qrels are evaluated as part of the final ones (`trec.Qrels.part_of`)
    where they can be: a run is then probed once for all assessors.
    """
    measure = table.measure()
    runs = scope.loaded_runs(session, campaign)
    if final is None:
        final = scope.qrels(session, campaign, "final")
    if table.qrels == "final":
        reference = table
    else:
        reference = evaluate_like(table, runs, final, scope.topics(session, campaign, runs, final))
    reference_scores = {r.tag: r.summary[measure] for r in reference.runs}
    reference_topics = set(reference.topics_evaluated)
    comparisons = []
    notes = list(reference.qrels_notes)
    if judges is None:
        judges = assessors(session, campaign, scope.grades)
    if not judges:
        raise ServiceError("no assessor has judged yet: there is no assessor's ranking to compare")
    every = scope.assessors_qrels(session, campaign, [user.username for user in judges])
    for user in judges:
        name = user.username
        qrels = every[name]
        if isinstance(qrels, IncompleteQrels):
            notes.append(f"assessor {name} left out: {qrels.completeness.describe()}.")
            continue
        notes.extend(f"assessor {name}: {note}" for note in qrels.notes)
        qrels = replace(qrels, trec=qrels.as_trec.part_of(final.as_trec))
        try:
            topics = scope.topics(session, campaign, runs, qrels)
        except ServiceError as refused:  # e.g. no judged topic common to every run
            notes.append(f"assessor {name} left out: {refused}.")
            continue
        if not topics.evaluated:
            notes.append(f"assessor {name} left out: no topic judged by {name}.")
            continue
        missing = sorted(reference_topics - set(topics.evaluated))
        if missing:
            notes.append(
                f"assessor {name}: topic(s) {', '.join(missing)} left out (not judged by "
                f"{name}); that ranking is over the {len(topics.evaluated)} topic(s) "
                f"{name} judged."
            )
        scores = {r.tag: r.summary[measure] for r in evaluate_like(table, runs, qrels, topics).runs}
        comparisons.append(stats.compare_system_rankings(reference_scores, scores, qrels.label))
    return RankingStability(
        measure, "final", stats.system_ranking(reference_scores), comparisons, notes
    )


# ------------------------------------------------------------------------------ reusability


def _left_out_score(table: EvaluationTable, run: LoadedRun, reduced: Qrels) -> float:
    """The run's score on the table's measure under the `reduced` qrels (of the table's
    topics), over the table's topics: a topic left without any label of 0 or more (every
    judged document left out) cannot be evaluated by trec_eval, and scores what trec_eval
    gives a topic without a relevant document, 0; the mean is over all the table's topics."""
    measure = table.measure()
    evaluated = sorted(reduced.judged_topics())
    summary, per_topic = score_like(table, run, reduced.select(evaluated))
    emptied = set(table.topics_evaluated) - set(evaluated)
    if not emptied:
        return summary
    if table.summaries.get(measure) != "mean":
        raise ServiceError(
            f"leaving out {run.tag}'s documents leaves topic(s) {', '.join(sorted(emptied))} "
            f"without a judgement, and {measure} is not a mean over topics"
        )
    values = [per_topic[q] for q in evaluated]
    return float(sum(values)) / len(table.topics_evaluated)


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
    pool: str  # the pools in scope, described
    rows: list[LeaveOut]
    kendall_tau: float
    tau_ap: float
    judged: dict[str, float] = field(default_factory=dict)  # judged@k per run
    judged_measure: str = ""
    pools: list[int] = field(default_factory=list)  # their numbers

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pooled:
    """What a pool's contributions read from the store: its contribution depth, the tags of
    the runs that contributed to it, and its documents per topic."""

    depth: int
    contributing: frozenset[str]
    documents: dict[str, set[str]]


def pooled_documents(session: Session, scope: PoolScope) -> list[Pooled]:
    """Each pool in scope's `Pooled`: what `contributions` reads from the store."""
    found = []
    for pool_id in scope.ids:
        pool = session.get(Pool, pool_id)
        assert pool is not None
        contributing = frozenset(run.tag for run in pools.pool_runs(session, pool))
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
        found.append(Pooled(depth, contributing, pooled))
    return found


def contributions(
    pooled: Sequence[Pooled], runs: Sequence[LoadedRun]
) -> dict[str, dict[str, set[str]]]:
    """qid -> run tag -> documents that run contributed to some pool in scope (`pooled`):
    the pooled documents it retrieved within that pool's contribution depth (its depth, the
    last stratum bound, or the deepest best rank: as `services.pools`). Only the runs that
    contributed to a pool are listed; nothing is read from the store."""
    result: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for pool in pooled:
        for run in runs:
            if run.tag not in pool.contributing:
                continue
            tops = run.tops(pool.depth)
            for qid, docs in pool.documents.items():
                if qid in tops:
                    result[qid][run.tag] |= pool_contributions.contributed(tops[qid], docs)
    return {qid: dict(per_run) for qid, per_run in result.items()}


@dataclass(frozen=True)
class LeaveOutInputs:
    """What leaving out a run and leaving out a group both read, made once for a report: the
    runs, the pools in scope and their documents (`pooled`, read from the store), and, made
    from them on first use without the store, each run's contributed documents
    (`contributed`, `contributions`) and `judged` (Judged@k of every run on the
    table's topics): so both sections can be built where the store is not at hand."""

    runs: Sequence[LoadedRun]
    pools: PoolScope
    pooled: Sequence[Pooled]
    table: EvaluationTable
    qrels: NamedQrels
    judged_measure: str = "Judged@10"

    @cached_property
    def contributed(self) -> dict[str, dict[str, set[str]]]:
        return contributions(self.pooled, self.runs)

    @cached_property
    def judged(self) -> EvaluationTable:
        return evaluate_runs(
            self.runs,
            self.qrels,
            [self.judged_measure],
            campaign=self.table.campaign,
            relevance_level=self.table.relevance_level,
            topics=self.table.scope,
        )


def leave_out_inputs(
    session: Session,
    campaign: Campaign,
    table: EvaluationTable,
    qrels: NamedQrels,
    scope: Scope,
    judged_measure: str = "Judged@10",
) -> LeaveOutInputs:
    """`LeaveOutInputs` of the table (its qrels `qrels`, its topics); a ServiceError when no
    pool is in scope."""
    runs = scope.loaded_runs(session, campaign)
    in_scope = scope.pool_scope(session, campaign)
    if not in_scope.ids:
        raise ServiceError(f"no pool in scope ({in_scope.describe()}): nothing was pooled")
    pooled = pooled_documents(session, in_scope)
    return LeaveOutInputs(runs, in_scope, pooled, table, qrels, judged_measure)


def leave_out(
    session: Session,
    campaign: Campaign,
    table: EvaluationTable,
    qrels: NamedQrels,
    scope: Scope,
    *,
    by: str = "run",
    judged_measure: str = "Judged@10",
    inputs: LeaveOutInputs | None = None,
) -> Reusability:
    """Leave-one-run-out (by="run"; Zobel, SIGIR 1998) or leave-one-group-out (by="group";
    the stricter variant that removes every run of a group, as in Büttcher, Clarke, Yeung &
    Soboroff, SIGIR 2007) for every run that contributed to a pool in scope, on the table's
    measure (its qrels `qrels`, its topics):
    U = pooled documents contributed by the unit's runs and by no other run; the run is
    re-scored with qrels minus U, the others keep the full qrels. `inputs`: the
    `leave_out_inputs` of the same arguments, when the caller has them (made when None).
    """
    if by not in ("run", "group"):
        raise ServiceError(f"leave-one-out unit must be 'run' or 'group'; got {by!r}")
    if inputs is None:
        inputs = leave_out_inputs(session, campaign, table, qrels, scope, judged_measure)
    measure = table.measure()
    level = table.relevance_level
    runs, in_scope, contributed = inputs.runs, inputs.pools, inputs.contributed
    scores = {r.tag: r.summary[measure] for r in table.runs}
    order = stats.system_ranking(scores)

    def unit_of(run: LoadedRun) -> str:
        return run.tag if by == "run" or not run.group else run.group

    contributing = {tag for per_run in contributed.values() for tag in per_run}
    unit = {r.tag: unit_of(r) for r in runs}
    rows = []
    left_out_scores = dict(scores)
    full = qrels.of_topics(table.topics_evaluated)
    unique_of = {
        qid: pool_contributions.unique_by_unit(contributed.get(qid, {}), unit)
        for qid in table.topics_evaluated
    }
    for run in runs:
        if run.tag not in contributing:
            continue
        removed: dict[str, set[str]] = {}
        n_unique = n_relevant = 0
        for qid in table.topics_evaluated:
            labels = qrels.qrels[qid]
            unique = unique_of[qid].get(unit[run.tag], set())
            n_unique += len(unique)
            n_relevant += sum(1 for d in unique if is_relevant(labels.get(d, 0), level))
            removed[qid] = unique
        score_out = _left_out_score(table, run, full.without(removed))
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
    judged = inputs.judged
    return Reusability(
        measure=measure,
        qrels=qrels.label,
        by=by,
        pool=in_scope.describe(),
        rows=rows,
        kendall_tau=comparison.kendall_tau,
        tau_ap=comparison.tau_ap,
        judged={r.tag: r.summary[judged.measures[0]] for r in judged.runs},
        judged_measure=judged.measures[0],
        pools=list(in_scope.numbers),
    )
