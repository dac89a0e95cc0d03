"""Estimates under simulation: bias, RMSE, ranking and interval coverage of MAP estimated from
sampled judgements, per design or strategy and budget (pure; docs/methods.md section 10.5).

For every topic the universe is the depth-k pool of the runs (`simulation.prepare_topics`);
the *true* AP of a run is its AP with every pooled document judged by the simulated judge
(documents outside the pool non-relevant, the runs cut at the pool depth), and MAP its mean
over the topics. A budget is a share of each topic's pool (n_t = ceil(share N_t)).

Sampling designs (`estimators.DESIGNS`), repeated with fresh samples:
  uniform     a simple random sample of n_t documents;
  stratified  strata by best rank (bounds 10, 30, 100), sizes proportional to N_s times the
              rates 1, 0.4, 0.1 (`estimators.stratum_sizes`);
  prior       Poisson sampling proportional to the AP prior, n_t expected.
Adaptive strategies (`adaptive.METHODS`) with a reserved sample: a simple random sample of
ceil(share_sample n_t) documents, judged apart; the strategy (blind to it) judges until n_t
documents are judged in all, picking sampled documents for free. Estimates: `judged` (AP on
the judged documents), `infAP` (trec_eval's, as if the judged documents were a uniform sample),
and the two-strata (chosen, pi = 1; unchosen, sampled) `xinfAP` and `statAP`.

Reported per (design or strategy, budget, estimator), over runs and repeats: bias (mean of
MAP-hat - MAP), RMSE, Kendall's tau between the runs' ranking by MAP-hat and by MAP (mean over
repeats), and the coverage of the nominal interval MAP-hat -/+ z sqrt(sum_t var_t) / T from the
generalized bootstrap; for adaptive strategies also the relevant documents left unjudged
(estimated against true, summed over topics) and the coverage of their per-topic intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sp_stats

from workbench import estimators, pooling, stats
from workbench.relevance import is_relevant
from workbench.simulation import (
    Budget,
    SimulationError,
    Topic,
    check_inputs,
    judging_order,
    prepare_topics,
)
from workbench.trec import Run

ADAPTIVE_ESTIMATORS = ("judged", "infAP", "xinfAP", "statAP")
DESIGN_ESTIMATORS = {"uniform": ("xinfAP", "statAP"), "stratified": ("xinfAP", "statAP"),
                     "prior": ("statAP",)}  # fmt: skip


@dataclass(frozen=True)
class EstimateResult:
    """One estimator under one design (or strategy) and budget."""

    source: str  # a design, or an adaptive strategy with a reserved sample
    budget: str
    estimator: str
    judged_share: float  # of the pools' documents, mean over repeats
    bias: float
    rmse: float
    kendall_tau: float
    coverage: float | None  # of the nominal interval, over runs and repeats (None: no interval)
    left_estimated: float | None = None  # relevant left unjudged, summed over topics (mean)
    left_true: float | None = None
    left_coverage: float | None = None  # of the per-topic intervals


@dataclass(frozen=True)
class EstimateSimulation:
    results: tuple[EstimateResult, ...]
    topics: int
    runs: int
    depth: int
    pool_documents: int
    repeats: int
    replicates: int
    confidence: float
    sample_share: float
    seed: int
    true_map: Mapping[str, float]
    full_qrels_gap: float  # mean over runs of MAP (pool judged) - MAP (full qrels)
    notes: tuple[str, ...] = ()

    def result(self, source: str, budget: str, estimator: str) -> EstimateResult:
        return next(
            r for r in self.results
            if (r.source, r.budget, r.estimator) == (source, budget, estimator)
        )  # fmt: skip

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


@dataclass(frozen=True)
class _World:
    """What every repeat shares: the topics, labels, rankings, truth and strategy orders."""

    topics: list[Topic]
    tags: list[str]
    labels: dict[str, np.ndarray]
    rankings: dict[str, dict[str, np.ndarray]]
    truth: dict[str, dict[str, float]]
    true_map: dict[str, float]
    orders: dict[str, dict[str, list[str]]]
    depth: int


@dataclass(frozen=True)
class _Repeat:
    """One repeat of one source and budget: MAP-hat, interval half-width per estimator (run
    order of `_World.tags`), documents judged, and relevant-left sums (adaptive sources)."""

    values: dict[str, np.ndarray]
    halves: dict[str, np.ndarray]
    judged: int
    left: tuple[float, int, int]  # estimated, true, topics whose interval covers the truth


def _truth(topic: Topic, labels: np.ndarray, rankings: Mapping[str, np.ndarray]) -> dict:
    n = len(labels)
    full = estimators.srs_topic(topic.pool.docnos, np.zeros(n, int), np.ones(n, bool), labels)
    return {tag: e.values["judged"] for tag, e in estimators.estimate_topic(full, rankings).items()}


def _world(
    topics: list[Topic], tags: list[str], strategies: Sequence[str], *, level: int, seed: int,
    depth: int, texts: Mapping[str, str] | None,
) -> _World:  # fmt: skip
    labels = {t.qid: t.labels(level) for t in topics}
    empty = np.zeros(0, np.int64)
    rankings = {
        t.qid: {tag: t.pool.lists[t.pool.tags.index(tag)] if tag in t.pool.tags else empty
                for tag in tags}
        for t in topics
    }  # fmt: skip
    truth = {t.qid: _truth(t, labels[t.qid], rankings[t.qid]) for t in topics}
    true_map = {tag: float(np.mean([truth[q][tag] for q in truth])) for tag in tags}
    orders = {
        name: {
            t.qid: judging_order(name, t, t.pool, len(t.pool), level=level, seed=seed,
                                 texts=texts)
            for t in topics
        }
        for name in strategies
    }  # fmt: skip
    return _World(topics, tags, labels, rankings, truth, true_map, orders, depth)


def _one_repeat(
    world: _World, source: str, budget: Budget, rep: int, names: Sequence[str], *,
    sample_share: float, replicates: int, confidence: float, seed: int,
) -> _Repeat:  # fmt: skip
    z = float(sp_stats.norm.ppf((1 + confidence) / 2))
    per_topic: dict[str, list[list[tuple[float, float]]]] = {e: [] for e in names}
    judged, left_est, left_true, left_cov = 0, 0.0, 0, 0
    for t in world.topics:
        rng = pooling.topic_rng(seed, "estimate", source, budget.text, rep, t.qid)
        size = budget.for_pool(len(t.pool))
        labels = world.labels[t.qid]
        if source in world.orders:
            samples = _adaptive_samples(t, labels, world.orders[source][t.qid], size,
                                        sample_share, rng)  # fmt: skip
            left = estimators.relevant_left(samples["xinfAP"], confidence=confidence)
            true_left = int((labels & ~samples["xinfAP"].sampled).sum())
            left_est += 0.0 if math.isnan(left.estimate) else left.estimate
            left_true += true_left
            left_cov += left.low <= true_left <= left.high
        else:
            sample = _design_sample(source, t, labels, size, rng, world.depth)
            samples = dict.fromkeys(names, sample)
        judged += int(next(iter(samples.values())).sampled.sum())
        computed: dict[int, dict[str, estimators.RunEstimates]] = {}
        for name in names:
            sample = samples[name]
            if id(sample) not in computed:
                computed[id(sample)] = estimators.estimate_topic(
                    sample, world.rankings[t.qid], replicates=replicates, rng=rng
                )
            key = "xinfAP" if name == "infAP" else name
            per_topic[name].append(
                [(computed[id(sample)][tag].values[key], computed[id(sample)][tag].variances[key])
                 for tag in world.tags]
            )  # fmt: skip
    values, halves = {}, {}
    for name in names:
        array = np.array(per_topic[name])  # topics x runs x (value, variance)
        values[name] = array[:, :, 0].mean(axis=0)
        halves[name] = z * np.sqrt(array[:, :, 1].sum(axis=0)) / len(world.topics)
    return _Repeat(values, halves, judged, (left_est, left_true, left_cov))


def simulate_estimates(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Run],
    *,
    designs: Sequence[str] = estimators.DESIGNS,
    strategies: Sequence[str] = (),
    budgets: Sequence[Budget],
    depth: int = 100,
    sample_share: float = 0.2,
    repeats: int = 5,
    replicates: int = 100,
    confidence: float = 0.95,
    relevance_level: int = 1,
    seed: int = 0,
    texts: Mapping[str, str] | None = None,
) -> EstimateSimulation:
    """Estimate every run's MAP from `repeats` samples per design (and strategy) and budget."""
    check_inputs(runs, depth=depth, strategies=strategies, texts=texts)
    for name in designs:
        if name not in estimators.DESIGNS:
            raise SimulationError(
                f"unknown design {name!r}; expected one of {', '.join(estimators.DESIGNS)}"
            )
    if strategies and not 0 < sample_share < 1:
        raise SimulationError(f"the sample share must be in (0, 1); got {sample_share}")
    if repeats < 1 or replicates < 2:
        raise SimulationError("need at least 1 repeat and 2 bootstrap replicates")
    topics, notes = prepare_topics(qrels, runs, depth=depth, relevance_level=relevance_level,
                                   seed=seed)  # fmt: skip
    tags = sorted(r.tag for r in runs)
    world = _world(topics, tags, strategies, level=relevance_level, seed=seed, depth=depth,
                   texts=texts)  # fmt: skip
    true = np.array([world.true_map[tag] for tag in tags])
    pool_documents = sum(len(t.pool) for t in topics)
    results: list[EstimateResult] = []
    for source in [*designs, *strategies]:
        names = ADAPTIVE_ESTIMATORS if source in strategies else DESIGN_ESTIMATORS[source]
        for budget in budgets:
            done = [
                _one_repeat(world, source, budget, rep, names, sample_share=sample_share,
                            replicates=replicates, confidence=confidence, seed=seed)
                for rep in range(repeats)
            ]  # fmt: skip
            for name in names:
                errors = np.concatenate([r.values[name] - true for r in done])
                covered = np.concatenate([np.abs(r.values[name] - true) <= r.halves[name]
                                          for r in done])  # fmt: skip
                tau = np.mean([stats.kendall_tau(true, r.values[name]) for r in done])
                left = (
                    (float(np.mean([r.left[0] for r in done])),
                     float(np.mean([r.left[1] for r in done])),
                     float(np.mean([r.left[2] for r in done])) / len(topics))
                    if source in strategies else (None, None, None)
                )  # fmt: skip
                results.append(
                    EstimateResult(
                        source, budget.text, name,
                        float(np.mean([r.judged for r in done])) / pool_documents,
                        float(errors.mean()), float(np.sqrt((errors**2).mean())), float(tau),
                        None if name == "judged" else float(covered.mean()), *left,
                    )
                )  # fmt: skip
    return EstimateSimulation(
        tuple(results), len(topics), len(tags), depth, pool_documents, repeats, replicates,
        confidence, sample_share, seed, world.true_map,
        _full_qrels_gap(qrels, topics, world.truth, world.labels, relevance_level), tuple(notes),
    )  # fmt: skip


def _design_sample(
    design: str, topic: Topic, labels: np.ndarray, size: int, rng: np.random.Generator,
    depth: int,
) -> estimators.SampledTopic:  # fmt: skip
    """One sample of `size` (expected, for prior) documents of the topic's pool."""
    docnos, n = topic.pool.docnos, len(topic.pool)
    if design == "uniform":
        sampled = estimators.draw_srs(np.zeros(n, int), [size], rng)
        return estimators.srs_topic(docnos, np.zeros(n, int), sampled, labels)
    if design == "stratified":
        best = np.full(n, depth + 1)
        for lst in topic.pool.lists:
            np.minimum.at(best, lst, np.arange(1, len(lst) + 1))
        strata = estimators.best_rank_strata(best, estimators.DEFAULT_STRATA)
        counts = np.bincount(strata, minlength=len(estimators.DEFAULT_STRATA))
        sizes = estimators.stratum_sizes(counts, estimators.DEFAULT_RATES, size)
        sampled = estimators.draw_srs(strata, sizes, rng)
        return estimators.srs_topic(docnos, strata, sampled, labels)
    prior = estimators.ap_prior(topic.pool.lists, n, depth)
    inclusion = estimators.proportional_inclusion(prior, size)
    sampled = estimators.draw_poisson(inclusion, rng)
    return estimators.SampledTopic(docnos, np.zeros(n, int), inclusion, sampled,
                                   labels & sampled, stratified=False)  # fmt: skip


def chosen_within(order: Sequence[int], sample: np.ndarray, paid: int) -> np.ndarray:
    """The strategy's choices (mask) when it may judge `paid` documents outside the sample:
    its order up to the paid-th document not in the sample (sampled ones on the way free)."""
    chosen = np.zeros(len(sample), dtype=bool)
    spent = 0
    for i in order:
        if spent >= paid and not sample[i]:
            break
        chosen[i] = True
        spent += not sample[i]
    return chosen


def _adaptive_samples(
    topic: Topic, labels: np.ndarray, order: Sequence[str], size: int, share: float,
    rng: np.random.Generator,
) -> dict[str, estimators.SampledTopic]:  # fmt: skip
    """The adaptive judging of `size` documents with a reserved sample, as each estimator
    reads it: two strata (chosen, unchosen) or, for trec_eval's infAP, one."""
    n = len(topic.pool)
    reserved = min(estimators.reserved_sample_size(size, share), n)
    sample = estimators.draw_srs(np.zeros(n, int), [reserved], rng)
    chosen = chosen_within([topic.pool.at[d] for d in order], sample, size - reserved)
    judged = chosen | sample
    two = estimators.srs_topic(topic.pool.docnos, (~chosen).astype(int), judged, labels)
    one = estimators.srs_topic(topic.pool.docnos, np.zeros(n, int), judged, labels)
    return {"judged": one, "infAP": one, "xinfAP": two, "statAP": two}


def _full_qrels_gap(
    qrels: Mapping[str, Mapping[str, int]],
    topics: Sequence[Topic],
    truth: Mapping[str, Mapping[str, float]],
    labels: Mapping[str, np.ndarray],
    level: int,
) -> float:
    """Mean over runs of MAP with the pool judged minus MAP under the full qrels: a run's AP
    under the full qrels is its pool AP times R_pool / R_full (the same relevant documents
    retrieved, more relevant in all), with the judge reading the full qrels' labels."""
    tags = next(iter(truth.values())).keys()
    gaps = []
    for tag in tags:
        gap = 0.0
        for t in topics:
            r_full = sum(is_relevant(g, level) for g in qrels[t.qid].values())
            gap += truth[t.qid][tag] * (1 - labels[t.qid].sum() / r_full)
        gaps.append(gap / len(topics))
    return float(np.mean(gaps))
