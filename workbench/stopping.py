"""When to stop judging a topic: stopping rules of technology-assisted review (pure;
docs/methods.md section 11).

A topic's `Progress` is what its judging has seen: every judged document once, in judging
order (a reserved sample first, when the pool has one), and for a pool with a reserved sample
(`workbench.adaptive`), which of the sample's documents the strategy has chosen. Recall is
relative to the topic's pool: relevant judged / relevant in the pool. Every rule gives a
`Verdict`: stop or go on, and what it can say about recall.

Rules (`RULES`), for a recall target tau and a confidence 1 - alpha:
  knee        Cormack & Grossman (SIGIR 2016): on the gain curve g(i) (relevant among the first
              i judgements), the knee is the i that lies farthest above the chord from (0, 0)
              to (s, g(s)) (our reading of their knee detection, after Satopaa et al. 2011,
              without smoothing); the slope ratio is (g(k) / k) / ((g(s) - g(k) + 1) / (s - k));
              stop when it is >= 156 - min(g(s), 150) (their threshold) and s >= 150 (our
              minimum number of judgements). No recall guarantee.
  target      Cormack & Grossman (SIGIR 2016): the relevant documents of a simple random sample
              of the pool are the targets; stop when the strategy has chosen every one of
              them. With T targets, recall falls short of tau only if every target lies among
              the first tau R relevant documents the strategy finds: probability <= tau^T, so
              T = ceil(ln alpha / ln tau) targets are needed (29 for tau = 0.9, alpha = 0.05;
              our derivation, the paper's argument); with fewer the verdict states the
              confidence 1 - tau^T it has.
  hypergeometric
              Callaghan & Muller-Hansen ("Statistical stopping criteria for automated
              screening in systematic reviews", Systematic Reviews 9:273, 2020): the last n
              judgements are taken as a random sample drawn from the N_n documents unjudged
              before them, k_n of them relevant; H0 "recall < tau" needs at least
              K_n = floor(r / tau - (r - k_n) + 1) relevant documents among those N_n
              (r = relevant judged); p_n = P(X <= k_n), X hypergeometric (N_n, K_n, n);
              stop when min_n p_n < alpha. Conservative when the strategy finds relevant
              documents faster than random; repeated looks are not corrected for.
  sample      the same test on a genuine random sample (ours): the reserved sample's m
              documents among the U documents the strategy has not chosen are a simple random
              sample of them (the strategy never saw their labels), k relevant; with c
              relevant among the chosen, recall = (c + k) / (c + K_U), H0 needs K_U >=
              floor((c + k) / tau - c) + 1; p = P(X <= k), X hypergeometric (U, K_U, m).

Per topic, the recall interval: with a reserved sample, the point estimate (c + k) / (c +
U k / m) and the exact interval from `estimators.hypergeometric_interval`; without one, the
lower bound of Callaghan & Muller-Hansen's recall frontier (the largest tau, by 0.005, whose
H0 is rejected).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.estimators import hypergeometric_interval

DEFAULT_TARGET = 0.9
DEFAULT_CONFIDENCE = 0.95
KNEE_MIN_JUDGED = 150
FRONTIER_STEP = 0.005


class StoppingError(ValueError):
    """An unknown rule, or one the topic cannot use (no reserved sample)."""


@dataclass(frozen=True)
class Progress:
    """A topic's judging so far.

    `labels`: every judged document's label once, in judging order. `pool_size`: N.
    With a reserved sample: `sample_relevant_chosen` / `sample_relevant` relevant sample
    documents the strategy has chosen / all of them; `unchosen` documents the strategy has not
    chosen (U), `sample_unchosen` and `sample_unchosen_relevant` the sample's part of U (m, k),
    `chosen_relevant` relevant documents the strategy chose (c).
    """

    pool_size: int
    labels: tuple[bool, ...]
    has_sample: bool = False
    sample_relevant: int = 0
    sample_relevant_chosen: int = 0
    unchosen: int = 0
    sample_unchosen: int = 0
    sample_unchosen_relevant: int = 0
    chosen_relevant: int = 0

    @property
    def judged(self) -> int:
        return len(self.labels)

    @property
    def relevant(self) -> int:
        return int(sum(self.labels))


def progress(
    labels: Sequence[bool],
    *,
    relevant: np.ndarray,
    judged: np.ndarray,
    chosen: np.ndarray,
    sample: np.ndarray | None,
) -> Progress:
    """A topic's `Progress` from masks over its pool's documents: `relevant` (read where
    `judged`), `chosen` by the strategy, the reserved `sample` (None: the pool has none);
    `labels` are the judged documents' labels in judging order. A chosen document not judged
    yet counts as chosen and not relevant (so recall is not overstated)."""
    known = judged & relevant
    if sample is None:
        return Progress(len(judged), tuple(labels), chosen_relevant=int((chosen & known).sum()))
    left = sample & ~chosen & judged
    return Progress(
        pool_size=len(judged),
        labels=tuple(labels),
        has_sample=True,
        sample_relevant=int((sample & known).sum()),
        sample_relevant_chosen=int((sample & chosen & known).sum()),
        unchosen=int((~chosen).sum()),
        sample_unchosen=int(left.sum()),
        sample_unchosen_relevant=int((left & relevant).sum()),
        chosen_relevant=int((chosen & known).sum()),
    )


@dataclass(frozen=True)
class Verdict:
    """A rule's decision on a topic: stop or not, and in words why."""

    rule: str
    stop: bool
    detail: str
    confidence: float | None = None  # of "recall >= target", where the rule gives one


@dataclass(frozen=True)
class RecallEstimate:
    """Recall of the judged documents within the pool: an estimate and interval (with a
    reserved sample), or a lower bound only (without)."""

    estimate: float | None
    low: float
    high: float | None
    confidence: float
    method: str

    def describe(self) -> str:
        """'0.931 (0.880-0.972 at 95 %)' or '>= 0.850 at 95 %'."""
        level = f"{100 * self.confidence:g} %"
        if self.estimate is None or self.high is None:
            return f">= {self.low:.3f} at {level}"
        return f"{self.estimate:.3f} ({self.low:.3f}-{self.high:.3f} at {level})"


# ---------------------------------------------------------------- knee


def knee_point(labels: Sequence[bool]) -> int:
    """The knee of the gain curve: argmax_i g(i) / g(s) - i / s over i = 1..s (0 when flat)."""
    s = len(labels)
    gain = np.cumsum(labels)
    if s == 0 or gain[-1] == 0:
        return 0
    i = np.arange(1, s + 1)
    return int(np.argmax(gain / gain[-1] - i / s)) + 1


def knee_rule(progress: Progress, target: float, confidence: float) -> Verdict:
    s, found = progress.judged, progress.relevant
    k = knee_point(progress.labels)
    if k == 0 or k == s:
        return Verdict("knee", False, f"no knee yet in {s} judgements")
    gain_k = int(sum(progress.labels[:k]))
    ratio = (gain_k / k) / ((found - gain_k + 1) / (s - k))
    needed = 156 - min(found, 150)
    stop = ratio >= needed and s >= KNEE_MIN_JUDGED
    return Verdict(
        "knee",
        stop,
        f"slope ratio {ratio:.1f} at the knee ({k} judged), {needed} needed"
        + ("" if s >= KNEE_MIN_JUDGED else f"; at least {KNEE_MIN_JUDGED} judgements needed"),
    )


# ---------------------------------------------------------------- target


def targets_needed(target: float, confidence: float) -> int:
    """T = ceil(ln alpha / ln tau): the targets that make P(recall < tau) <= alpha."""
    return math.ceil(math.log(1 - confidence) / math.log(target) - 1e-12)


def target_rule(progress: Progress, target: float, confidence: float) -> Verdict:
    _need_sample(progress, "target")
    t, reached = progress.sample_relevant, progress.sample_relevant_chosen
    if t == 0:
        return Verdict("target", False, "the reserved sample holds no relevant document")
    achieved = 1 - target**t
    need = targets_needed(target, confidence)
    short = "" if t >= need else f" ({need} targets needed for {100 * confidence:g} %)"
    return Verdict(
        "target",
        reached == t,
        f"{reached} of {t} targets reached: recall >= {target:g} with confidence "
        f"{100 * achieved:.0f} %{short}",
        achieved,
    )


# ---------------------------------------------------------------- hypergeometric


def hypergeometric_p(labels: Sequence[bool], pool_size: int, target: float) -> float:
    """Callaghan & Muller-Hansen's p-value of H0 'recall < target': min over n of
    P(X <= k_n), X ~ hypergeometric(N_n, K_n, n) for the last n judgements."""
    seen = len(labels)
    if seen == 0 or seen >= pool_size:
        return 0.0 if seen >= pool_size else 1.0
    r = int(sum(labels))
    n = np.arange(1, seen + 1)
    k = np.cumsum(np.asarray(labels[::-1], dtype=np.int64))  # relevant among the last n
    urn = pool_size - (seen - n)  # documents unjudged before the last n
    k_h0 = np.floor(r / target - (r - k) + 1).astype(np.int64)
    if np.any(k_h0 > urn):
        return 0.0  # so few documents remained that the target cannot have been missed
    from scipy import stats  # here, not at import: the CLI's store commands import this module

    return float(np.min(stats.hypergeom.cdf(k, urn, k_h0, n)))


def hypergeometric_rule(progress: Progress, target: float, confidence: float) -> Verdict:
    p = hypergeometric_p(progress.labels, progress.pool_size, target)
    alpha = 1 - confidence
    return Verdict(
        "hypergeometric",
        p < alpha,
        f"p = {p:.3g} for 'recall < {target:g}' ({'<' if p < alpha else '>='} {alpha:g})",
        1 - p,
    )


def sample_p(progress: Progress, target: float) -> float:
    """The exact test of H0 'recall < target' on the reserved sample's part of U."""
    c, k, m, u = (progress.chosen_relevant, progress.sample_unchosen_relevant,
                  progress.sample_unchosen, progress.unchosen)  # fmt: skip
    if u == 0:
        return 0.0
    k_h0 = math.floor((c + k) / target - c) + 1
    if k_h0 > u:
        return 0.0
    from scipy import stats

    return float(stats.hypergeom.cdf(k, u, k_h0, m)) if m else 1.0


def sample_rule(progress: Progress, target: float, confidence: float) -> Verdict:
    _need_sample(progress, "sample")
    p = sample_p(progress, target)
    alpha = 1 - confidence
    return Verdict(
        "sample",
        p < alpha,
        f"p = {p:.3g} for 'recall < {target:g}' on {progress.sample_unchosen} sampled of the "
        f"{progress.unchosen} documents not chosen",
        1 - p,
    )


def _need_sample(progress: Progress, rule: str) -> None:
    if not progress.has_sample:
        raise StoppingError(f"the {rule} rule needs a reserved sample (a sample share > 0)")


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    needs_sample: bool
    decide: Callable[[Progress, float, float], Verdict]


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule("knee", "knee method (Cormack & Grossman 2016); no recall guarantee", False,
             knee_rule),
        Rule("target", "target method (Cormack & Grossman 2016): every relevant document of "
             "the reserved sample found", True, target_rule),
        Rule("hypergeometric", "hypergeometric test (Callaghan & Muller-Hansen 2020) on the "
             "last judgements", False, hypergeometric_rule),
        Rule("sample", "hypergeometric test on the reserved sample of the unchosen documents",
             True, sample_rule),
    )
}  # fmt: skip


def get_rule(name: str) -> Rule:
    if name not in RULES:
        raise StoppingError(f"unknown stopping rule {name!r}; expected one of {', '.join(RULES)}")
    return RULES[name]


def check_target(target: float, confidence: float) -> None:
    if not 0 < target < 1:
        raise StoppingError(f"the recall target must be in (0, 1); got {target}")
    if not 0 < confidence < 1:
        raise StoppingError(f"the confidence must be in (0, 1); got {confidence}")


def decide(
    rule: str,
    progress: Progress,
    *,
    target: float = DEFAULT_TARGET,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Verdict:
    """The verdict of `rule` on the topic. A pool judged in full always stops."""
    check_target(target, confidence)
    chosen = get_rule(rule)
    if progress.judged >= progress.pool_size:
        return Verdict(rule, True, "every pooled document is judged", 1.0)
    return chosen.decide(progress, target, confidence)


# ---------------------------------------------------------------- recall


def recall_estimate(
    progress: Progress, *, confidence: float = DEFAULT_CONFIDENCE
) -> RecallEstimate:
    """Recall of the judged documents: estimate and exact interval from the reserved sample,
    or Callaghan & Muller-Hansen's lower bound without one."""
    if progress.judged >= progress.pool_size:
        return RecallEstimate(1.0, 1.0, 1.0, confidence, "every pooled document judged")
    if progress.has_sample:
        c, k = progress.chosen_relevant, progress.sample_unchosen_relevant
        found = c + k
        interval = hypergeometric_interval(
            progress.unchosen, progress.sample_unchosen, k, confidence=confidence
        )
        if math.isnan(interval.estimate):
            return RecallEstimate(None, found / (c + progress.unchosen) if found else 0.0,
                                  1.0, confidence, "no sampled document left unchosen")  # fmt: skip

        def recall(left: float) -> float:
            return found / (c + left) if c + left > 0 else 1.0

        return RecallEstimate(recall(interval.estimate), recall(interval.high),
                              recall(interval.low), confidence, interval.method)  # fmt: skip
    alpha = 1 - confidence
    grid = np.arange(1, round(1 / FRONTIER_STEP)) * FRONTIER_STEP  # 0.005 .. 0.995
    lo, hi = 0, len(grid)  # p grows with tau: the taus rejected are a prefix of the grid
    while lo < hi:
        mid = (lo + hi) // 2
        if hypergeometric_p(progress.labels, progress.pool_size, float(grid[mid])) < alpha:
            lo = mid + 1
        else:
            hi = mid
    low = float(grid[lo - 1]) if lo else 0.0
    return RecallEstimate(None, round(low, 3), None, confidence,
                          "lower bound (Callaghan & Muller-Hansen's recall frontier)")  # fmt: skip
