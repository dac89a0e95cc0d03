"""Significance tests, multiple-comparison corrections and ranking comparisons (pure).

Paired tests compare two runs over the same topics: ``x[t]`` and ``y[t]`` are their
scores on topic t, d_t = x_t - y_t (docs/methods.md section 4). Every result names its
test so reports can say which one was used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, TypedDict

import numpy as np

from workbench import sign_flips
from workbench.lazy import stats
from workbench.studentized_range import studentized_range_isf, studentized_range_sf

Correction = Literal["holm", "bonferroni", "bh"]
CORRECTIONS: dict[str, str] = {  # the one list of corrections (CLI choices, web form)
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
}
_TIE_TOLERANCE = 1e-9  # relative: resampled statistics this close to the observed one count as ties


@dataclass(frozen=True)
class TestResult:
    """One paired test between two runs.

    ``statistic`` is the test's own statistic (t, Wilcoxon W, wins, mean difference, t*);
    wins/losses/ties count topics where x > y, x < y, x = y. ``n_resamples`` is None for
    analytic or exact tests.
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    mean_difference: float
    wins: int
    losses: int
    ties: int
    df: float | None = None
    effect_size: float | None = None
    ci: tuple[float, float] | None = None
    confidence: float = 0.95
    n_resamples: int | None = None
    method: str | None = None  # how the p-value was computed, when the test has a choice


@dataclass(frozen=True)
class Anova:
    """Two-way ANOVA without replication (systems x topics).

    ``moe`` is the margin of error t_{alpha/2, df_e} sqrt(V_E/n) of a system mean.
    """

    s_a: float
    s_b: float
    s_e: float
    df_a: int
    df_b: int
    df_e: int
    v_e: float
    f_a: float
    p_a: float
    moe: float


@dataclass(frozen=True)
class PairComparison:
    """Systems i and j (row indices, with names) compared inside a multi-system test."""

    i: int
    j: int
    name_i: str
    name_j: str
    mean_difference: float
    statistic: float
    p_value: float
    effect_size: float | None = None
    ci: tuple[float, float] | None = None


@dataclass(frozen=True)
class TukeyResult:
    """All pairwise comparisons of m systems (paired Tukey HSD)."""

    test: str
    names: tuple[str, ...]
    means: tuple[float, ...]
    pairs: tuple[PairComparison, ...]
    anova: Anova | None = None
    confidence: float = 0.95

    def pair(self, a: str, b: str) -> PairComparison:
        """The comparison of the systems named ``a`` and ``b`` (either order)."""
        for p in self.pairs:
            if {p.name_i, p.name_j} == {a, b}:
                return p
        raise KeyError(f"no comparison between {a!r} and {b!r}")


@dataclass(frozen=True)
class RankChange:
    """A run whose position differs between two rankings (1 = best)."""

    run: str
    reference_rank: int
    other_rank: int
    reference_score: float
    other_score: float

    @property
    def shift(self) -> int:
        """Positions gained (positive) or lost (negative) in the other ranking."""
        return self.reference_rank - self.other_rank


# --------------------------------------------------------------------------- paired tests


def _differences(x, y) -> np.ndarray:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"paired scores must be two 1-d arrays of one length: {x.shape}, {y.shape}"
        )
    if len(x) < 2:
        raise ValueError(f"a paired test needs at least two topics, got {len(x)}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("paired scores contain NaN: every topic needs a score from both runs")
    return x - y


class _Counts(TypedDict):
    n: int
    wins: int
    losses: int
    ties: int


def _counts(d: np.ndarray) -> _Counts:
    return {
        "n": len(d),
        "wins": int((d > 0).sum()),
        "losses": int((d < 0).sum()),
        "ties": int((d == 0).sum()),
    }


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def paired_t_test(x, y, *, confidence: float = 0.95) -> TestResult:
    """Paired t-test: t = d_bar / (s_d / sqrt(n)), df = n - 1 (scipy ``ttest_rel``).

    Effect size d_z = d_bar / s_d; interval d_bar -/+ t_{(1+confidence)/2, n-1} s_d/sqrt(n).
    """
    _check_confidence(confidence)
    d = _differences(x, y)
    n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        t, p, effect = (
            (0.0, 1.0, 0.0) if mean == 0 else (float(np.copysign(np.inf, mean)), 0.0, float("nan"))
        )
    else:
        t = mean / (sd / float(np.sqrt(n)))
        p = float(2 * stats.t.sf(abs(t), n - 1))
        effect = mean / sd
    margin = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / float(np.sqrt(n))
    return TestResult(
        "paired t-test", float(t), p, mean_difference=mean, df=n - 1, effect_size=effect,
        ci=(mean - margin, mean + margin), confidence=confidence, **_counts(d),
    )  # fmt: skip


WILCOXON_EXACT_MAX_N = 50  # untied differences: exact null distribution up to this many
WILCOXON_PERMUTATION_MAX_N = 13  # tied differences: all 2^n sign flips up to this many


def wilcoxon_method(d: np.ndarray) -> str:
    """How `wilcoxon_test` computes the p-value of the non-zero differences ``d``: 'exact'
    (untied |d|, n <= 50), 'permutation' (tied |d|, n <= 13: all 2^n sign flips) or
    'asymptotic' (normal approximation with the tie correction, no continuity correction).

    This is scipy 1.17's method='auto' written out, so that a scipy release that changes
    its default cannot change our p-values silently.
    """
    n = len(d)
    tied = len(np.unique(np.abs(d))) < n
    if not tied and n <= WILCOXON_EXACT_MAX_N:
        return "exact"
    if tied and n <= WILCOXON_PERMUTATION_MAX_N:
        return "permutation"
    return "asymptotic"


def wilcoxon_test(x, y) -> TestResult:
    """Wilcoxon signed-rank test on d_t, zero differences dropped (zero_method='wilcox');
    p = 1 when every difference is zero. The p-value method (`wilcoxon_method`) is passed
    to scipy ``wilcoxon`` explicitly (or computed as it does) and recorded in ``method``."""
    d = _differences(x, y)
    nonzero = d[d != 0]
    if not len(nonzero):
        statistic, p, method = 0.0, 1.0, "none (every difference is zero)"
    elif (method := wilcoxon_method(nonzero)) == "permutation":
        statistic, p = _wilcoxon_permutation(nonzero)
    else:
        result = stats.wilcoxon(nonzero, zero_method="wilcox", correction=False, method=method)
        statistic, p = float(result.statistic), float(result.pvalue)
    return TestResult("Wilcoxon signed-rank test", statistic, p, mean_difference=float(d.mean()),
                      method=method, **_counts(d))  # fmt: skip


def _wilcoxon_permutation(d: np.ndarray) -> tuple[float, float]:
    """(min(R+, R-), p = 2 min(#{R+* <= R+}, #{R+* >= R+}) / 2^n at most 1) over all sign
    flips: scipy's `wilcoxon(d, method=PermutationMethod(np.inf))` bit for bit (R+, R+* sums
    of midranks, exact), without its loop over the flips in Python (2 s at n = 13)."""
    ranks = stats.rankdata(np.abs(d))
    plus, minus, null = ranks[d > 0].sum(), ranks[d < 0].sum(), sign_flips.rank_sums(ranks)
    tail = int(min(np.count_nonzero(null <= plus), np.count_nonzero(null >= plus)))
    return float(min(plus, minus)), min(2 * tail / len(null), 1.0)


def binomial_p_value(wins: int, n: int) -> float:
    """Two-sided exact binomial test of ``wins`` successes in ``n`` trials at 1/2 (scipy
    ``binomtest``): the sign test's p-value."""
    return float(stats.binomtest(wins, n, 0.5).pvalue)


def sign_test(x, y) -> TestResult:
    """Sign test: two-sided binomial test of wins among wins + losses at 0.5, ties dropped
    (scipy ``binomtest``); p = 1 when every topic is a tie. Statistic = wins."""
    d = _differences(x, y)
    counts = _counts(d)
    decided = counts["wins"] + counts["losses"]
    p = binomial_p_value(counts["wins"], decided) if decided else 1.0
    return TestResult("sign test", float(counts["wins"]), p, mean_difference=float(d.mean()),
                      **counts)  # fmt: skip


RANDOMIZATION_EXACT_MAX_N = 16
"""The randomization test enumerates all 2^n sign vectors up to this many non-zero
differences, and draws B random ones above."""


def randomization_test(
    x, y, *, n_resamples: int = 10000, seed: int = 0, exact_max_n: int = RANDOMIZATION_EXACT_MAX_N
) -> TestResult:
    """Fisher's randomization (sign-flip permutation) test of the mean difference.

    Under H0 each d_t is as likely to be -d_t. The test uses |d_bar| (the result's
    ``statistic`` is d_bar itself). Topics with d_t = 0 do
    not change under a flip, so when at most ``exact_max_n`` differences are non-zero all
    2^n flips are enumerated and p = #{|sum s d| >= |sum d|}/2^n exactly; otherwise B
    random flips give p = (#{|d_bar*| >= |d_bar|} + 1)/(B + 1) (Phipson & Smyth 2010).
    "Greater or equal" allows a relative tolerance of 1e-9, so ties are not lost to
    floating-point rounding. ``n_resamples`` in the result is None when exact.
    """
    return randomization_tests(
        [(x, y)], n_resamples=n_resamples, seed=seed, exact_max_n=exact_max_n
    )[0]


@dataclass(frozen=True)
class _Flips:
    """One pair's sign-flip problem: d, its non-zero part, and the edge |sum d| - tolerance
    that a flipped sum's magnitude must reach to count."""

    d: np.ndarray
    nonzero: np.ndarray
    edge: float


def _flips(x, y) -> _Flips:
    d = _differences(x, y)
    nonzero = d[d != 0]
    tolerance = _TIE_TOLERANCE * max(np.abs(nonzero).sum(), 1e-300)
    return _Flips(d, nonzero, abs(nonzero.sum()) - tolerance)


def randomization_tests(
    pairs: Sequence[tuple[Any, Any]],
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    exact_max_n: int = RANDOMIZATION_EXACT_MAX_N,
) -> list[TestResult]:
    """`randomization_test` on each (x, y) of ``pairs``, with the same results. The pairs
    with the same number n of non-zero differences share one sign matrix S (all 2^n flips
    when n <= ``exact_max_n``, else B random ones), so their flipped sums are one matrix
    product S @ [d_1 ... d_k] instead of k (`sign_flips.flip_hits`)."""
    if not 0 <= exact_max_n <= 20:
        raise ValueError(f"exact_max_n must be in 0..20 (2^n sign flips), got {exact_max_n}")
    _check_resamples(n_resamples)
    problems = [_flips(x, y) for x, y in pairs]
    by_n: dict[int, list[int]] = {}
    for i, problem in enumerate(problems):
        by_n.setdefault(len(problem.nonzero), []).append(i)
    p_values: list[float] = [0.0] * len(problems)
    for n, members in by_n.items():
        exact = n <= exact_max_n
        signs = sign_flips.all_signs(n) if exact else sign_flips.random_signs(seed, n_resamples, n)
        hits = sign_flips.flip_hits(
            signs, [problems[i].nonzero for i in members], [problems[i].edge for i in members]
        )
        for i, count in zip(members, hits, strict=True):
            p_values[i] = count / len(signs) if exact else (count + 1) / (n_resamples + 1)
    return [_randomization_result(q, p, None if len(q.nonzero) <= exact_max_n else n_resamples)
            for q, p in zip(problems, p_values, strict=True)]  # fmt: skip


def _randomization_result(problem: _Flips, p: float, n_resamples: int | None) -> TestResult:
    d = problem.d
    return TestResult("randomization test", float(d.mean()), p, mean_difference=float(d.mean()),
                      n_resamples=n_resamples, **_counts(d))  # fmt: skip


def _t_statistics(samples: np.ndarray) -> np.ndarray:
    """Row-wise t = mean/(sd/sqrt(n)), with 0/0 -> 0 and c/0 -> +-inf."""
    n = samples.shape[-1]
    mean = samples.mean(-1)
    se = samples.std(-1, ddof=1) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    return np.where((se == 0) & (np.abs(mean) < 1e-15), 0.0, t)


def bootstrap_test(
    x, y, *, n_resamples: int = 10000, seed: int = 0, confidence: float = 0.95
) -> TestResult:
    """Studentised shift bootstrap test (Sakai, SIGIR 2006).

    z_t = d_t - d_bar (H0 holds in z); B resamples z* of n topics with replacement;
    p = (#{|t(z*)| >= |t(d)|} + 1)/(B + 1) with t(v) = v_bar/(s_v/sqrt(n)). The interval
    is the percentile bootstrap interval of d_bar from the same resamples (d* = z* + d_bar).
    """
    _check_confidence(confidence)
    _check_resamples(n_resamples)
    d = _differences(x, y)
    t_observed = float(_t_statistics(d[None, :])[0])
    z = d - d.mean()
    rng = np.random.default_rng(seed)
    hits, means = 0, []
    for start in range(0, n_resamples, 1000):
        sample = z[rng.integers(0, len(d), size=(min(1000, n_resamples - start), len(d)))]
        t_star = _t_statistics(sample)
        hits += int((np.abs(t_star) >= abs(t_observed) * (1 - _TIE_TOLERANCE)).sum())
        means.append(sample.mean(1) + d.mean())
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(np.concatenate(means), [tail, 100 - tail])
    return TestResult("bootstrap test (studentised, shift)", t_observed,
                      (hits + 1) / (n_resamples + 1), mean_difference=float(d.mean()),
                      ci=(float(low), float(high)), confidence=confidence,
                      n_resamples=n_resamples, **_counts(d))  # fmt: skip


@dataclass(frozen=True)
class PairedTest:
    """A registered paired test: its label in reports, the function, whether it
    resamples (then it takes n_resamples and seed), and, when it has one, the function
    that runs it on many (x, y) pairs at once with the same results."""

    label: str
    run: Callable[..., TestResult]
    resampling: bool = False
    many: Callable[..., list[TestResult]] | None = None


# The one list of paired tests: the CLI's choices and the web form are made from it.
PAIRED_TESTS: dict[str, PairedTest] = {
    "t": PairedTest("paired t-test", paired_t_test),
    "wilcoxon": PairedTest("Wilcoxon signed-rank test", wilcoxon_test),
    "sign": PairedTest("sign test", sign_test),
    "randomization": PairedTest(
        "randomization test", randomization_test, resampling=True, many=randomization_tests
    ),
    "bootstrap": PairedTest("bootstrap test (studentised, shift)", bootstrap_test, True),
}


# --------------------------------------------------------------------------- corrections


def adjust_p_values(p, *, method: Correction) -> np.ndarray:
    """Adjusted p-values for a family of m tests, in the input order, capped at 1.

    bonferroni: m p_i. holm (step-down): p_(i) -> max_{j<=i} (m - j + 1) p_(j).
    bh (Benjamini-Hochberg FDR): p_(i) -> min_{j>=i} m p_(j) / j.
    """
    p = np.asarray(p, dtype=float)
    if p.ndim != 1 or np.isnan(p).any() or ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must be a 1-d array of numbers in [0, 1]")
    m = len(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "bonferroni":
        adjusted = ranked * m
    elif method == "holm":
        adjusted = np.maximum.accumulate(ranked * (m - np.arange(m)))
    elif method == "bh":
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    else:
        raise ValueError(f"method must be one of {', '.join(CORRECTIONS)}, not {method!r}")
    result = np.empty(m)
    result[order] = np.minimum(adjusted, 1.0)
    return result


# --------------------------------------------------------------------------- many systems


def _score_matrix(scores, names: Sequence[str] | None) -> tuple[np.ndarray, tuple[str, ...]]:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] < 2 or s.shape[1] < 2:
        raise ValueError(f"scores must be systems x topics with at least 2 of each: {s.shape}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN: every system needs a score on every topic")
    labels = tuple(names) if names is not None else tuple(str(i) for i in range(len(s)))
    if len(labels) != len(s):
        raise ValueError(f"{len(labels)} names for {len(s)} systems")
    return s, labels


def two_way_anova(scores, *, confidence: float = 0.95) -> Anova:
    """Two-way ANOVA without replication on an m systems x n topics score matrix.

    S_A = n sum_i (x_i. - x..)^2, S_B = m sum_t (x_.t - x..)^2, S_E = S_T - S_A - S_B,
    V_E = S_E/((m-1)(n-1)), F_A = (S_A/(m-1))/V_E.
    """
    _check_confidence(confidence)
    s, _ = _score_matrix(scores, None)
    m, n = s.shape
    grand = s.mean()
    s_a = n * float(((s.mean(1) - grand) ** 2).sum())
    s_b = m * float(((s.mean(0) - grand) ** 2).sum())
    s_e = float(((s - grand) ** 2).sum()) - s_a - s_b
    df_e = (m - 1) * (n - 1)
    v_e = s_e / df_e
    f_a = (s_a / (m - 1)) / v_e if v_e > 0 else float("inf")
    p_a = float(stats.f.sf(f_a, m - 1, df_e))
    moe = float(stats.t.ppf((1 + confidence) / 2, df_e)) * np.sqrt(v_e / n)
    return Anova(s_a, s_b, s_e, m - 1, n - 1, df_e, v_e, f_a, p_a, float(moe))


def paired_tukey_hsd(
    scores, *, names: Sequence[str] | None = None, confidence: float = 0.95
) -> TukeyResult:
    """Tukey HSD for a paired (systems x topics) design, on the two-way ANOVA residual.

    q_ij = |x_i - x_j| / sqrt(V_E/n), p_ij = P(Q(m, (m-1)(n-1)) >= q_ij) (all pairs at once by
    ``studentized_range.studentized_range_sf``; q_crit by its inverse); effect size
    (x_i - x_j)/sqrt(V_E); simultaneous interval (x_i - x_j) -/+ q_crit sqrt(V_E/n).
    Unlike scipy ``tukey_hsd`` it removes the topic effect.
    """
    s, labels = _score_matrix(scores, names)
    anova = two_way_anova(s, confidence=confidence)
    m, n = s.shape
    means = s.mean(1)
    se = float(np.sqrt(anova.v_e / n))
    q_crit = studentized_range_isf(1.0 - confidence, m, anova.df_e)
    pairs_ij = list(combinations(range(m), 2))
    diffs = np.array([means[i] - means[j] for i, j in pairs_ij])
    qs = np.abs(diffs) / se if se > 0 else np.where(diffs == 0, 0.0, np.inf)
    p_values = studentized_range_sf(qs, m, anova.df_e)
    pairs = []
    for (i, j), diff, q, p in zip(
        pairs_ij, diffs.tolist(), qs.tolist(), p_values.tolist(), strict=True
    ):
        effect = diff / float(np.sqrt(anova.v_e)) if anova.v_e > 0 else float("nan")
        pairs.append(PairComparison(i, j, labels[i], labels[j], diff, q, min(p, 1.0), effect,
                                    (diff - q_crit * se, diff + q_crit * se)))  # fmt: skip
    return TukeyResult("paired Tukey HSD", labels, tuple(means.tolist()), tuple(pairs), anova,
                       confidence)  # fmt: skip


@dataclass(frozen=True)
class PairwiseResult:
    """A paired test between two named runs, with its p-value corrected in the family."""

    a: str
    b: str
    result: TestResult
    adjusted_p_value: float
    correction: str


def pairwise_tests(
    scores: Mapping[str, Sequence[float]],
    *,
    test: str = "t",
    correction: Correction | None = "holm",
    baseline: str | None = None,
    **options,
) -> list[PairwiseResult]:
    """Run ``PAIRED_TESTS[test]`` on every pair of runs (or every run against ``baseline``)
    and correct the family's p-values with ``correction`` (None = no correction).

    ``scores`` maps run name -> per-topic scores, all aligned on the same topics;
    ``options`` go to the test (e.g. n_resamples, seed).
    """
    return pairwise_test_families(
        [scores], test=test, correction=correction, baseline=baseline, **options
    )[0]


def pairwise_test_families(
    families: Sequence[Mapping[str, Any]],
    *,
    test: str = "t",
    correction: Correction | None = "holm",
    baseline: str | None = None,
    **options,
) -> list[list[PairwiseResult]]:
    """`pairwise_tests` of each family of scores (e.g. one per measure), each corrected
    within itself. A test that runs many pairs at once (``PairedTest.many``) runs every
    family's pairs in one call, each pair's result being its own: the randomization test
    then draws the sign matrix of each n once for all the families."""
    if test not in PAIRED_TESTS:
        raise ValueError(f"test must be one of {', '.join(PAIRED_TESTS)}, not {test!r}")
    every: list[list[tuple[str, str]]] = []
    for scores in families:
        names = list(scores)
        if baseline is not None and baseline not in scores:
            raise ValueError(f"baseline {baseline!r} is not among the runs")
        every.append(
            [(baseline, r) for r in names if r != baseline]
            if baseline is not None
            else list(combinations(names, 2))
        )
    chosen = PAIRED_TESTS[test]
    flat = [(scores[a], scores[b]) for scores, pairs in zip(families, every, strict=True)
            for a, b in pairs]  # fmt: skip
    if chosen.many is not None:
        results = chosen.many(flat, **options)
    else:
        results = [chosen.run(x, y, **options) for x, y in flat]
    label = CORRECTIONS[correction] if correction else "none"
    found: list[list[PairwiseResult]] = []
    start = 0
    for pairs in every:
        mine = results[start : start + len(pairs)]
        start += len(pairs)
        p = np.array([r.p_value for r in mine])
        adjusted = adjust_p_values(p, method=correction) if correction and len(p) else p
        found.append([
            PairwiseResult(a, b, r, float(q), label)
            for (a, b), r, q in zip(pairs, mine, adjusted, strict=True)
        ])  # fmt: skip
    return found


# --------------------------------------------------------------------------- rankings


def system_ranking(scores: Mapping[str, float]) -> list[str]:
    """Run names best first: score descending, ties by name ascending."""
    return sorted(scores, key=lambda run: (-scores[run], run))


def _aligned(a, b) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        if not (isinstance(a, Mapping) and isinstance(b, Mapping)) or set(a) != set(b):
            raise ValueError("both score mappings must hold the same runs")
        keys = sorted(a)
        return np.array([a[k] for k in keys], float), np.array([b[k] for k in keys], float)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"scores must be two aligned 1-d arrays: {a.shape}, {b.shape}")
    return a, b


def kendall_tau(a_scores, b_scores) -> float:
    """Kendall's tau-b between two rankings of the same systems given by their scores
    (arrays aligned by system, or mappings run -> score); scipy ``kendalltau``."""
    a, b = _aligned(a_scores, b_scores)
    if len(a) < 2:
        raise ValueError("Kendall's tau needs at least two systems")
    return float(stats.kendalltau(a, b, variant="b").statistic)


def tau_ap(reference_order: Sequence[str], other_order: Sequence[str]) -> float:
    """AP rank correlation (Yilmaz, Aslam & Robertson 2008), reference = ground truth.

    tau_AP = 2/(N-1) sum_{i=2..N} C(i)/(i-1) - 1, where C(i) counts the items above rank i
    in ``other_order`` that the reference also ranks above ``other_order[i]``. Top-weighted
    and asymmetric (`tau_ap_symmetric`)."""
    reference, other = list(reference_order), list(other_order)
    if len(set(reference)) != len(reference) or sorted(reference) != sorted(other):
        raise ValueError("tau_AP needs two orders of the same distinct items")
    if len(other) < 2:
        raise ValueError("tau_AP needs at least two items")
    position = {item: k for k, item in enumerate(reference)}
    total = 0.0
    for i in range(1, len(other)):
        correct = sum(position[above] < position[other[i]] for above in other[:i])
        total += correct / i
    return 2 * total / (len(other) - 1) - 1


def tau_ap_symmetric(a_order: Sequence[str], b_order: Sequence[str]) -> float:
    """Symmetric tau_AP: the mean of tau_AP in both directions."""
    return (tau_ap(a_order, b_order) + tau_ap(b_order, a_order)) / 2


def tau_ap_ties(reference: Mapping[str, float], other: Mapping[str, float]) -> float:
    """tau_AP of two rankings given by scores (higher = better), tie-aware: the mean of
    `tau_ap` over every way of breaking the ties of both rankings, each equally likely.

    Exact, in O(N^2): for a run i whose tie group in ``other`` starts after p runs and holds
    t, its position is p + 1 + k with k uniform on 0..t-1; a run j above it in ``other``
    adds q(j, i) / (p + k) (q = 1 when the reference ranks j above i, 1/2 when they tie,
    0 otherwise), and a run j tied with it is above it with probability k / (t - 1). Without
    ties this is `tau_ap`; with ties only in ``other`` it is Urbano & Marrero's tau_AP_a
    ("The treatment of ties in AP correlation", ICTIR 2017): no tie is broken by name.
    """
    runs = sorted(reference)
    if set(reference) != set(other):
        raise ValueError("both score mappings must hold the same runs")
    n = len(runs)
    if n < 2:
        raise ValueError("tau_AP needs at least two items")
    ref = np.array([reference[r] for r in runs], dtype=float)
    oth = np.array([other[r] for r in runs], dtype=float)
    q = np.where(ref[:, None] > ref[None, :], 1.0, np.where(ref[:, None] == ref[None, :], 0.5, 0))
    total = 0.0
    for i in range(n):
        above = oth > oth[i]
        tied = (oth == oth[i]) & (np.arange(n) != i)
        p, t = int(above.sum()), int(tied.sum()) + 1
        slots = p + np.arange(t)  # positions - 1 that run i may take
        s_above = float(np.sum(1 / slots[slots > 0])) / t
        s_within = float(np.sum(np.arange(1, t) / (t - 1) / slots[1:])) / t if t > 1 else 0.0
        total += s_above * q[above, i].sum() + s_within * q[tied, i].sum()
    return 2 * total / (n - 1) - 1


def tied_pairs(scores: Mapping[str, float]) -> int:
    """Pairs of runs with equal scores."""
    _, counts = np.unique(np.array(list(scores.values()), dtype=float), return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def rank_changes(reference: Mapping[str, float], other: Mapping[str, float]) -> list[RankChange]:
    """Runs whose rank (1 + the runs scoring strictly higher: competition ranking, so tied runs
    never "move" by name) differs between ``reference`` and ``other``, in reference order."""
    if set(reference) != set(other):
        raise ValueError("both score mappings must hold the same runs")
    ranks = []
    for s in (reference, other):  # the runs above: all but those at or below, by bisection
        v = np.fromiter(s.values(), float, len(s))
        ranks.append(dict(zip(s, len(v) + 1 - np.sort(v).searchsorted(v, "right"), strict=True)))
    return [
        RankChange(run, int(ranks[0][run]), int(ranks[1][run]), reference[run], other[run])
        for run in system_ranking(reference)
        if ranks[0][run] != ranks[1][run]
    ]


@dataclass(frozen=True)
class RankingComparison:
    """Another ranking of the same runs against a reference one."""

    qrels: str
    kendall_tau: float
    tau_ap: float  # tie-aware (`tau_ap_ties`)
    order: list[str]
    changes: list[RankChange]  # the runs whose position differs from the reference
    tied_pairs: int = 0  # pairs of runs tied in the reference or in this ranking


def compare_system_rankings(
    reference: Mapping[str, float], other: Mapping[str, float], label: str
) -> RankingComparison:
    """Kendall's tau-b and the tie-aware tau_AP (reference = ground truth), the runs that
    moved, and how many pairs of runs are tied (their order in `order` is by name only)."""
    enough = len(reference) >= 2
    return RankingComparison(
        label,
        kendall_tau(reference, other) if enough else math.nan,
        tau_ap_ties(reference, other) if enough else math.nan,
        system_ranking(other),
        rank_changes(reference, other),
        tied_pairs(reference) + tied_pairs(other),
    )
