"""workbench.stats against scipy/statsmodels/trectools (docs/methods.md section 4) and
Sakai's Table 5.1 fixture (3 systems x 20 topics)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sp
from statsmodels.stats.anova import AnovaRM
from statsmodels.stats.multitest import multipletests
from trectools import misc

from tests.property_examples import examples
from workbench import sign_flips
from workbench.stats import (
    PAIRED_TESTS,
    adjust_p_values,
    bootstrap_test,
    compare_system_rankings,
    kendall_tau,
    paired_t_test,
    paired_tukey_hsd,
    pairwise_test_families,
    pairwise_tests,
    randomization_test,
    rank_changes,
    sign_test,
    system_ranking,
    tau_ap,
    tau_ap_symmetric,
    tau_ap_ties,
    tied_pairs,
    two_way_anova,
    wilcoxon_test,
)

SAKAI = {
    "a": [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30, .50, .40, .00, .60, .50, .30, .10, .50, .20, .10],  # noqa: E501
    "b": [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30, .40, .40, .10, .40, .20, .10, .10, .60, .30, .20],  # noqa: E501
    "c": [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40, .40, .30, .30, .20, .20, .20, .10, .50, .40, .30],  # noqa: E501
}  # fmt: skip
SAKAI_MATRIX = np.array([SAKAI["a"], SAKAI["b"], SAKAI["c"]])

SETTINGS = settings(max_examples=examples(30), deadline=None)


def paired_scores(min_n: int = 5, max_n: int = 30, grid: bool = False):
    """Two per-topic score vectors; on a 0.1 grid (many ties) when ``grid``."""
    value = st.integers(0, 10).map(lambda k: k / 10) if grid else st.floats(0, 1)
    return st.integers(min_n, max_n).flatmap(
        lambda n: st.tuples(
            st.lists(value, min_size=n, max_size=n), st.lists(value, min_size=n, max_size=n)
        )
    )


# --------------------------------------------------------------------------- Sakai fixture


def test_sakai_pair_a_b_paired_tests():
    a, b = SAKAI["a"], SAKAI["b"]
    t = paired_t_test(a, b)
    assert t.test == "paired t-test"
    assert t.mean_difference == pytest.approx(0.0750)
    assert t.effect_size == pytest.approx(0.473, abs=1e-3)
    assert t.statistic == pytest.approx(2.116, abs=1e-3)
    assert t.df == 19
    assert t.p_value == pytest.approx(0.0478, abs=1e-4)
    assert t.ci[1] - t.mean_difference == pytest.approx(0.0742, abs=1e-4)
    assert (t.wins, t.losses, t.ties) == (10, 5, 5)

    assert wilcoxon_test(a, b).p_value == pytest.approx(0.0404, abs=1e-4)
    sign = sign_test(a, b)
    assert sign.p_value == pytest.approx(0.3018, abs=1e-4)
    assert sign.statistic == 10


def test_sakai_exact_randomization_p_counts_ties():
    # 5 zero differences leave 15 flippable topics: 2160 of the 2^15 sign flips reach
    # |mean| >= 0.075 (ranx's tie-losing float comparison reports about 0.052).
    result = randomization_test(SAKAI["a"], SAKAI["b"])
    assert result.p_value == 2160 / 32768
    assert result.n_resamples is None
    monte_carlo = randomization_test(SAKAI["a"], SAKAI["b"], exact_max_n=0, n_resamples=20000)
    assert monte_carlo.n_resamples == 20000
    assert monte_carlo.p_value == pytest.approx(0.0659, abs=0.005)


def test_sakai_two_way_anova():
    anova = two_way_anova(SAKAI_MATRIX)
    assert anova.s_a == pytest.approx(0.1083, abs=1e-4)
    assert anova.s_b == pytest.approx(1.0293, abs=1e-4)
    assert anova.s_e == pytest.approx(0.8317, abs=1e-4)
    assert anova.v_e == pytest.approx(0.0219, abs=1e-4)
    assert anova.f_a == pytest.approx(2.475, abs=1e-3)
    assert anova.p_a == pytest.approx(0.098, abs=1e-3)
    assert anova.moe == pytest.approx(0.0670, abs=1e-4)
    assert anova.df_e == 38


def test_sakai_paired_tukey_hsd():
    result = paired_tukey_hsd(SAKAI_MATRIX, names=["a", "b", "c"])
    assert result.test == "paired Tukey HSD"
    expected = {("a", "b"): (0.257, 0.507), ("a", "c"): (0.096, 0.676), ("b", "c"): (0.855, 0.169)}
    for (x, y), (p, effect) in expected.items():
        pair = result.pair(x, y)
        assert pair.p_value == pytest.approx(p, abs=1e-3)
        assert pair.effect_size == pytest.approx(effect, abs=1e-3)
        low, high = pair.ci
        assert low < pair.mean_difference < high
    # the simultaneous interval of a pair covers 0 exactly when p > 0.05
    for pair in result.pairs:
        assert (pair.ci[0] < 0 < pair.ci[1]) == (pair.p_value > 0.05)


def test_sakai_holm_and_bonferroni():
    p = [paired_t_test(SAKAI[x], SAKAI[y]).p_value for x, y in [("a", "b"), ("a", "c"), ("b", "c")]]
    assert p == pytest.approx([0.0478, 0.1232, 0.5218], abs=1e-4)
    assert adjust_p_values(p, method="holm") == pytest.approx([0.1434, 0.2463, 0.5218], abs=1e-4)
    assert adjust_p_values(p, method="bonferroni") == pytest.approx([0.1434, 0.3695, 1.0], abs=1e-4)


# --------------------------------------------------------------------------- references


@SETTINGS
@given(paired_scores())
def test_paired_t_test_matches_scipy(pair):
    x, y = pair
    d = np.subtract(x, y)
    if d.std(ddof=1) < 1e-9:
        return
    reference = sp.ttest_rel(x, y)
    result = paired_t_test(x, y, confidence=0.9)
    assert result.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)
    assert result.ci == pytest.approx(tuple(reference.confidence_interval(0.9)), abs=1e-12)
    assert result.effect_size == pytest.approx(d.mean() / d.std(ddof=1))


@settings(max_examples=examples(15), deadline=None)
@given(paired_scores(grid=True))
def test_wilcoxon_matches_scipy_with_the_method_it_records(pair):
    """scipy 1.17's default ('auto') on the non-zero differences gives our p-value, and the
    method we record, passed to scipy explicitly with the pairs, gives our statistic and
    p-value. A permutation case is checked against 'auto' alone: there 'auto' is the
    permutation test with 9,999 resamples, which for n <= 13 enumerates all 2^n sign flips,
    as the explicit call does; the explicit call on the pairs also flips the signs of the
    zero differences: 2^14 flips took 3.1 s in scipy's loop for 13 non-zero of 14 pairs, and
    20 pairs would take 2^20, 64 times as many."""
    x, y = pair
    d = np.subtract(x, y)
    if not d.any():
        assert wilcoxon_test(x, y).p_value == 1.0
        return
    result = wilcoxon_test(x, y)
    automatic = sp.wilcoxon(d[d != 0])
    assert result.p_value == pytest.approx(automatic.pvalue, rel=1e-12)
    assert result.statistic == automatic.statistic
    if result.method == "permutation":
        return
    reference = sp.wilcoxon(x, y, zero_method="wilcox", correction=False, method=result.method)
    assert result.statistic == reference.statistic
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-12)


def test_wilcoxon_permutation_p_values_are_scipys_without_its_slow_loop(monkeypatch):
    """Tied differences (n <= 13): scipy's statistic and p-value bit for bit, from all 2^n
    sign flips at once; scipy's permutation_test evaluated the statistic once per flip in
    Python (2 s for one pair at n = 13, 13 s for one example of the families test below)."""
    cases = [
        ([0.5, -0.5, 1, 0.5, -1, 0.5, 0.5, -0.5, 1, 0.5], [0.0] * 10),
        ([0.2, 0.2, -0.1, 0.3, 0.1, 0.0], [0.0] * 6),
        ([1, 0, 0.5, 1, 0.5], [0, 0.5, 0, 0, 1]),
        ([0.1, 0.1], [0.0, 0.0]),
    ]
    method = sp.PermutationMethod(n_resamples=np.inf)
    expected = [
        sp.wilcoxon(x, y, zero_method="wilcox", correction=False, method=method) for x, y in cases
    ]

    def forbidden(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("scipy's permutation_test was called")

    monkeypatch.setattr(sp, "permutation_test", forbidden)
    for (x, y), reference in zip(cases, expected, strict=True):
        result = wilcoxon_test(x, y)
        assert result.method == "permutation"
        assert (result.statistic, result.p_value) == (reference.statistic, reference.pvalue)
        assert type(result.p_value) is float


def test_wilcoxon_method_is_chosen_and_recorded():
    untied = [0.31, -0.12, 0.25, 0.4, 0.17, -0.05, 0.22]
    assert wilcoxon_test(untied, [0.0] * 7).method == "exact"
    tied = [0.2, 0.2, -0.1, 0.3, 0.1, 0.0]
    assert wilcoxon_test(tied, [0.0] * 6).method == "permutation"  # the zero is dropped first
    rng = np.random.default_rng(3)
    assert wilcoxon_test(rng.normal(size=51), np.zeros(51)).method == "asymptotic"
    assert wilcoxon_test(np.round(rng.normal(size=14), 1), np.zeros(14)).method == "asymptotic"
    assert wilcoxon_test([0.1, 0.2], [0.1, 0.2]).method == "none (every difference is zero)"
    # Sakai's pair: 15 non-zero differences with ties -> normal approximation
    assert wilcoxon_test(SAKAI["a"], SAKAI["b"]).method == "asymptotic"


@SETTINGS
@given(paired_scores(grid=True))
def test_sign_test_matches_binomtest(pair):
    x, y = pair
    d = np.subtract(x, y)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    result = sign_test(x, y)
    assert (result.wins, result.losses, result.ties) == (wins, losses, len(d) - wins - losses)
    expected = sp.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    assert result.p_value == pytest.approx(expected, rel=1e-12)


@settings(max_examples=examples(20), deadline=None)
@given(paired_scores(min_n=4, max_n=12, grid=True))
def test_exact_randomization_matches_scipy_permutation_test(pair):
    x, y = pair
    if abs(np.subtract(x, y).sum()) < 1e-9:
        # no mean difference: every flip is as extreme. (scipy's tolerance is relative to
        # the observed value, so at a rounding-level observed mean it may say otherwise.)
        assert randomization_test(x, y).p_value == 1.0
        return
    reference = sp.permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(u - v, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
    )
    assert randomization_test(x, y).p_value == pytest.approx(reference.pvalue, rel=1e-12)


def test_monte_carlo_randomization_uses_the_plus_one_correction():
    x = np.linspace(0.5, 0.9, 30)
    y = x - 0.3  # every flip but the identity gives a smaller |mean|
    result = randomization_test(x, y, n_resamples=999)
    assert result.p_value == pytest.approx(1 / 1000, abs=1e-3)
    assert result.p_value >= 1 / 1000


def _one_pair_randomization_p(x, y, n_resamples: int, seed: int, exact_max_n: int) -> float:
    """The p of one pair from its own product signs @ d (the code before the batched
    product), as the reference of the batched one."""
    d = np.subtract(x, y)
    nonzero = d[d != 0]
    edge = abs(nonzero.sum()) - 1e-9 * max(np.abs(nonzero).sum(), 1e-300)
    if len(nonzero) <= exact_max_n:
        return float(np.mean(np.abs(sign_flips.all_signs(len(nonzero)) @ nonzero) >= edge))
    signs = sign_flips.random_signs(seed, n_resamples, len(nonzero))
    return (int((np.abs(signs @ nonzero) >= edge).sum()) + 1) / (n_resamples + 1)


@pytest.mark.parametrize(
    ("grid", "exact_max_n"),
    [(10, 16), (2, 16), (2, 0)],  # random flips; mostly exact ones; only random ones
)
def test_batched_randomization_tests_equal_the_one_pair_products(monkeypatch, grid, exact_max_n):
    # 12 runs x 20 topics on a grid of `grid` steps: ties, zero differences, pairs with the
    # same number of non-zero differences (batched together) and with different ones; blocks
    # of 3 columns so that a group spans several blocks.
    monkeypatch.setattr(sign_flips, "_BLOCK", 3 * 2000)
    rng = np.random.default_rng(3)
    scores = {f"r{i}": rng.integers(0, grid + 1, size=20) / grid for i in range(12)}
    options = {"n_resamples": 2000, "seed": 7, "exact_max_n": exact_max_n}
    results = pairwise_tests(scores, test="randomization", correction=None, **options)
    assert len(results) == 66
    exact = 0
    for r in results:
        x, y = scores[r.a], scores[r.b]
        assert r.result.p_value == _one_pair_randomization_p(x, y, 2000, 7, exact_max_n)
        assert r.result == randomization_test(x, y, **options)
        exact += r.result.n_resamples is None
    assert (exact > 30) == (grid == 2 and exact_max_n == 16)


@settings(max_examples=examples(40), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.tuples(st.integers(2, 5), st.integers(2, 24)), min_size=1, max_size=3),
    grid=st.sampled_from([2, 5, 1000]),
    test=st.sampled_from(sorted(PAIRED_TESTS)),
    correction=st.sampled_from(["holm", "bh", None]),
    baseline=st.booleans(),
)
def test_families_tested_at_once_equal_each_family_alone(  # type: ignore[no-untyped-def]
    seed, sizes, grid, test, correction, baseline
):
    """Every measure's family of pairs tested in one call (`pairwise_test_families`, what the
    report does) gives each family's `pairwise_tests` exactly: the same results and
    corrected p-values, bit for bit; the randomization test draws each n's sign matrix once
    for all the families (exact flips up to n = 16, random ones above, B = 300)."""
    rng = np.random.default_rng(seed)
    families = [
        {f"r{i}": rng.integers(0, grid + 1, size=topics) / grid for i in range(runs)}
        for runs, topics in sizes
    ]
    chosen = "r0" if baseline else None
    options = {"n_resamples": 300, "seed": seed} if PAIRED_TESTS[test].resampling else {}
    if test == "randomization":
        options["exact_max_n"] = 8
    sign_flips.random_signs.cache_clear()
    together = pairwise_test_families(
        families, test=test, correction=correction, baseline=chosen, **options
    )
    drawn = sign_flips.random_signs.cache_info().misses
    alone = [
        pairwise_tests(f, test=test, correction=correction, baseline=chosen, **options)
        for f in families
    ]
    assert repr(together) == repr(alone)  # repr: NaN effect sizes too, every float exact
    if test == "randomization":
        random_n = {
            r.result.n - r.result.ties for family in alone for r in family
            if r.result.n_resamples is not None
        }  # fmt: skip
        assert drawn == len(random_n)


def test_random_flip_hits_recounts_a_sum_on_its_edge():
    # An edge equal to one flipped sum's magnitude: the batched product may round that sum
    # to either side, so the column is counted again with the one-pair product.
    rng = np.random.default_rng(11)
    d = [rng.random(40) / 3 for _ in range(5)]
    signs = sign_flips.random_signs(0, 500, 40)
    edges = [float(abs(signs[k] @ column)) for k, column in enumerate(d)]
    hits = sign_flips.flip_hits(signs, d, edges)
    assert hits == [
        int((np.abs(signs @ column) >= edge).sum()) for column, edge in zip(d, edges, strict=True)
    ]
    assert all(0 < h < 500 for h in hits)


def test_bootstrap_test_agrees_with_the_t_test_on_the_sakai_pair():
    result = bootstrap_test(SAKAI["a"], SAKAI["b"], n_resamples=4000, seed=5)
    assert result.test.startswith("bootstrap test")
    assert result.statistic == pytest.approx(paired_t_test(SAKAI["a"], SAKAI["b"]).statistic)
    assert result.p_value == pytest.approx(0.0478, abs=0.015)
    low, high = result.ci
    assert low == pytest.approx(0.0075, abs=0.01)
    assert high == pytest.approx(0.1425, abs=0.01)


def test_bootstrap_test_finds_nothing_under_the_null():
    rng = np.random.default_rng(4)
    x = rng.random(25)
    result = bootstrap_test(x, x[::-1], n_resamples=2000)
    assert result.p_value > 0.2
    assert bootstrap_test(x, x[::-1], n_resamples=2000) == result


@SETTINGS
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=12),
    st.sampled_from([("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]),
)
@pytest.mark.slow  # statsmodels
def test_adjust_p_values_matches_statsmodels(p, methods):
    ours, theirs = methods
    expected = multipletests(p, method=theirs)[1]
    assert adjust_p_values(p, method=ours) == pytest.approx(expected, abs=1e-12)


def test_adjust_p_values_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_p_values([0.2, 1.5], method="holm")
    with pytest.raises(ValueError, match="method"):
        adjust_p_values([0.2], method="hs")


@settings(max_examples=examples(15), deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(3, 15))
def test_two_way_anova_matches_statsmodels_repeated_measures(seed, systems, topics):
    scores = np.random.default_rng(seed).random((systems, topics))
    frame = pd.DataFrame(
        [(s, t, scores[s, t]) for s in range(systems) for t in range(topics)],
        columns=["system", "topic", "score"],
    )
    table = AnovaRM(frame, "score", "topic", within=["system"]).fit().anova_table
    anova = two_way_anova(scores)
    assert anova.f_a == pytest.approx(table["F Value"].iloc[0], rel=1e-9)
    assert anova.p_a == pytest.approx(table["Pr > F"].iloc[0], rel=1e-9)
    assert anova.df_e == table["Den DF"].iloc[0]


def test_paired_tukey_removes_the_topic_effect():
    # the same per-topic differences on top of wildly different topic difficulty
    rng = np.random.default_rng(8)
    base = rng.normal(0, 0.05, size=(3, 15)) + np.array([[0.0], [0.03], [0.06]])
    difficulty = rng.uniform(0, 0.8, size=15)
    easy = paired_tukey_hsd(base)
    varied = paired_tukey_hsd(base + difficulty)
    for plain, shifted in zip(easy.pairs, varied.pairs, strict=True):
        assert shifted.p_value == pytest.approx(plain.p_value)
    one_way = sp.tukey_hsd(*(base + difficulty)).pvalue[0, 2]
    assert varied.pair("0", "2").p_value < one_way


def test_pairwise_tests_correct_within_the_family():
    results = pairwise_tests(SAKAI, test="t", correction="holm")
    assert [(r.a, r.b) for r in results] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [r.adjusted_p_value for r in results] == pytest.approx(
        [0.1434, 0.2463, 0.5218], abs=1e-4
    )
    assert {r.correction for r in results} == {"Holm"}
    against_c = pairwise_tests(SAKAI, test="sign", correction="bonferroni", baseline="c")
    assert [(r.a, r.b) for r in against_c] == [("c", "a"), ("c", "b")]
    assert against_c[0].adjusted_p_value == pytest.approx(min(1.0, 2 * against_c[0].result.p_value))
    randomized = pairwise_tests(SAKAI, test="randomization", correction=None, n_resamples=100)
    assert randomized[0].adjusted_p_value == randomized[0].result.p_value
    with pytest.raises(ValueError, match="test must be"):
        pairwise_tests(SAKAI, test="z")


def test_paired_inputs_are_checked():
    with pytest.raises(ValueError, match="one length"):
        paired_t_test([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="NaN"):
        wilcoxon_test([0.1, np.nan], [0.1, 0.2])
    with pytest.raises(ValueError, match="at least two topics"):
        sign_test([0.1], [0.2])
    with pytest.raises(ValueError, match="systems x topics"):
        paired_tukey_hsd([[0.1, 0.2]])
    with pytest.raises(ValueError, match="exact_max_n"):
        randomization_test([0.1, 0.2], [0.2, 0.1], exact_max_n=40)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_test([0.1, 0.2], [0.2, 0.1], n_resamples=0)


def test_identical_runs_are_not_different():
    x = [0.1, 0.5, 0.3]
    for result in (paired_t_test(x, x), wilcoxon_test(x, x), sign_test(x, x),
                   randomization_test(x, x)):  # fmt: skip
        assert result.p_value == 1.0
        assert result.mean_difference == 0.0


# --------------------------------------------------------------------------- rankings


@SETTINGS
@given(paired_scores(min_n=3, max_n=15, grid=True))
def test_kendall_tau_matches_scipy_tau_b(pair):
    a, b = pair
    expected = sp.kendalltau(a, b, variant="b").statistic
    actual = kendall_tau(a, b)
    if np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == pytest.approx(expected)


def test_kendall_tau_aligns_mappings_by_run():
    assert kendall_tau({"r1": 0.3, "r2": 0.2, "r3": 0.1}, {"r3": 0.0, "r1": 0.9, "r2": 0.5}) == 1.0
    with pytest.raises(ValueError, match="same runs"):
        kendall_tau({"r1": 0.3, "r2": 0.2}, {"r1": 0.3, "r9": 0.2})


def test_tau_ap_by_hand():
    truth = list("ABCDE")
    assert tau_ap(truth, truth) == 1.0
    assert tau_ap(truth, truth[::-1]) == -1.0
    # B A C E D: C(2..5) = 0/1, 2/2, 3/3, 3/4 -> 2/4 * 2.75 - 1 = 0.375 (methods.md 4.5)
    assert tau_ap(truth, list("BACED")) == pytest.approx(0.375)
    # top-weighted: a swap at the top costs more than the same swap at the bottom
    assert tau_ap(truth, list("BACDE")) == pytest.approx(0.5)
    assert tau_ap(truth, list("ABCED")) == pytest.approx(0.875)
    assert kendall_tau([5, 4, 3, 2, 1], [4, 5, 3, 2, 1]) == kendall_tau(
        [5, 4, 3, 2, 1], [5, 4, 3, 1, 2]
    )


@settings(max_examples=examples(30), deadline=None)
@given(st.permutations(list("ABCDEFGH")))
def test_tau_ap_matches_trectools_with_the_reference_first(order):
    truth = list("ABCDEFGH")

    def scored(names):
        return [(len(names) - k, name) for k, name in enumerate(names)]

    expected, _ = misc.get_correlation(scored(truth), scored(order), "tauap")
    assert tau_ap(truth, order) == pytest.approx(expected)
    reverse, _ = misc.get_correlation(scored(order), scored(truth), "tauap")
    assert tau_ap_symmetric(truth, order) == pytest.approx((expected + reverse) / 2)


def _every_tie_break(scores):
    """Every order of the runs that `scores` allows (ties in any order), best first."""
    groups = [
        sorted(r for r in scores if scores[r] == v)
        for v in sorted(set(scores.values()), reverse=True)
    ]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [r for part in parts for r in part]


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=6),
    st.lists(st.integers(0, 3), min_size=6, max_size=6),
)
def test_tie_aware_tau_ap_is_the_mean_over_every_tie_break(reference_values, other_values):
    names = [f"r{i}" for i in range(len(reference_values))]
    reference = dict(zip(names, map(float, reference_values), strict=True))
    other = dict(zip(names, map(float, other_values[: len(names)]), strict=True))
    brute = [tau_ap(a, b) for a in _every_tie_break(reference) for b in _every_tie_break(other)]
    assert tau_ap_ties(reference, other) == pytest.approx(np.mean(brute), abs=1e-12)


def test_tie_aware_tau_ap_without_ties_is_tau_ap_and_counts_ties():
    truth = {r: 5.0 - k for k, r in enumerate("ABCDE")}
    other = {r: 5.0 - k for k, r in enumerate("BACED")}
    assert tau_ap_ties(truth, other) == pytest.approx(0.375)  # methods.md 4.5
    # two runs tied under the other qrels: the name order used to decide
    # (tau_AP 1.0 for A=B, -1/3 had they been named the other way round)
    tied = {"A": 0.3, "B": 0.3, "C": 0.1}
    reference = {"A": 0.3, "B": 0.2, "C": 0.1}
    assert tau_ap(system_ranking(reference), system_ranking(tied)) == 1.0
    assert tau_ap_ties(reference, tied) == pytest.approx(0.5)  # (1 + 0) / 2
    assert (tied_pairs(tied), tied_pairs(reference)) == (1, 0)
    comparison = compare_system_rankings(reference, tied, "other")
    assert comparison.tau_ap == pytest.approx(0.5)
    assert comparison.tied_pairs == 1
    assert comparison.kendall_tau == pytest.approx(sp.kendalltau([3, 2, 1], [3, 3, 1]).statistic)


def test_tau_ap_needs_the_same_items():
    with pytest.raises(ValueError, match="same distinct items"):
        tau_ap(["a", "b"], ["a", "c"])


def test_ranking_and_rank_changes():
    final = {"r1": 0.30, "r2": 0.25, "r3": 0.25, "r4": 0.10}
    assessor = {"r1": 0.20, "r2": 0.28, "r3": 0.15, "r4": 0.12}
    assert system_ranking(final) == ["r1", "r2", "r3", "r4"]  # tie r2/r3 broken by name
    changes = rank_changes(final, assessor)
    assert [(c.run, c.reference_rank, c.other_rank) for c in changes] == [
        ("r1", 1, 2),
        ("r2", 2, 1),
        ("r3", 2, 3),  # tied second under final (competition ranks), third for the assessor
    ]
    assert changes[1].shift == 1
    assert changes[0].other_score == 0.20
    assert rank_changes(final, final) == []


def test_tied_runs_do_not_move_by_their_names():
    """Every run tied in the other ranking shares its best rank: which runs "move" does not
    depend on their names (ordered by name, a, b, c kept their places and z, y, x did not)."""
    for names in ("abc", "zyx"):
        human = dict(zip(names, (0.9, 0.8, 0.7), strict=True))
        machine = dict.fromkeys(names, 0.0)
        moves = [(c.reference_rank, c.other_rank) for c in rank_changes(human, machine)]
        assert moves == [(2, 1), (3, 1)], names
