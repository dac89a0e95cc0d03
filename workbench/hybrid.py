"""Hybrid human-machine judging designs: pure functions (numpy only).

Machine first, humans on a sample (`draw_sample`, `SAMPLE_DESIGNS`): the machine labels a
pool; humans judge, per topic, a sample of `share` of its documents chosen by a declared
design, every document with a known inclusion probability pi_i > 0 so that the machine's error
over the whole pool is estimated without bias from the sample (`estimate_error`):

- "uniform": simple random sampling without replacement, n_t = ceil(share N_t) per topic,
  pi = n_t / N_t;
- "stratified": strata are the machine's grades within a topic, the topic's n_t split equally
  between them (a stratum smaller than its part is taken whole, the rest shared by the
  others), pi = n_h / N_h;
- "positives": the same strata, allocated from the highest grade down: each stratum at or
  above the relevance level is taken whole while the budget lasts, less a reserve of 10 % of
  n_t (at least one document) shared equally by the strata below the level, so that the
  documents the machine calls not relevant are sampled too and its misses stay estimable
  (our design: verifying the machine's positives removes its false positives, the error that
  moves rankings most);
- "uncertain": sampling proportional to the machine's uncertainty u_i = 1 - p_i(grade) + 0.01
  (p from the endpoint's token probabilities; the floor keeps every pi > 0), n_t documents per
  topic by systematic PPS over a seeded random order, pi_i = min(1, n_t u_i / sum u), capped
  units taken whole and the rest recomputed (Sarndal, Swensson & Wretman 1992, sec. 3.6;
  the "least certain" documents are the likeliest, not the only ones: our reading, so that the
  error estimate stays unbiased).

- "verify": not a probability sample but a design for the qrels: humans judge the
  best-ranked half of n_t (by the documents' best rank in the runs), then the documents the
  machine calls relevant among the rest, best-ranked first, then (budget left) the next
  best-ranked ones, n_t in all; the machine's labels fill the other holes (our design: the
  top ranks decide a ranking's measures, and a machine's false positives move rankings more
  than its misses). Its documents have pi = 1
  and the others pi = 0, so it gives no error estimate.

Documents the machine could not judge, and (by default) documents flagged as suspicious
(instructions to the judge, keyword stuffing), are always in the sample (pi = 1) and count
against the topic's n_t.

Humans first, the machine fills the holes; and the machine-first qrels: `hybrid_labels`
takes the human label where there is one, else the machine's, and records each label's
source. Disagreement review: `disagreements` lists the documents where the machine and the
first human differ (relevant or not at the campaign's level, or in grade).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from workbench.relevance import is_relevant

Key = tuple[str, str]  # (qid, docno)
SAMPLE_DESIGNS: dict[str, str] = {
    "uniform": "a simple random sample of each topic's documents",
    "stratified": "each topic's documents stratified by the machine's grade, equal allocation",
    "positives": "the machine's relevant documents first (strata by grade, highest first)",
    "uncertain": "probability proportional to the machine's uncertainty (token probabilities)",
    "verify": "the best-ranked half of the budget, then the machine's relevant documents down "
    "the ranks (not a probability sample)",
}
PROBABILITY_DESIGNS = ("uniform", "stratified", "positives", "uncertain")
REVIEW_ON: dict[str, str] = {
    "relevance": "relevant or not at the campaign's level",
    "grade": "any difference of grade",
}
UNCERTAINTY_FLOOR = 0.01
POSITIVES_RESERVE = 0.1


class DesignError(ValueError):
    """A design that cannot be drawn (unknown, no certainty, bad share)."""


@dataclass(frozen=True)
class Sampled:
    """A pooled document: whether it is in the human sample, its inclusion probability and
    its stratum (the machine's grade; None when it could not judge)."""

    key: Key
    sampled: bool
    inclusion_prob: float
    stratum: int | None


def _by_topic(keys: Iterable[Key]) -> dict[str, list[Key]]:
    topics: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(keys):
        topics[key[0]].append(key)
    return topics


def _equal_allocation(sizes: list[int], n: int) -> list[int]:
    """n split as equally as possible over strata of these sizes, none above its size."""
    taken = [0] * len(sizes)
    left = n
    open_ = [i for i, size in enumerate(sizes) if size > 0]
    while left > 0 and open_:
        part = max(1, left // len(open_))
        for i in list(open_):
            give = min(part, sizes[i] - taken[i], left)
            taken[i] += give
            left -= give
            if taken[i] == sizes[i]:
                open_.remove(i)
            if left == 0:
                break
    return taken


def _top_down_allocation(grades: list[int], sizes: list[int], n: int, level: int) -> list[int]:
    """The "positives" allocation (grades ascending, as `sizes`): strata at or above `level`
    whole from the highest down, less a reserve for those below, which share the rest."""
    below = [i for i, g in enumerate(grades) if not is_relevant(g, level)]
    reserve = min(n, max(1, math.ceil(POSITIVES_RESERVE * n))) if below else 0
    taken = [0] * len(sizes)
    left = n - reserve
    for i in sorted(set(range(len(grades))) - set(below), key=lambda i: -grades[i]):
        taken[i] = min(sizes[i], left)
        left -= taken[i]
    for i, n_i in zip(below, _equal_allocation([sizes[i] for i in below], left + reserve),
                      strict=True):  # fmt: skip
        taken[i] = n_i
    return taken


def _pps_probabilities(weights: np.ndarray, n: int) -> np.ndarray:
    """pi_i = min(1, n w_i / sum w) with capped units taken whole and the rest recomputed."""
    pi = np.zeros(len(weights))
    free = np.ones(len(weights), dtype=bool)
    left = n
    while left > 0 and free.any():
        share = left * weights[free] / weights[free].sum()
        if (share < 1).all():
            pi[free] = share
            break
        capped = np.flatnonzero(free)[share >= 1]
        pi[capped] = 1.0
        free[capped] = False
        left -= len(capped)
    return pi


def _systematic(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Systematic PPS: a seeded random order, one start in [0, 1), every unit crossing an
    integer taken; realises exactly round(sum pi) units with probabilities pi."""
    order = rng.permutation(len(pi))
    cumulative = np.cumsum(pi[order])
    start = rng.random()
    points = start + np.arange(math.floor(cumulative[-1] + 1e-9 - start) + 1)
    chosen = np.zeros(len(pi), dtype=bool)
    previous = np.concatenate([[0.0], cumulative[:-1]])
    for point in points:
        hit = np.flatnonzero((previous <= point) & (point < cumulative))
        if hit.size:
            chosen[order[hit[0]]] = True
    chosen[pi >= 1 - 1e-12] = True
    return chosen


def draw_sample(
    pooled: Collection[Key],
    machine: Mapping[Key, int],
    *,
    design: str,
    share: float,
    seed: int = 0,
    certainty: Mapping[Key, float] | None = None,
    always: Collection[Key] = (),
    level: int = 1,
    ranks: Mapping[Key, int] | None = None,
) -> list[Sampled]:
    """Every pooled document with its place in the human sample (see the module)."""
    if design not in SAMPLE_DESIGNS:
        raise DesignError(f"unknown design {design!r}; expected {', '.join(SAMPLE_DESIGNS)}")
    if not 0 < share <= 1:
        raise DesignError(f"share: expected a number in (0, 1], got {share}")
    certainty = certainty or {}
    if design == "verify" and ranks is None:
        raise DesignError("the 'verify' design needs the documents' best ranks")
    if design == "uncertain" and not any(key in certainty for key in machine):
        raise DesignError(
            "the 'uncertain' design needs the machine's token probabilities, and this judge "
            "has none (its endpoint returned no log-probabilities): choose uniform or "
            "stratified"
        )
    rng = np.random.default_rng(seed)
    out: list[Sampled] = []
    for keys in _by_topic(pooled).values():
        n = min(len(keys), math.ceil(share * len(keys) - 1e-9))
        forced = [k for k in keys if k not in machine or k in always]
        rest = [k for k in keys if k not in set(forced)]
        n_rest = max(0, n - len(forced))
        pi: dict[Key, float] = {k: 1.0 for k in forced}
        chosen: set[Key] = set(forced)
        if design == "verify":
            assert ranks is not None
            by_rank = sorted(rest, key=lambda k: (ranks.get(k, 0), k[1]))
            top = by_rank[: n_rest // 2]
            positives = [k for k in by_rank[n_rest // 2 :] if is_relevant(machine[k], level)]
            verified = [*top, *positives[: n_rest - len(top)]]
            taken = set(verified)
            verified += [k for k in by_rank if k not in taken][: n_rest - len(verified)]
            chosen |= set(verified)
            pi.update({k: float(k in chosen) for k in rest})
        elif design == "uniform":
            picked = rng.choice(len(rest), size=min(n_rest, len(rest)), replace=False)
            chosen |= {rest[i] for i in picked}
            pi.update({k: (n_rest / len(rest) if rest else 0.0) for k in rest})
        elif design in ("stratified", "positives"):
            strata: dict[int, list[Key]] = defaultdict(list)
            for k in rest:
                strata[machine[k]].append(k)
            grades = sorted(strata)
            sizes = [len(strata[g]) for g in grades]
            if design == "stratified":
                allocation = _equal_allocation(sizes, n_rest)
            else:
                allocation = _top_down_allocation(grades, sizes, n_rest, level)
            for grade, n_h in zip(grades, allocation, strict=True):
                members = strata[grade]
                picked = rng.choice(len(members), size=n_h, replace=False)
                chosen |= {members[i] for i in picked}
                pi.update({k: n_h / len(members) for k in members})
        else:
            u = np.array([1.0 - certainty.get(k, 0.0) + UNCERTAINTY_FLOOR for k in rest])
            if rest and n_rest:
                probabilities = _pps_probabilities(u, n_rest)
                hits = _systematic(probabilities, rng)
            else:
                probabilities, hits = np.zeros(len(rest)), np.zeros(len(rest), dtype=bool)
            chosen |= {k for k, hit in zip(rest, hits, strict=True) if hit}
            pi.update({k: float(p) for k, p in zip(rest, probabilities, strict=True)})
        out.extend(Sampled(k, k in chosen, pi[k], machine.get(k)) for k in keys)
    return out


# -------------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class ErrorEstimate:
    """The machine's error over the whole pool, estimated from the human sample
    (Horvitz-Thompson): the disagreement rate at the relevance level with a normal 95 %
    interval, and the estimated confusion counts (human grade x machine grade). The variance
    is that of stratified simple random sampling, sum_h N_h^2 (1 - n_h/N_h) s_h^2 / n_h over
    the strata (topic for "uniform"; topic and machine grade for "stratified" and
    "positives"), and for "uncertain" the with-replacement (Hansen-Hurwitz) approximation
    within each topic (Sarndal, Swensson & Wretman 1992, sec. 2.9 and 3.7); units taken
    with certainty (pi = 1) add none. A stratum's share s_h^2 is p~(1 - p~) with p~ = (sum y +
    1)/(n_h + 2) (Agresti & Coull 1998), so that a small stratum whose sampled documents all
    agree does not claim no variance (our choice; the interval stays approximate where strata
    hold few sampled documents)."""

    pooled: int  # documents that could be sampled (pi > 0): what the estimate is about
    sampled: int
    uncovered: int  # documents that could not (pi = 0): the estimate says nothing of them
    error_rate: float
    low: float
    high: float
    confusion: dict[tuple[int, int], float]
    false_positive_rate: float  # estimated share of pooled documents machine-relevant, human not
    false_negative_rate: float


def estimate_error(
    sample: Iterable[Sampled],
    human: Mapping[Key, int],
    machine: Mapping[Key, int],
    *,
    level: int,
    design: str = "uniform",
) -> ErrorEstimate:
    """See ErrorEstimate. Documents the design left no chance (pi = 0: a stratum allocated
    nothing, the "verify" design) are outside the estimate and counted as uncovered. Only
    sampled documents with both labels enter; a sampled document
    left without a human label is treated as not sampled (its pi stays in the design, so the
    estimate is of the documents humans did judge: say so when there are such)."""
    everything = list(sample)
    rows = [r for r in everything if r.inclusion_prob > 0]
    uncovered = len(everything) - len(rows)
    pooled = len(rows)
    used = [r for r in rows if r.sampled and r.key in human and r.key in machine]
    if not used or pooled == 0:
        nan = float("nan")
        return ErrorEstimate(pooled, len(used), uncovered, nan, nan, nan, {}, nan, nan)
    weight = np.array([1.0 / r.inclusion_prob for r in used])
    h_rel = np.array([is_relevant(human[r.key], level) for r in used])
    m_rel = np.array([is_relevant(machine[r.key], level) for r in used])
    wrong = (h_rel != m_rel).astype(float)
    rate = float((weight * wrong).sum() / pooled)
    variance = _variance(rows, used, wrong, design) / pooled**2
    half = 1.959963984540054 * math.sqrt(variance)
    confusion: dict[tuple[int, int], float] = defaultdict(float)
    for r, w in zip(used, weight, strict=True):
        confusion[(human[r.key], machine[r.key])] += float(w)
    fp = float((weight * (m_rel & ~h_rel)).sum() / pooled)
    fn = float((weight * (~m_rel & h_rel)).sum() / pooled)
    return ErrorEstimate(
        pooled, len(used), uncovered, rate, max(0.0, rate - half), min(1.0, rate + half),
        dict(sorted(confusion.items())), fp, fn,
    )  # fmt: skip


def _variance(rows: list[Sampled], used: list[Sampled], y: np.ndarray, design: str) -> float:
    """The estimated variance of the HT total of y (see ErrorEstimate)."""

    def stratum(r: Sampled) -> tuple[str, int | None]:
        return (r.key[0], r.stratum if design in ("stratified", "positives") else None)

    population: dict[tuple[str, int | None], int] = defaultdict(int)
    for r in rows:
        if r.inclusion_prob < 1:
            population[stratum(r)] += 1
    values: dict[tuple[str, int | None], list[tuple[float, float]]] = defaultdict(list)
    for r, value in zip(used, y, strict=True):
        if r.inclusion_prob < 1:
            values[stratum(r)].append((float(value), r.inclusion_prob))
    total = 0.0
    for h, pairs in values.items():
        n = len(pairs)
        if design == "uncertain":
            if n < 2:
                continue
            z = np.array([v / p for v, p in pairs])
            total += n / (n - 1) * float(((z - z.mean()) ** 2).sum())
        else:
            big_n = population[h]
            share = (sum(v for v, _ in pairs) + 1) / (n + 2)  # Agresti-Coull: never 0
            total += big_n**2 * (1 - n / big_n) * share * (1 - share) / n
    return total


# ---------------------------------------------------------------------------- compositions


@dataclass(frozen=True)
class HybridLabels:
    """Labels with their source ("human" or the machine judge's name) and the documents of the
    universe left without any label."""

    labels: dict[Key, int]
    sources: dict[Key, str]
    missing: tuple[Key, ...]

    def count(self, source: str) -> int:
        return sum(1 for s in self.sources.values() if s == source)


def hybrid_labels(
    human: Mapping[Key, int], machine: Mapping[Key, int], universe: Iterable[Key], judge: str
) -> HybridLabels:
    """The human label where there is one, else the machine's, over `universe` and every
    human-labelled document."""
    keys = set(universe) | set(human)
    labels: dict[Key, int] = {}
    sources: dict[Key, str] = {}
    missing = []
    for key in sorted(keys):
        if key in human:
            labels[key], sources[key] = human[key], "human"
        elif key in machine:
            labels[key], sources[key] = machine[key], judge
        else:
            missing.append(key)
    return HybridLabels(labels, sources, tuple(missing))


def disagreements(
    first_human: Mapping[Key, int], machine: Mapping[Key, int], *, level: int, on: str
) -> list[Key]:
    """Documents both labelled where they differ: in relevance at `level`, or in grade."""
    if on not in REVIEW_ON:
        raise DesignError(f"unknown review rule {on!r}; expected {', '.join(REVIEW_ON)}")
    out = []
    for key in sorted(set(first_human) & set(machine)):
        h, m = first_human[key], machine[key]
        differ = is_relevant(h, level) != is_relevant(m, level) if on == "relevance" else h != m
        if differ:
            out.append(key)
    return out
