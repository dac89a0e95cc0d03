"""Power and topic-set size against statsmodels' power functions and textbook values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import FTestAnovaPower, TTestPower

from workbench import power
from workbench.stats import two_way_anova

# Sakai's Table 5.1 (docs/methods.md section 4.7): 3 systems x 20 topics, V_E = 0.0219
SAKAI = np.array([
    [.70, .30, .20, .60, .40, .40, .00, .70, .10, .30,
     .50, .40, .00, .60, .50, .30, .10, .50, .20, .10],
    [.50, .10, .00, .20, .40, .30, .00, .50, .30, .30,
     .40, .40, .10, .40, .20, .10, .10, .60, .30, .20],
    [.00, .00, .20, .10, .30, .30, .10, .20, .40, .40,
     .40, .30, .30, .20, .20, .20, .10, .50, .40, .30],
])  # fmt: skip


@pytest.mark.parametrize(("d", "n", "alpha"), [(0.5, 34, 0.05), (0.2, 50, 0.05), (0.8, 10, 0.01),
                                               (0.473, 20, 0.05), (1.5, 3, 0.1)])  # fmt: skip
def test_paired_t_power_is_statsmodels_ttestpower(d, n, alpha) -> None:
    expected = TTestPower().power(effect_size=d, nobs=n, alpha=alpha, alternative="two-sided")
    assert power.paired_t_power(d, n, alpha=alpha) == pytest.approx(expected, rel=1e-9)
    assert power.paired_t_power(-d, n, alpha=alpha) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [5, 20, 50, 200])
def test_detectable_effect_is_statsmodels_solve_power(n) -> None:
    expected = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
    ours = power.paired_t_detectable_effect(n)
    assert ours == pytest.approx(expected, rel=1e-5)  # statsmodels' solver stops at ~1e-6
    assert TTestPower().power(ours, n, 0.05) == pytest.approx(0.8, abs=1e-12)


def test_topics_for_a_medium_effect_is_34() -> None:
    """The textbook value (G*Power, Cohen): d = 0.5, alpha 0.05 two-sided, power 0.8 -> 34."""
    n = power.paired_t_topics(0.5)
    assert n == 34
    assert power.paired_t_power(0.5, 33) < 0.8 <= power.paired_t_power(0.5, 34)
    assert math.ceil(TTestPower().solve_power(effect_size=0.5, alpha=0.05, power=0.8)) == 34


@pytest.mark.parametrize(("f", "m", "n"), [(0.25, 3, 53), (0.4, 4, 18), (0.1, 5, 20)])
def test_anova_power_is_statsmodels_ftestanovapower(f, m, n) -> None:
    """Cohen's f^2 = D^2 / (2 m sigma^2): choose sigma^2 = 1 and D = f sqrt(2 m)."""
    d_range = f * math.sqrt(2 * m)
    expected = FTestAnovaPower().power(effect_size=f, nobs=m * n, alpha=0.05, k_groups=m)
    assert power.anova_power(d_range, 1.0, n, m) == pytest.approx(expected, rel=1e-9)


def test_anova_topics_for_f_025_three_groups_is_53() -> None:
    """G*Power: f = 0.25, 3 groups, alpha 0.05, power 0.8 -> 159 in total, 53 per group."""
    n = power.anova_topics(0.25 * math.sqrt(6), 1.0, 3)
    assert n == 53
    fp = FTestAnovaPower()
    assert fp.power(effect_size=0.25, nobs=3 * 52, alpha=0.05, k_groups=3) < 0.8
    assert fp.power(effect_size=0.25, nobs=3 * 53, alpha=0.05, k_groups=3) >= 0.8


def test_sign_test_power_is_the_exact_binomial_sum() -> None:
    """n = 10: the two-sided sign test rejects at 0,1,9,10 wins (p = 0.0215); at p_win 0.8
    the power is P(X >= 9) + P(X <= 1)."""
    from scipy.stats import binom

    expected = binom.sf(8, 10, 0.8) + binom.cdf(1, 10, 0.8)
    assert power.sign_test_power(10, 0.8) == pytest.approx(expected)
    assert power.sign_test_power(10, 0.5) == pytest.approx(2 * binom.cdf(1, 10, 0.5))
    assert power.sign_test_power(5, 1.0) == 0.0  # 5 wins give p = 0.0625 > 0.05


def test_pair_power_on_sakai_a_vs_b() -> None:
    """a - b: mean 0.075, d_z 0.473 (methods.md): the detectable difference from
    TTestPower; no post-hoc power (Hoenig & Heisey 2001)."""
    result = power.pair_power("a", "b", SAKAI[0] - SAKAI[1], test="t")
    assert result.mean_difference == pytest.approx(0.075)
    assert result.effect_size == pytest.approx(0.473, abs=5e-4)
    d_min = TTestPower().solve_power(nobs=20, alpha=0.05, power=0.8)
    assert result.detectable_difference == pytest.approx(d_min * result.sd_difference, rel=1e-5)
    assert not hasattr(result, "power")
    approx = power.pair_power("a", "b", SAKAI[0] - SAKAI[1], test="randomization")
    assert approx.detectable_difference == result.detectable_difference
    assert "approximates the randomization" in approx.method and result.method == "noncentral t"


def test_topic_set_size_from_sakais_residual_variance() -> None:
    anova = two_way_anova(SAKAI)
    assert anova.v_e == pytest.approx(0.0219, abs=5e-5)
    design = power.topic_set_size(anova.v_e, n_topics=20, systems=3, min_difference=0.1)
    sd_d = math.sqrt(2 * anova.v_e)
    d_min = TTestPower().solve_power(nobs=20, alpha=0.05, power=0.8)
    assert design.detectable_difference == pytest.approx(d_min * sd_d, rel=1e-5)
    # the needed topics: the smallest n reaching 80 % in statsmodels' own terms
    n_t = design.topics_t_test
    tp = TTestPower()
    assert tp.power(0.1 / sd_d, n_t, 0.05) >= 0.8 > tp.power(0.1 / sd_d, n_t - 1, 0.05)
    f = math.sqrt(0.1**2 / (2 * 3 * anova.v_e))
    n_a, fp = design.topics_anova, FTestAnovaPower()
    assert fp.power(f, 3 * n_a, 0.05, k_groups=3) >= 0.8 > fp.power(f, 3 * (n_a - 1), 0.05, 3)
    assert power.anova_power(design.detectable_range, anova.v_e, 20, 3) == pytest.approx(0.8)
    assert design.sentence("map").startswith("With 20 topics, differences of at least 0.")


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="alpha"):
        power.paired_t_power(0.5, 10, alpha=1.5)
    with pytest.raises(ValueError, match="at least 2"):
        power.paired_t_power(0.5, 1)
    with pytest.raises(ValueError, match="size 0"):
        power.paired_t_topics(0.0)
    with pytest.raises(ValueError, match="variance"):
        power.topic_set_size(0.0, n_topics=10, systems=2)
    with pytest.raises(ValueError, match="more than"):
        power.paired_t_topics(1e-6)
