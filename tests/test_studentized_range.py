"""The vectorised studentized-range survival function against scipy and exact forms."""

import numpy as np
import pytest
from scipy import integrate, special
from scipy import stats as sp

from workbench.stats import paired_tukey_hsd
from workbench.studentized_range import (
    _log_chi_weight,
    log_range_sf,
    studentized_range_isf,
    studentized_range_sf,
)

Q = (0.05, 0.5, 1.5, 3.0, 4.5, 6.0, 9.0, 15.0, 40.0)


def _check_against_scipy(ks, dfs, qs=Q):
    worst = 0.0
    for k in ks:
        for df in dfs:
            ours = studentized_range_sf(np.array(qs), k, df)
            ref = np.array([sp.studentized_range.sf(q, k, df) for q in qs])
            np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9, err_msg=f"k={k} df={df}")
            worst = max(worst, float(np.abs(ours - ref).max()))
    return worst


def test_agrees_with_scipy_on_a_small_grid():
    assert _check_against_scipy((2, 7, 150), (1, 4, 596, np.inf)) < 1e-9


@pytest.mark.slow
def test_agrees_with_scipy_on_the_whole_grid():
    # k 2..200, df 1..10,000 and inf, p from ~1 to below 1e-12: within 1e-9 absolute
    ks = (2, 3, 5, 10, 30, 100, 150, 200)
    assert _check_against_scipy(ks, (1, 2, 3, 5, 10, 30, 100, 1000, 10_000, np.inf)) < 1e-9


@pytest.mark.parametrize("df", [1, 3, 10, 100, 10_000, np.inf])
def test_two_means_is_a_t_or_normal_tail_at_every_size(df):
    # k = 2: Q = |Z1 - Z2| / S = sqrt(2) |T_df|, so P(Q > q) = 2 P(T_df > q / sqrt(2)):
    # an exact reference down to tiny p, where scipy's sf (1 - cdf) has lost its digits
    q = np.array([0.01, 0.3, 1.0, 2.77, 5.0, 8.0, 12.0, 20.0, 60.0, 1e3, 1e5, 1e12])
    exact = special.erfc(q / 2) if np.isinf(df) else 2 * sp.t.sf(q / np.sqrt(2), df)
    ours = studentized_range_sf(q, 2, df)
    big = exact > 1e-300
    assert (exact[big] < 1e-12).any()
    np.testing.assert_allclose(ours[big], exact[big], rtol=1e-9, atol=0)


def _quad_reference(q, k, df):
    """The same integrals by adaptive quadrature (scipy.integrate.quad), an independent check
    of the fixed rules, their windows and the interpolation of log P(R > y)."""
    if np.isinf(df):
        return float(np.exp(log_range_sf(np.array([q]), k)[0]))

    def integrand(u):
        y = np.array([q * np.exp(u)])
        return np.exp(_log_chi_weight(np.array([u]), df)[0] + log_range_sf(y, k)[0])

    points = sorted([0.0, *np.log(np.array([3.0, 5.0, 7.0]) / q)])
    return integrate.quad(integrand, -300, 6, points=points, epsabs=0, epsrel=1e-12, limit=2000)[0]


@pytest.mark.parametrize(
    ("k", "df", "q"),
    [(10, 1, 5e6), (150, 10, 122.9), (150, 10_000, 11.78), (150, np.inf, 11.76), (40, 30, 18.0)],
)
def test_tiny_p_values_keep_their_relative_accuracy(k, df, q):
    ours = float(studentized_range_sf(np.array([q]), k, df)[0])
    reference = _quad_reference(q, k, df)
    assert 1e-14 < reference < 1e-6
    assert ours == pytest.approx(reference, rel=1e-6)


def test_log_range_sf_is_exact_for_two_normals():
    y = np.array([0.0, 0.5, 3.0, 10.0, 30.0, 50.0])
    expected = special.log_ndtr(-y / np.sqrt(2)) + np.log(2)
    expected[0] = 0.0
    np.testing.assert_allclose(log_range_sf(y, 2), expected, rtol=1e-12, atol=1e-13)


def test_edges_and_shapes():
    q = np.array([[-1.0, 0.0], [np.inf, np.nan]])
    out = studentized_range_sf(q, 5, 20)
    assert out.shape == (2, 2)
    assert out[0].tolist() == [1.0, 1.0] and out[1, 0] == 0.0 and np.isnan(out[1, 1])
    assert float(studentized_range_sf(1e4, 5, np.inf)) == 0.0  # beyond the range's support
    for k, df in [(1, 10), (0.5, 10), (3, 0), (3, -2)]:
        with pytest.raises(ValueError):
            studentized_range_sf([1.0], k, df)


def test_paired_tukey_p_values_are_scipys_studentized_range():
    rng = np.random.default_rng(29)
    scores = rng.normal(0, 0.1, size=(7, 12)) + np.linspace(0, 0.2, 7)[:, None]
    result = paired_tukey_hsd(scores)
    m, df = 7, 6 * 11
    assert result.anova is not None and result.anova.df_e == df
    for pair in result.pairs:
        expected = sp.studentized_range.sf(pair.statistic, m, df)
        assert pair.p_value == pytest.approx(expected, abs=1e-11, rel=1e-9)
    assert min(p.p_value for p in result.pairs) < 0.01 < max(p.p_value for p in result.pairs)
    q_crit = sp.studentized_range.ppf(0.95, m, df)  # the simultaneous intervals' half width
    se = np.sqrt(result.anova.v_e / 12)
    for pair in result.pairs:
        assert pair.ci is not None
        half = (pair.ci[1] - pair.ci[0]) / 2
        assert half == pytest.approx(q_crit * se, rel=1e-9)
        assert (pair.ci[0] + pair.ci[1]) / 2 == pytest.approx(pair.mean_difference, abs=1e-15)


@pytest.mark.parametrize(("k", "df"), [(2, 1), (2, 30), (3, 5), (7, 66), (40, 1000), (150, np.inf)])
def test_the_inverse_is_scipys_isf(k, df):
    """Against scipy's isf where it is accurate (p >= 1e-3), against Q = sqrt(2) |T_df| for
    two means at every p (scipy's isf(1e-5, 2, 1) is 7,407; the exact value is 90,032), and
    P(Q > isf(p)) = p throughout."""
    for p in (0.5, 0.1, 0.05, 0.01, 1e-3, 1e-5, 1e-9):
        q = studentized_range_isf(p, k, df)
        if k == 2:
            assert q == pytest.approx(np.sqrt(2) * sp.t.isf(p / 2, df), rel=1e-9), p
        elif p in (0.5, 0.05, 1e-3):  # scipy's isf integrates adaptively: 0.1-0.4 s a call
            assert q == pytest.approx(sp.studentized_range.isf(p, k, df), rel=1e-8), p
        assert float(studentized_range_sf(np.array([q]), k, df)[0]) == pytest.approx(p, rel=1e-9)
    for bad in ((0.0, 3, 10), (1.0, 3, 10), (0.05, 1, 10), (0.05, 3, 0)):
        with pytest.raises(ValueError):
            studentized_range_isf(*bad)


def test_many_q_at_once_equal_the_same_q_in_pieces():
    q = np.linspace(0.1, 12.0, 4_500)  # more than one CHUNK
    whole = studentized_range_sf(q, 20, 30)
    pieces = np.concatenate(
        [studentized_range_sf(q[i : i + 700], 20, 30) for i in range(0, 4_500, 700)]
    )
    np.testing.assert_allclose(whole, pieces, rtol=1e-14, atol=0)
    for i in (0, 2_100, 4_499):
        assert whole[i] == pytest.approx(sp.studentized_range.sf(q[i], 20, 30), abs=1e-9)
