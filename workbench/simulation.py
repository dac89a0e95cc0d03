"""Judging simulations: replay a strategy against known qrels and measure what it saves.

For every topic the universe is the depth-k pool of the runs (`adaptive.TopicPool`); a
strategy judges it one document at a time; the judge's label is read from the full qrels (a
document absent from them is non-relevant) and, with `noise` > 0, each of `judges` reads is
flipped with that probability, the label being the majority of the reads (a tie counts as
non-relevant). The reads depend on (seed, topic, docno) alone, so every strategy meets the
same judge. A flipped read gives grade `relevance_level` (relevant) or 0.

A budget is per topic: "10%" is ceil(0.10 |P_t|) judgements (P_t the topic's depth-k pool),
"200" is min(200, |P_t|). After each budget the judged labels are qrels in which the pooled
but unjudged documents are -1 (trec_eval's infAP convention; every other measure counts them
as non-relevant, bpref ignores them), and every run is evaluated with `workbench.metrics`
over the topics that have a relevant document in the full qrels and a non-empty pool.

Reported per strategy and budget (`BudgetResult`):
- judgements, and relevant found: true relevant documents judged / those in the pools;
- for MAP, P@10 and nDCG@10: Kendall's tau-b and tau_AP (`workbench.stats`) between the
  runs' ranking by the measure under the full qrels and under the budget's qrels, and the
  largest rank change; bpref and infAP: the same against the full qrels' MAP ranking (they
  are meant to estimate it, but an adaptive strategy's unjudged documents are no uniform
  sample, so both are biased here: `estimate_simulation` measures by how much);
- reusability (leave-one-group-out): each group's runs are left out of the pool, the strategy
  judges the other runs' pool with the same per-topic budget, and the left-out runs' MAP
  under those qrels is compared with their MAP under the full qrels: the mean and largest
  absolute error over the left-out runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from workbench import adaptive, pooling, stats
from workbench.metrics import evaluate
from workbench.relevance import is_relevant
from workbench.trec import Qrels, Run

MEASURES = {"MAP": "map", "P@10": "P_10", "nDCG@10": "ndcg_cut_10"}
ESTIMATES = {"bpref": "bpref", "infAP": "infAP"}  # compared with the full qrels' MAP
_EVALUATED = ["map", "P.10", "ndcg_cut.10", "bpref", "infAP"]
DEFAULT_BUDGETS = "5%,10%,20%,30%,40%,50%,60%,80%,100%"


class SimulationError(ValueError):
    """Bad simulation input (budgets, noise, runs, strategies)."""


@dataclass(frozen=True)
class Budget:
    """A per-topic judging budget: a share of the depth-k pool or a number of documents."""

    text: str
    share: float | None = None
    documents: int | None = None

    def for_pool(self, size: int) -> int:
        if self.share is not None:
            return min(size, math.ceil(self.share * size - 1e-9))
        return min(size, self.documents or 0)


def parse_budgets(text: str) -> list[Budget]:
    """'5%,10%,200' -> budgets (shares in (0, 100] %, counts positive integers)."""
    budgets = []
    for part in (p.strip() for p in text.split(",")):
        try:
            if part.endswith("%"):
                share = float(part[:-1]) / 100
                if not 0 < share <= 1:
                    raise ValueError
                budgets.append(Budget(part, share=share))
            else:
                count = int(part)
                if count < 1:
                    raise ValueError
                budgets.append(Budget(part, documents=count))
        except ValueError:
            raise SimulationError(
                f"bad budget {part!r}: expected a share such as 10% (0-100%] or a positive "
                "number of judgements per topic"
            ) from None
    if not budgets:
        raise SimulationError("no budget given")
    return budgets


@dataclass(frozen=True)
class RankingAgreement:
    """A measure's system ranking under the budget's qrels against the full qrels' one."""

    measure: str
    reference: str  # the measure ranking the runs under the full qrels
    kendall_tau: float
    tau_ap: float
    max_rank_change: int


@dataclass(frozen=True)
class BudgetResult:
    strategy: str
    budget: str
    judgements: int
    judged_share: float  # of the depth-k pools' documents
    relevant_found: int
    relevant_share: float  # of the relevant documents in the depth-k pools
    rankings: tuple[RankingAgreement, ...]
    logo_mean_error: float | None = None
    logo_max_error: float | None = None

    def agreement(self, measure: str) -> RankingAgreement:
        return next(r for r in self.rankings if r.measure == measure)


@dataclass(frozen=True)
class Simulation:
    results: tuple[BudgetResult, ...]
    topics: tuple[str, ...]
    runs: tuple[str, ...]
    depth: int
    pool_documents: int
    relevant_in_pool: int
    relevant_in_qrels: int
    noise: float
    judges: int
    seed: int
    groups: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topic:
    """One simulated topic: its depth-k pool, the judge's grades and the truly relevant."""

    qid: str
    pool: adaptive.TopicPool
    grades: Mapping[str, int]  # the judge's label per pooled document (noise applied)
    truly_relevant: frozenset[str]  # in the pool, by the full qrels

    def labels(self, level: int) -> np.ndarray:
        """The judge's relevance of each pooled document, in pool order."""
        return np.array([is_relevant(self.grades[d], level) for d in self.pool.docnos])


def noisy_grades(
    qid: str,
    docnos: Sequence[str],
    full: Mapping[str, int],
    *,
    level: int,
    noise: float,
    judges: int,
    seed: int,
) -> dict[str, int]:
    """The judge's grade of each document: the true grade, or flipped by majority of reads."""
    if noise == 0:
        return {d: max(full.get(d, 0), 0) for d in docnos}
    rng = pooling.topic_rng(seed, "judge", qid)
    ordered = sorted(docnos)
    flips = rng.random((judges, len(ordered))) < noise
    grades = {}
    for j, docno in enumerate(ordered):
        true = max(full.get(docno, 0), 0)
        relevant = is_relevant(true, level)
        reads_relevant = np.where(flips[:, j], not relevant, relevant).sum()
        judged_relevant = 2 * reads_relevant > judges
        grades[docno] = true if judged_relevant == relevant else (level if judged_relevant else 0)
    return grades


def _ranked_lists(runs: Sequence[Run], qid: str, depth: int) -> dict[str, pooling.RankedList]:
    result = {}
    for run in runs:
        if qid in run:
            lines = run.topic_lines(qid)
            result[run.tag] = pooling.ranked_list(lines.docnos, lines.scores, limit=depth)
    return result


def judging_order(
    strategy: str,
    topic: Topic,
    pool: adaptive.TopicPool,
    limit: int,
    *,
    level: int,
    seed: int,
    texts: Mapping[str, str] | None,
) -> list[str]:
    """The documents the strategy judges on `pool`, one at a time, in order, up to `limit`."""
    state = adaptive.start_state(strategy, pool, seed=seed, qid=topic.qid, texts=texts)
    order: list[str] = []
    while len(order) < limit:
        chosen = state.take(1)
        if not chosen:
            break
        order.append(chosen[0])
        state.observe(chosen[0], is_relevant(topic.grades[chosen[0]], level))
    return order


def _judging_orders(
    strategy: str,
    topics: Sequence[Topic],
    pools: Mapping[str, adaptive.TopicPool],
    limit: Mapping[str, int],
    *,
    level: int,
    seed: int,
    texts: Mapping[str, str] | None,
) -> dict[str, list[str]]:
    """qid -> the documents the strategy judges, in order, up to `limit[qid]`."""
    return {
        t.qid: judging_order(
            strategy, t, pools[t.qid], limit[t.qid], level=level, seed=seed, texts=texts
        )
        for t in topics
    }


def _budget_qrels(
    topics: Sequence[Topic],
    orders: Mapping[str, list[str]],
    counts: Mapping[str, int],
    pools: Mapping[str, adaptive.TopicPool],
) -> Qrels:
    qrels: dict[str, dict[str, int]] = {}
    for topic in topics:
        judged = orders[topic.qid][: counts[topic.qid]]
        entries = dict.fromkeys(pools[topic.qid].docnos, -1)
        entries.update((d, topic.grades[d]) for d in judged)
        qrels[topic.qid] = entries
    return Qrels.from_dict(qrels)


def _scores(qrels: Qrels, runs: Sequence[Run], level: int) -> dict[str, dict[str, float]]:
    """measure -> run -> summary value."""
    out: dict[str, dict[str, float]] = {}
    for run in runs:
        summary = evaluate(qrels, run, _EVALUATED, relevance_level=level).summary
        for name, value in summary.items():
            out.setdefault(name, {})[run.tag] = float(value)
    return out


def _agreement(
    measure: str, reference: str, full: dict[str, float], other: dict[str, float]
) -> RankingAgreement:
    changes = stats.rank_changes(full, other)
    with np.errstate(invalid="ignore"):
        tau = stats.kendall_tau(full, other) if len(full) > 1 else math.nan
    return RankingAgreement(
        measure,
        reference,
        tau,
        stats.tau_ap_ties(full, other) if len(full) > 1 else math.nan,
        max((abs(c.shift) for c in changes), default=0),
    )


def check_inputs(
    runs: Sequence[Run],
    *,
    noise: float = 0.0,
    judges: int = 1,
    depth: int,
    strategies: Sequence[str] = (),
    texts: Mapping[str, str] | None = None,
) -> None:
    """Refuse what no simulation can use (one home for every simulation's checks); an
    unknown strategy raises `adaptive.MethodError`."""
    if not 0 <= noise < 0.5:
        raise SimulationError(f"noise must be in [0, 0.5); got {noise}")
    if judges < 1:
        raise SimulationError(f"judges must be a positive integer; got {judges}")
    if depth < 1:
        raise SimulationError(f"depth must be a positive integer; got {depth}")
    if len(runs) < 2:
        raise SimulationError("a simulation needs at least two runs to rank")
    tags = [r.tag for r in runs]
    if len(set(tags)) != len(tags):
        twice = sorted({t for t in tags if tags.count(t) > 1})
        raise SimulationError(f"two runs share a tag: {', '.join(twice)}")
    for name in strategies:
        if adaptive.get_method(name).needs_texts and texts is None:
            raise SimulationError(
                f"the adaptive method {name!r} needs the documents' texts (--documents)"
            )


def prepare_topics(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Run],
    *,
    depth: int,
    relevance_level: int,
    noise: float = 0.0,
    judges: int = 1,
    seed: int = 0,
) -> tuple[list[Topic], list[str]]:
    """The topics with a relevant document and a non-empty pool, and notes on those left out."""
    topics: list[Topic] = []
    notes: list[str] = []
    for qid in sorted(qrels):
        full = qrels[qid]
        if not any(is_relevant(g, relevance_level) for g in full.values()):
            continue
        pool = adaptive.TopicPool.build(_ranked_lists(runs, qid, depth), depth)
        if not len(pool):
            notes.append(f"topic {qid}: no run retrieved a document; left out")
            continue
        grades = noisy_grades(
            qid, pool.docnos, full, level=relevance_level, noise=noise, judges=judges, seed=seed
        )
        relevant = frozenset(d for d in pool.docnos if is_relevant(full.get(d, 0), relevance_level))
        topics.append(Topic(qid, pool, grades, relevant))
    if not topics:
        raise SimulationError("no topic has both a relevant document and a pooled document")
    return topics, notes


def simulate(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Run],
    *,
    strategies: Sequence[str],
    budgets: Sequence[Budget],
    depth: int = 100,
    relevance_level: int = 1,
    noise: float = 0.0,
    judges: int = 1,
    seed: int = 0,
    groups: Mapping[str, str] | None = None,
    reusability: bool = True,
    texts: Mapping[str, str] | None = None,
) -> Simulation:
    """Replay each strategy on every topic and report each budget (see the module docstring)."""
    check_inputs(runs, noise=noise, judges=judges, depth=depth, strategies=strategies,
                 texts=texts)  # fmt: skip
    tags = [r.tag for r in runs]
    groups = dict(groups or {})
    unit = {tag: groups.get(tag, tag) for tag in tags}
    topics, notes = prepare_topics(
        qrels, runs, depth=depth, relevance_level=relevance_level, noise=noise, judges=judges,
        seed=seed,
    )  # fmt: skip
    qids = [t.qid for t in topics]
    reference_qrels = Qrels.from_dict({q: dict(qrels[q]) for q in qids})
    reference = _scores(reference_qrels, runs, relevance_level)
    pools = {t.qid: t.pool for t in topics}
    counts = {b.text: {t.qid: b.for_pool(len(t.pool)) for t in topics} for b in budgets}
    limit = {t.qid: max(c[t.qid] for c in counts.values()) for t in topics}
    pool_documents = sum(len(t.pool) for t in topics)
    relevant_in_pool = sum(len(t.truly_relevant) for t in topics)

    held_out = sorted(set(unit.values())) if reusability else []
    left_out_pools = {
        g: {
            t.qid: adaptive.TopicPool.build(
                {tag: r for tag, r in t.pool.ranked_lists.items() if unit[tag] != g}, depth
            )
            for t in topics
        }
        for g in held_out
    }

    results = []
    for name in strategies:
        orders = _judging_orders(
            name, topics, pools, limit, level=relevance_level, seed=seed, texts=texts
        )
        left_out_orders = {
            g: _judging_orders(
                name,
                topics,
                left_out_pools[g],
                limit,
                level=relevance_level,
                seed=seed,
                texts=texts,
            )
            for g in held_out
        }
        for budget in budgets:
            count = counts[budget.text]
            scores = _scores(_budget_qrels(topics, orders, count, pools), runs, relevance_level)
            agreements = [
                _agreement(label, label, reference[m], scores[m]) for label, m in MEASURES.items()
            ] + [
                _agreement(label, "MAP", reference["map"], scores[m])
                for label, m in ESTIMATES.items()
            ]
            judged = sum(len(orders[q][: count[q]]) for q in qids)
            found = sum(
                len(t.truly_relevant.intersection(orders[t.qid][: count[t.qid]])) for t in topics
            )
            errors: list[float] = []
            for g in held_out:
                left = [r for r in runs if unit[r.tag] == g]
                g_qrels = _budget_qrels(topics, left_out_orders[g], count, left_out_pools[g])
                g_scores = _scores(g_qrels, left, relevance_level)["map"]
                errors.extend(abs(g_scores[r.tag] - reference["map"][r.tag]) for r in left)
            results.append(
                BudgetResult(
                    strategy=name,
                    budget=budget.text,
                    judgements=judged,
                    judged_share=judged / pool_documents,
                    relevant_found=found,
                    relevant_share=found / relevant_in_pool if relevant_in_pool else math.nan,
                    rankings=tuple(agreements),
                    logo_mean_error=float(np.mean(errors)) if errors else None,
                    logo_max_error=float(np.max(errors)) if errors else None,
                )
            )
    return Simulation(
        results=tuple(results),
        topics=tuple(qids),
        runs=tuple(tags),
        depth=depth,
        pool_documents=pool_documents,
        relevant_in_pool=relevant_in_pool,
        relevant_in_qrels=sum(
            sum(is_relevant(g, relevance_level) for g in qrels[q].values()) for q in qids
        ),
        noise=noise,
        judges=judges,
        seed=seed,
        groups=groups,
        notes=tuple(notes),
    )
