"""Stopping rules under simulation: recall reached and judgements used per rule (pure;
docs/methods.md section 11.3).

For every topic the universe is the depth-k pool of the runs (`simulation.prepare_topics`) and
recall is relative to it: relevant judged / relevant in the pool. A strategy judges the pool
one document at a time, as the live adaptive pools do with batches of one; a rule that needs a
reserved sample (`stopping.RULES`) first has a simple random sample of ceil(share N_t) of the
pool judged (the strategy, blind to it, picks its documents for free later). The rule is
consulted every `check_every` judgements after that; when it says stop, the topic's judging
ends (a topic it never stops is judged in full).

Reported per (strategy, rule): topics, the share of them whose recall reached the target,
mean and lowest recall, judgements used in all and as a share of the pools' documents, i.e.
the saving against judging the depth-k pool in full.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from workbench import estimators, pooling, stopping
from workbench.simulation import SimulationError, Topic, check_inputs, judging_order, prepare_topics
from workbench.trec import Run


@dataclass(frozen=True)
class TopicOutcome:
    qid: str
    judgements: int
    pool_size: int
    relevant_found: int
    relevant: int
    stopped: bool  # by the rule (False: the pool ran out first)

    @property
    def recall(self) -> float:
        return self.relevant_found / self.relevant if self.relevant else 1.0


@dataclass(frozen=True)
class RuleResult:
    strategy: str
    rule: str
    outcomes: tuple[TopicOutcome, ...]
    target: float

    @property
    def reached(self) -> float:
        """Share of the topics whose recall reached the target."""
        return float(np.mean([o.recall >= self.target for o in self.outcomes]))

    @property
    def mean_recall(self) -> float:
        return float(np.mean([o.recall for o in self.outcomes]))

    @property
    def min_recall(self) -> float:
        return float(min(o.recall for o in self.outcomes))

    @property
    def judgements(self) -> int:
        return sum(o.judgements for o in self.outcomes)

    @property
    def judged_share(self) -> float:
        return self.judgements / sum(o.pool_size for o in self.outcomes)


@dataclass(frozen=True)
class StoppingSimulation:
    results: tuple[RuleResult, ...]
    topics: int
    runs: int
    depth: int
    pool_documents: int
    target: float
    confidence: float
    sample_share: float
    check_every: int
    seed: int
    notes: tuple[str, ...] = ()

    def result(self, strategy: str, rule: str) -> RuleResult:
        return next(r for r in self.results if (r.strategy, r.rule) == (strategy, rule))

    def to_dict(self) -> dict:
        rows = [
            {"strategy": r.strategy, "rule": r.rule, "reached": r.reached,
             "mean_recall": r.mean_recall, "min_recall": r.min_recall,
             "judgements": r.judgements, "judged_share": r.judged_share,
             "topics": [asdict(o) for o in r.outcomes]}
            for r in self.results
        ]  # fmt: skip
        summary = {k: v for k, v in asdict(self).items() if k != "results"}
        return {**summary, "results": rows}


def run_topic(
    rule: str,
    topic: Topic,
    labels: np.ndarray,
    order: Sequence[str],
    *,
    target: float,
    confidence: float,
    sample_share: float,
    check_every: int,
    rng: np.random.Generator,
) -> TopicOutcome:
    """Judge one topic under `rule`: the reserved sample first (when the rule needs one),
    then the strategy's order, consulting the rule every `check_every` judgements."""
    n = len(topic.pool)
    needs_sample = stopping.get_rule(rule).needs_sample
    reserved = min(estimators.reserved_sample_size(n, sample_share), n) if needs_sample else 0
    sample = estimators.draw_srs(np.zeros(n, int), [reserved], rng)
    judged_labels = [bool(x) for x in labels[sample]]
    chosen = np.zeros(n, dtype=bool)
    relevant_total = int(labels.sum())
    since_check = check_every  # consult the rule before the first strategy judgement too
    for docno in order:
        if since_check >= check_every:
            since_check = 0
            progress = stopping.progress(
                judged_labels,
                relevant=labels,
                judged=sample | chosen,
                chosen=chosen,
                sample=sample if needs_sample else None,
            )
            if stopping.decide(rule, progress, target=target, confidence=confidence).stop:
                return _outcome(topic, judged_labels, relevant_total, stopped=True)
        i = topic.pool.at[docno]
        chosen[i] = True
        if not sample[i]:
            judged_labels.append(bool(labels[i]))
            since_check += 1
    return _outcome(topic, judged_labels, relevant_total, stopped=False)


def _outcome(topic: Topic, judged: list[bool], relevant: int, *, stopped: bool) -> TopicOutcome:
    return TopicOutcome(topic.qid, len(judged), len(topic.pool), int(sum(judged)), relevant,
                        stopped)  # fmt: skip


def simulate_stopping(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Run],
    *,
    strategies: Sequence[str],
    rules: Sequence[str] = tuple(stopping.RULES),
    depth: int = 100,
    target: float = stopping.DEFAULT_TARGET,
    confidence: float = stopping.DEFAULT_CONFIDENCE,
    sample_share: float = 0.1,
    check_every: int = 5,
    relevance_level: int = 1,
    seed: int = 0,
    texts: Mapping[str, str] | None = None,
) -> StoppingSimulation:
    """Judge every topic with each strategy under each rule; see the module docstring."""
    check_inputs(runs, depth=depth, strategies=strategies, texts=texts)
    stopping.check_target(target, confidence)
    for name in rules:
        stopping.get_rule(name)
    if not 0 < sample_share < 1:
        raise SimulationError(f"the sample share must be in (0, 1); got {sample_share}")
    if check_every < 1:
        raise SimulationError(f"check_every must be a positive integer; got {check_every}")
    topics, notes = prepare_topics(qrels, runs, depth=depth, relevance_level=relevance_level,
                                   seed=seed)  # fmt: skip
    labels = {t.qid: t.labels(relevance_level) for t in topics}
    kept = [t for t in topics if labels[t.qid].any()]
    notes += [f"topic {t.qid}: no relevant document in the pool; left out"
              for t in topics if not labels[t.qid].any()]  # fmt: skip
    results = []
    for strategy in strategies:
        orders = {
            t.qid: judging_order(strategy, t, t.pool, len(t.pool), level=relevance_level,
                                 seed=seed, texts=texts)
            for t in kept
        }  # fmt: skip
        for rule in rules:
            outcomes = tuple(
                run_topic(rule, t, labels[t.qid], orders[t.qid], target=target,
                          confidence=confidence, sample_share=sample_share,
                          check_every=check_every,
                          rng=pooling.topic_rng(seed, "reserved", t.qid))
                for t in kept
            )  # fmt: skip
            results.append(RuleResult(strategy, rule, outcomes, target))
    return StoppingSimulation(
        tuple(results), len(kept), len(runs), depth, sum(len(t.pool) for t in kept), target,
        confidence, sample_share, check_every, seed, tuple(notes),
    )  # fmt: skip
