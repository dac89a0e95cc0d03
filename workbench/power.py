"""Statistical power and topic-set size design (pure; scipy's noncentral t and F).

Notes 002: the power of a test is the probability that it rejects a false null hypothesis,
and it grows with the number of topics. Formulas (two-sided tests at level alpha):

* Paired t-test with n topics and effect size d = delta / sigma_d (the mean difference over
  the standard deviation of the per-topic differences): with df = n - 1, noncentrality
  lambda = d sqrt(n) and c = t_{1 - alpha/2, df},
  power = P(T'(df, lambda) > c) + P(T'(df, lambda) < -c)   (statsmodels ``TTestPower``).
* Sign test with N topics that are not ties and a win probability p: the exact binomial
  power, the probability of a win count whose two-sided binomial p-value is <= alpha.
* One-way ANOVA over m systems, n topics each, minimum detectable range D (the difference
  between the best and the worst system; the others at the middle) and within-system
  variance sigma^2: lambda = n D^2 / (2 sigma^2), power = P(F'(m - 1, m(n - 1), lambda) >
  F_{1 - alpha}(m - 1, m(n - 1)))   (statsmodels ``FTestAnovaPower`` with Cohen's
  f^2 = D^2 / (2 m sigma^2) and nobs = m n).

Topic-set size design (Sakai, "Topic set size design", Information Retrieval Journal 19,
2016): estimate the within-system variance sigma^2 by the residual variance V_E of a two-way
ANOVA (systems x topics) of past or pilot data; for the paired t-test the variance of a
difference is sigma_d^2 = 2 sigma^2; the topic-set size is the smallest n whose power reaches
1 - beta for the minimum difference (t-test) or minimum range (ANOVA) one wants to detect.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from workbench.lazy import optimize, stats

MAX_TOPICS = 1_000_000  # searches for a topic-set size stop here


def _check(alpha: float, power: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if power is not None and not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")


# ------------------------------------------------------------------------------ paired t-test


def paired_t_power(effect_size: float, n: int, *, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` topics at effect size d = delta/sigma_d."""
    _check(alpha)
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 topics, got {n}")
    df = n - 1
    nc = abs(effect_size) * math.sqrt(n)
    c = float(stats.t.ppf(1 - alpha / 2, df))
    upper, lower = float(stats.nct.sf(c, df, nc)), float(stats.nct.cdf(-c, df, nc))
    # scipy's nct gives NaN deep in a tail for large noncentralities: there the tail is 0
    return (0.0 if math.isnan(upper) else upper) + (0.0 if math.isnan(lower) else lower)


@lru_cache(maxsize=256)  # one value per (n, alpha, power): every pair of a report shares it
def paired_t_detectable_effect(n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest effect size d whose paired t-test power with ``n`` topics reaches ``power``."""
    _check(alpha, power)
    if paired_t_power(0.0, n, alpha=alpha) >= power:
        return 0.0
    high = 1.0
    while paired_t_power(high, n, alpha=alpha) < power:
        high *= 2
    return float(
        optimize.brentq(lambda d: paired_t_power(d, n, alpha=alpha) - power, 0.0, high, xtol=1e-12)
    )


def paired_t_topics(effect_size: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """The smallest number of topics n >= 2 whose paired t-test power at ``effect_size``
    reaches ``power`` (Sakai's t-test-based topic-set size)."""
    _check(alpha, power)
    if effect_size == 0:
        raise ValueError("no number of topics detects an effect of size 0")

    def enough(n: int) -> bool:
        return paired_t_power(effect_size, n, alpha=alpha) >= power

    return _smallest(enough, 2)


# ------------------------------------------------------------------------------ sign test


def sign_test_power(n: int, p_win: float, *, alpha: float = 0.05) -> float:
    """Exact power of the two-sided sign test on ``n`` untied topics when a topic is a win
    with probability ``p_win``: the probability of the win counts that the test rejects."""
    _check(alpha)
    if not 0 <= p_win <= 1:
        raise ValueError(f"p_win must be in [0, 1], got {p_win}")
    if n < 1:
        return 0.0
    return float(stats.binom.pmf(list(_sign_rejections(n, alpha)), n, p_win).sum())


@lru_cache(maxsize=256)
def _sign_rejections(n: int, alpha: float) -> tuple[int, ...]:
    """The win counts out of n that the two-sided sign test rejects at ``alpha``."""
    return tuple(k for k in range(n + 1) if stats.binomtest(k, n, 0.5).pvalue <= alpha)


# ------------------------------------------------------------------------------ one-way ANOVA


def anova_power(
    min_range: float, variance: float, n: int, systems: int, *, alpha: float = 0.05
) -> float:
    """Power of one-way ANOVA over ``systems`` systems with ``n`` topics each to detect a
    range ``min_range`` between the best and the worst system, within-system ``variance``."""
    _check(alpha)
    if systems < 2 or n < 2:
        raise ValueError(f"ANOVA needs at least 2 systems and 2 topics, got {systems}, {n}")
    if variance <= 0:
        raise ValueError(f"the variance must be positive, got {variance}")
    df_a, df_e = systems - 1, systems * (n - 1)
    nc = n * min_range**2 / (2 * variance)
    crit = float(stats.f.ppf(1 - alpha, df_a, df_e))
    return float(stats.ncf.sf(crit, df_a, df_e, nc))


def anova_topics(
    min_range: float, variance: float, systems: int, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """The smallest number of topics whose one-way ANOVA power reaches ``power`` (Sakai's
    ANOVA-based topic-set size)."""
    _check(alpha, power)
    if min_range == 0:
        raise ValueError("no number of topics detects a range of 0")

    def enough(n: int) -> bool:
        return anova_power(min_range, variance, n, systems, alpha=alpha) >= power

    return _smallest(enough, 2)


def _smallest(enough: Callable[[int], bool], start: int) -> int:
    """The smallest n >= start with enough(n), for a monotone predicate (doubling + bisection)."""
    if enough(start):
        return start
    low, high = start, start * 2
    while not enough(high):
        low, high = high, high * 2
        if high > MAX_TOPICS:
            raise ValueError(f"more than {MAX_TOPICS:,} topics would be needed")
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


# ------------------------------------------------------------------------------ report records


@dataclass(frozen=True)
class PairPower:
    """One pair of runs: its differences and the smallest difference its topics detect.

    No "achieved power at the observed effect": that post-hoc power is a function of the
    p-value alone and says nothing the p-value does not (Hoenig & Heisey, "The abuse of
    power", The American Statistician 55(1), 2001). The detectable difference is a design
    quantity: what these topics could detect, given the pair's variability.
    """

    first: str
    second: str
    n_topics: int
    mean_difference: float
    sd_difference: float
    effect_size: float  # d = mean / sd of the differences (nan when sd = 0)
    method: str  # how the detectable difference was computed
    detectable_difference: float  # at the requested power with these topics: d_min * sd


def pair_power(
    first: str,
    second: str,
    differences: Iterable[float],
    *,
    test: str = "t",
    alpha: float = 0.05,
    power: float = 0.8,
) -> PairPower:
    """The smallest mean difference the paired ``test`` detects with these topics at
    ``power``: d_min(n, alpha, power) * sd of the per-topic ``differences`` (first - second),
    d_min from the noncentral t (`paired_t_detectable_effect`). For the Wilcoxon, sign,
    randomization and bootstrap tests this is the t-test's figure, which ``method`` names as
    an approximation.
    """
    values = [float(v) for v in differences]
    n = len(values)
    if n < 2:
        raise ValueError(f"a paired comparison needs at least 2 topics, got {n}")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    effect = mean / sd if sd > 0 else math.nan
    method = "noncentral t" + ("" if test == "t" else f" (approximates the {test} test)")
    detectable = paired_t_detectable_effect(n, alpha=alpha, power=power) * sd
    return PairPower(first, second, n, mean, sd, effect, method, detectable)


@dataclass(frozen=True)
class TopicSetSize:
    """Topic-set size design from a residual variance (Sakai 2016)."""

    variance: float  # within-system variance sigma^2 (V_E of the two-way ANOVA)
    n_topics: int  # topics of the data the variance came from
    systems: int
    alpha: float
    power: float
    detectable_difference: float  # paired t-test with n_topics: d_min * sqrt(2 sigma^2)
    detectable_range: float  # one-way ANOVA over `systems` with n_topics
    min_difference: float | None  # the delta asked for (None: not asked)
    topics_t_test: int | None  # topics needed to detect min_difference (paired t-test)
    topics_anova: int | None  # topics needed to detect a range min_difference (ANOVA)

    def sentence(self, measure: str) -> str:
        """'With 50 topics, differences of at least 0.031 in map are detectable at 80 % power.'"""
        return (
            f"With {self.n_topics} topics, differences of at least "
            f"{self.detectable_difference:.3f} in {measure} are detectable at "
            f"{100 * self.power:g} % power (paired t-test, alpha = {self.alpha:g})."
        )


def anova_detectable_range(
    variance: float, n: int, systems: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest range between best and worst system that one-way ANOVA detects."""
    _check(alpha, power)
    sd = math.sqrt(variance)
    high = sd
    while anova_power(high, variance, n, systems, alpha=alpha) < power:
        high *= 2
    return float(
        optimize.brentq(
            lambda r: anova_power(r, variance, n, systems, alpha=alpha) - power,
            0.0,
            high,
            xtol=1e-12,
        )
    )


def topic_set_size(
    variance: float,
    *,
    n_topics: int,
    systems: int,
    alpha: float = 0.05,
    power: float = 0.8,
    min_difference: float | None = None,
) -> TopicSetSize:
    """What ``n_topics`` topics can detect, and how many a ``min_difference`` needs, from the
    within-system ``variance`` (paired t-test: sigma_d^2 = 2 variance; one-way ANOVA over
    ``systems`` with the minimum range = ``min_difference``)."""
    _check(alpha, power)
    if variance <= 0:
        raise ValueError(f"the variance must be positive, got {variance}")
    sd_difference = math.sqrt(2 * variance)
    detectable = paired_t_detectable_effect(n_topics, alpha=alpha, power=power) * sd_difference
    detectable_range = anova_detectable_range(
        variance, n_topics, max(systems, 2), alpha=alpha, power=power
    )
    needed_t = needed_anova = None
    if min_difference is not None:
        if min_difference <= 0:
            raise ValueError(f"the minimum difference must be positive, got {min_difference}")
        needed_t = paired_t_topics(min_difference / sd_difference, alpha=alpha, power=power)
        needed_anova = anova_topics(
            min_difference, variance, max(systems, 2), alpha=alpha, power=power
        )
    return TopicSetSize(
        variance,
        n_topics,
        systems,
        alpha,
        power,
        detectable,
        detectable_range,
        min_difference,
        needed_t,
        needed_anova,
    )
