"""Estimates from sampled judgements: sampling designs, statAP, xinfAP, relevant documents
left (pure; docs/methods.md section 10).

A topic's *pool* P (N documents) is the universe; a *design* gives each document an
inclusion probability pi_d; the judged *sample* S holds the documents drawn (their labels are
known). Documents outside the pool are non-relevant for every estimate here, as for trec_eval.

Designs (`SampledTopic.stratified` says which estimators apply):
  uniform     a simple random sample of n of the N documents: pi = n / N, one stratum.
  stratified  documents in strata (by best rank over the runs, as `pooling.stratified_pool`),
              a simple random sample in each: pi_s = n_s / N_s (Yilmaz, Kanoulas & Aslam,
              SIGIR 2008). A stratum judged in full has pi = 1.
  prior       Poisson sampling with pi_d proportional to the AP prior of the document's ranks
              (`ap_prior`; Aslam, Pavlu & Savell 2003, the prior of statAP in Pavlu & Aslam,
              ECIR 2007), capped at 1, the expected sample size given.
  adaptive + sample
              a judging strategy chose C (judged in full, pi = 1) while a simple random
              sample of the pool was drawn apart, unseen by the strategy: its part in
              U = P \\ C is a simple random sample of U (`workbench.adaptive`), so the design is
              two strata, C (pi = 1) and U (pi = m / |U|).

Estimators, for a run whose ranking puts document d at rank k_d (rel_d: relevant):
  R-hat       sum over sampled d of rel_d / pi_d (Horvitz-Thompson).
  statAP      (1 / R-hat) sum over sampled relevant retrieved d of
              (1 / pi_d) (1 / k_d) (1 + sum over sampled d' ranked above d of rel_d' / pi_d').
              The document's own term is 1, as it is known relevant (our form: Pavlu & Aslam
              weight it 1 / pi_d as well); with independent inclusions (Poisson sampling) the
              numerator is then exactly unbiased for sum_d rel_d prec@k_d, which the tests
              check by enumerating every sample.
  xinfAP      (1 / R-hat) sum over strata s of (1 / pi_s) sum over sampled relevant retrieved
              d of s of PC(k_d), with PC(k) = 1/k + (1/k) sum_s P_s (x_s + e) / (n_s + 2e):
              P_s the pooled documents of s above rank k, x_s / n_s the relevant / sampled
              ones among them, e = 1e-5 (Yilmaz, Kanoulas & Aslam 2008; trec_eval's infAP is
              the one-stratum case, and the tests check that they agree to 1e-12).
  judged      AP on the judged documents alone, unjudged ones non-relevant (what
              `trec_eval -m map` gives on qrels whose unjudged documents are -1 or absent).

Intervals: a generalized bootstrap (Beaumont & Patak, "On the generalized bootstrap for sample
surveys with special attention to Poisson sampling", International Statistical Review 80(1),
2012): each replicate multiplies the weight 1 / pi_d of a sampled document by a_d ~ Gamma with
mean 1 and variance 1 - pi_d (1 for pi_d = 1), and recomputes every estimate; a topic's
variance is the replicates' variance, a run's MAP interval MAP-hat -/+ z sqrt(sum_t var_t) / T
(topics sampled independently). Relevant documents left in a sampled stratum: the exact
hypergeometric interval (`hypergeometric_interval`) when one stratum is sampled, else a normal
interval from the strata's variances.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from workbench.pooling import PooledDocument, RankedLists

EPSILON = 1e-5  # xinfAP's smoothing, trec_eval's INFAP_EPSILON
DESIGNS = ("uniform", "stratified", "prior")
ESTIMATORS = ("statAP", "xinfAP", "judged")
DEFAULT_STRATA = (10, 30, 100)  # best-rank bounds of the stratified design
DEFAULT_RATES = (1.0, 0.4, 0.1)  # relative sampling rates of those strata


class EstimationError(ValueError):
    """A design or a sample the estimators cannot use."""


# ---------------------------------------------------------------- a topic's sample


@dataclass(frozen=True)
class SampledTopic:
    """One topic's pool, design and judged sample (arrays aligned with `docnos`).

    `strata[d]` numbers d's stratum from 0; `inclusion[d]` is pi_d; `sampled[d]` says whether
    d was judged; `relevant[d]` its label (False where not sampled). `stratified`: the
    sample is a simple random sample within each stratum (xinfAP applies), else Poisson.
    """

    docnos: tuple[str, ...]
    strata: np.ndarray
    inclusion: np.ndarray
    sampled: np.ndarray
    relevant: np.ndarray
    stratified: bool = True
    at: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.docnos)
        for name in ("strata", "inclusion", "sampled", "relevant"):
            if len(getattr(self, name)) != n:
                raise EstimationError(f"{name} has {len(getattr(self, name))} values for {n}")
        chosen = self.inclusion[self.sampled]
        if np.any(chosen <= 0) or np.any(chosen > 1):
            raise EstimationError("a sampled document needs an inclusion probability in (0, 1]")
        if not self.at:
            object.__setattr__(self, "at", {d: i for i, d in enumerate(self.docnos)})

    @property
    def judged_relevant(self) -> int:
        return int((self.sampled & self.relevant).sum())

    def positions(self, ranking: Sequence[str]) -> np.ndarray:
        """The pool index of each ranked document (-1 outside the pool), rank order."""
        return np.array([self.at.get(d, -1) for d in ranking], dtype=np.int64)


def srs_topic(
    docnos: Sequence[str], strata: ArrayLike, sampled: ArrayLike, relevant: ArrayLike
) -> SampledTopic:
    """A stratified (or, with one stratum, uniform) simple random sample: pi_s = n_s / N_s."""
    strata_a = np.asarray(strata, dtype=np.int64)
    sampled_a = np.asarray(sampled, dtype=bool)
    inclusion = np.ones(len(docnos))
    for s in np.unique(strata_a):
        members = strata_a == s
        inclusion[members] = sampled_a[members].sum() / members.sum()
    return SampledTopic(
        tuple(docnos), strata_a, inclusion, sampled_a, np.asarray(relevant, bool) & sampled_a
    )


# ---------------------------------------------------------------- designs


def ap_prior(lists: Sequence[np.ndarray], n_docs: int, depth: int) -> np.ndarray:
    """The AP prior of each pool document, averaged over the runs: rank i of a list of
    length Z weighs (1 / 2Z)(1 + sum_{j=i..Z} 1/j), which sums to 1 over i = 1..Z; a run that
    does not retrieve the document gives it 0. `lists[r]` holds run r's pool indices."""
    z = depth
    tail = np.cumsum(1.0 / np.arange(z, 0, -1))[::-1]  # sum_{j=i..Z} 1/j, i = 1..Z
    weights = (1 + tail) / (2 * z)
    prior = np.zeros(n_docs)
    for lst in lists:
        np.add.at(prior, lst, weights[: len(lst)])
    return prior / max(len(lists), 1)


def proportional_inclusion(weights: np.ndarray, expected: float) -> np.ndarray:
    """pi_d = min(1, c w_d) with c such that sum pi = `expected` (documents whose pi reaches 1
    are taken with certainty and the rest rescaled; Sarndal, Swensson & Wretman 1992, 3.6)."""
    weights = np.asarray(weights, dtype=float)
    if np.any(weights < 0) or not weights.sum() > 0:
        raise EstimationError("the prior needs non-negative weights, one of them positive")
    expected = min(float(expected), float((weights > 0).sum()))
    pi = np.zeros_like(weights)
    certain = np.zeros(len(weights), dtype=bool)
    while True:
        rest = ~certain & (weights > 0)
        room = expected - certain.sum()
        pi[rest] = weights[rest] * room / weights[rest].sum()
        pi[certain] = 1.0
        over = rest & (pi >= 1.0)
        if not over.any():
            return pi
        certain |= over


def best_rank_strata(best_rank: np.ndarray, bounds: Sequence[int]) -> np.ndarray:
    """Each document's stratum: the first bound >= its best rank (`pooling.stratified_pool`)."""
    return np.searchsorted(np.asarray(bounds), np.asarray(best_rank), side="left")


def stratum_sizes(counts: ArrayLike, rates: Sequence[float], budget: int) -> list[int]:
    """Sample sizes n_s proportional to N_s rate_s with sum n_s = budget (each n_s <= N_s and,
    where N_s > 0 and the budget allows, >= 1): largest remainders, capped strata refilled."""
    counts_a = np.asarray(counts, dtype=float)
    budget = min(int(budget), int(counts_a.sum()))
    sizes = np.zeros(len(counts_a), dtype=np.int64)
    weight = counts_a * np.asarray(rates, dtype=float)
    while sizes.sum() < budget:
        room = counts_a - sizes
        open_ = room > 0
        share = np.where(open_, weight, 0.0)
        if share.sum() == 0:
            share = open_.astype(float)
        left = budget - sizes.sum()
        ideal = share / share.sum() * left
        add = np.minimum(np.floor(ideal).astype(np.int64), room.astype(np.int64))
        if add.sum() == 0:  # hand out the remainders one by one, largest first
            order = np.argsort(-(ideal - np.floor(ideal)) - open_, kind="stable")
            for s in order[:left]:
                if room[s] > 0:
                    add[s] += 1
        sizes += add
    return sizes.tolist()


def reserved_sample_size(budget: int, share: float) -> int:
    """The reserved sample of an adaptive design ("adaptive + sample" above): ceil(share
    budget) documents of a topic's budget, at least 1 when share > 0, none when it is 0."""
    return max(1, math.ceil(share * budget - 1e-9)) if share > 0 else 0


def draw_srs(strata: np.ndarray, sizes: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """A simple random sample of sizes[s] documents from each stratum s (mask)."""
    sampled = np.zeros(len(strata), dtype=bool)
    for s, size in enumerate(sizes):
        members = np.flatnonzero(strata == s)
        if size:
            sampled[rng.choice(members, size=size, replace=False)] = True
    return sampled


def prior_pool(
    ranked_lists: RankedLists,
    budget: int,
    depth: int,
    rng: np.random.Generator,
    *,
    exclude: Iterable[str] = (),
) -> list[PooledDocument]:
    """The `prior` pooling strategy: a Poisson sample of the depth-`depth` universe with pi
    proportional to the AP prior (statAP's design), `budget` documents expected; every
    universe document is listed with its probability and whether it was drawn."""
    from workbench.pooling import depth_pool  # pooling imports this module

    excluded = set(exclude)
    universe = [p for p in depth_pool(ranked_lists, depth) if p.docno not in excluded]
    if not universe:
        return []
    at = {p.docno: i for i, p in enumerate(universe)}
    lists = [
        np.array([at[d] for d in r.top(depth) if d in at], dtype=np.int64)
        for _, r in sorted(ranked_lists.items())
    ]
    inclusion = proportional_inclusion(ap_prior(lists, len(universe), depth), budget)
    drawn = rng.random(len(universe)) < inclusion
    return [
        p._replace(sampled=bool(drawn[i]), inclusion_prob=float(inclusion[i]))
        for i, p in enumerate(universe)
    ]


def draw_poisson(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Poisson sampling: each document independently with its probability (mask)."""
    return rng.random(len(inclusion)) < inclusion


# ---------------------------------------------------------------- the estimators


@dataclass(frozen=True)
class RunEstimates:
    """One run on one topic: each estimator's value, and the bootstrap replicates' variance
    (nan without replicates)."""

    values: Mapping[str, float]
    variances: Mapping[str, float]


def replicate_weights(topic: SampledTopic, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(1 + replicates) x N multipliers of 1 / pi_d: row 0 all ones (the estimate itself),
    then the generalized bootstrap's Gamma(1 / (1 - pi), 1 - pi) draws (1 where pi = 1)."""
    a = np.ones((1 + replicates, len(topic.docnos)))
    uncertain = topic.sampled & (topic.inclusion < 1)
    if replicates and uncertain.any():
        scale = 1 - topic.inclusion[uncertain]
        a[1:, uncertain] = rng.gamma(1 / scale, scale, size=(replicates, int(uncertain.sum())))
    return a


def estimate_topic(
    topic: SampledTopic,
    rankings: Mapping[str, np.ndarray],
    *,
    replicates: int = 0,
    rng: np.random.Generator | None = None,
) -> dict[str, RunEstimates]:
    """statAP, xinfAP (stratified designs only) and judged-only AP of every run on the topic;
    `rankings[tag]` holds the pool index of each ranked document (-1 outside the pool)."""
    out = {}
    for tag, values in replicate_estimates(topic, rankings, replicates=replicates, rng=rng).items():
        out[tag] = RunEstimates(
            {name: float(v[0]) for name, v in values.items()},
            {
                name: float(v[1:].var(ddof=1)) if replicates > 1 else math.nan
                for name, v in values.items()
            },
        )
    return out


def replicate_estimates(
    topic: SampledTopic,
    rankings: Mapping[str, np.ndarray],
    *,
    replicates: int = 0,
    rng: np.random.Generator | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """run -> estimator -> its value (index 0) and the `replicates` bootstrap values."""
    if replicates and rng is None:
        raise EstimationError("bootstrap replicates need a random generator")
    a = replicate_weights(topic, replicates, rng or np.random.default_rng(0))
    s = topic.sampled
    rel = topic.relevant & s
    w = np.where(s, a / np.where(s, topic.inclusion, 1.0), 0.0)  # (1+B) x N, 0 if not sampled
    r_hat = (w * rel).sum(axis=1)
    strata = np.unique(topic.strata)
    judged_rel = int(rel.sum())
    out = {}
    for tag, ranking in rankings.items():
        values: dict[str, np.ndarray] = {}
        k = np.flatnonzero(ranking >= 0) + 1  # ranks of pooled documents
        docs = ranking[ranking >= 0]
        seen = np.flatnonzero(s[docs])  # positions among the pooled documents
        k_s, d_s = k[seen], docs[seen]  # sampled documents in rank order
        w_s, rel_s, a_s = w[:, d_s], rel[d_s], a[:, d_s]
        wrel = w_s * rel_s
        above = np.cumsum(wrel, axis=1) - wrel  # sampled relevant above, weighted
        values["statAP"] = _ratio((wrel / k_s * (1 + above)).sum(axis=1), r_hat)
        if topic.stratified:
            pc = np.broadcast_to(1.0 / k_s, w_s.shape).copy()
            for stratum in strata:
                in_pool = topic.strata[docs] == stratum
                pooled_above = (np.cumsum(in_pool) - in_pool)[seen]
                in_s = topic.strata[d_s] == stratum
                x_above = np.cumsum(a_s * (rel_s & in_s), axis=1) - a_s * (rel_s & in_s)
                n_above = np.cumsum(a_s * in_s, axis=1) - a_s * in_s
                pc += pooled_above / k_s * (x_above + EPSILON) / (n_above + 2 * EPSILON)
            values["xinfAP"] = _ratio((wrel * pc).sum(axis=1), r_hat)
        judged_k = k_s[rel_s]
        values["judged"] = np.full(
            len(r_hat),
            float((np.arange(1, len(judged_k) + 1) / judged_k).sum() / judged_rel)
            if judged_rel
            else 0.0,
        )
        out[tag] = values
    return out


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where nothing relevant was sampled (as trec_eval's infAP)."""
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, numerator / safe, 0.0)


# ---------------------------------------------------------------- relevant documents left


@dataclass(frozen=True)
class CountInterval:
    """An estimated count with its confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str


def hypergeometric_interval(
    population: int, sample: int, successes: int, *, confidence: float = 0.95
) -> CountInterval:
    """Successes K in a population of N from k in a simple random sample of n: estimate
    N k / n; the exact interval of the K whose two tails P(X >= k), P(X <= k) both exceed
    (1 - confidence) / 2 (the hypergeometric analogue of Clopper-Pearson)."""
    if not 0 <= successes <= sample <= population:
        raise EstimationError(
            f"need 0 <= k <= n <= N; got k={successes}, n={sample}, N={population}"
        )
    if sample == 0:
        return CountInterval(math.nan, 0.0, float(population), confidence, "no sample")
    from scipy import stats  # here, not at import: pooling imports this module (run imports)

    tail = (1 - confidence) / 2
    k_values = np.arange(successes, population - (sample - successes) + 1)
    upper_tail = stats.hypergeom.sf(successes - 1, population, k_values, sample)
    lower_tail = stats.hypergeom.cdf(successes, population, k_values, sample)
    plausible = k_values[(upper_tail > tail) & (lower_tail > tail)]
    return CountInterval(
        population * successes / sample,
        float(plausible.min()),
        float(plausible.max()),
        confidence,
        "exact hypergeometric",
    )


def relevant_left(topic: SampledTopic, *, confidence: float = 0.95) -> CountInterval:
    """Relevant documents among the unjudged ones of the pool: R-hat minus the judged relevant
    ones, with an exact interval when a single stratum is sampled, else a normal one
    (variance sum_s N_s^2 (1 - n_s / N_s) p_s (1 - p_s) / (n_s - 1))."""
    if not topic.stratified:
        raise EstimationError("relevant documents left need a stratified (or uniform) design")
    partial = []
    for stratum in np.unique(topic.strata):
        members = topic.strata == stratum
        size, n = int(members.sum()), int((members & topic.sampled).sum())
        if n < size:
            partial.append((size, n, int((members & topic.sampled & topic.relevant).sum())))
    if not partial:
        return CountInterval(0.0, 0.0, 0.0, confidence, "every document judged")
    if len(partial) == 1:
        size, n, k = partial[0]
        whole = hypergeometric_interval(size, n, k, confidence=confidence)
        return CountInterval(whole.estimate - k, whole.low - k, whole.high - k, confidence,
                             whole.method)  # fmt: skip
    estimate = variance = 0.0
    for size, n, k in partial:
        if n == 0:
            return CountInterval(math.nan, 0.0, float(sum(p[0] - p[1] for p in partial)),
                                 confidence, "a stratum has no sample")  # fmt: skip
        p = k / n
        estimate += (size - n) * p
        variance += size**2 * (1 - n / size) * p * (1 - p) / max(n - 1, 1)
    from scipy import stats

    half = float(stats.norm.ppf((1 + confidence) / 2)) * math.sqrt(variance)
    most = sum(p[0] - p[1] for p in partial)
    return CountInterval(estimate, max(0.0, estimate - half), min(float(most), estimate + half),
                         confidence, "normal (stratified)")  # fmt: skip
