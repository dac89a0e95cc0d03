"""workbench.agreement against the reference libraries named in docs/methods.md section 3,
the verified 12-document fixture there, and the course notes' kappa example."""

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats import inter_rater

from tests.property_examples import examples
from workbench.agreement import (
    binarise,
    bootstrap_interval,
    cluster_draws,
    cohen_kappa,
    cohen_kappa_interval,
    cohen_kappa_of_draws,
    confusion_matrix,
    fleiss_kappa,
    fleiss_kappa_of_draws,
    kappa_reading,
    krippendorff_alpha,
    landis_koch_reading,
    merge_grades,
    pairwise_percent_agreement,
    percent_agreement,
    percentile_interval,
    scotts_pi,
    specific_agreement,
)

# methods.md 3.2: 12 documents, grades 0-3, values verified against sklearn, statsmodels,
# nltk, irrCAC and krippendorff.
FIXTURE_A = [0, 1, 2, 3, 0, 1, 2, 2, 3, 0, 1, 0]
FIXTURE_B = [0, 1, 1, 3, 0, 2, 2, 3, 3, 1, 1, 0]

# The course notes (003): Rel/Rel 75, Rel/NR 25, NR/Rel 75, NR/NR 225.
NOTES_A = [1] * 75 + [1] * 25 + [0] * 75 + [0] * 225
NOTES_B = [1] * 75 + [0] * 25 + [1] * 75 + [0] * 225

SETTINGS = settings(max_examples=examples(40), deadline=None)


def label_pairs(max_grade: int = 3):
    """Two aligned grade vectors of the same length (10 to 40 documents)."""
    return st.integers(10, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, max_grade), min_size=n, max_size=n),
            st.lists(st.integers(0, max_grade), min_size=n, max_size=n),
        )
    )


# --------------------------------------------------------------------------- fixtures


def test_methods_fixture_two_raters():
    assert percent_agreement(FIXTURE_A, FIXTURE_B) == pytest.approx(0.6667, abs=1e-4)
    assert cohen_kappa(FIXTURE_A, FIXTURE_B) == pytest.approx(0.5556, abs=1e-4)
    assert cohen_kappa(FIXTURE_A, FIXTURE_B, weights="linear") == pytest.approx(0.7303, abs=1e-4)
    assert cohen_kappa(FIXTURE_A, FIXTURE_B, weights="quadratic") == pytest.approx(0.8644, abs=1e-4)
    assert scotts_pi(FIXTURE_A, FIXTURE_B) == pytest.approx(0.5514, abs=1e-4)


def test_methods_fixture_many_rater_coefficients_on_two_raters():
    ratings = np.array([FIXTURE_A, FIXTURE_B], dtype=float).T
    assert fleiss_kappa(ratings) == pytest.approx(0.5514, abs=1e-4)
    expected = {"nominal": 0.5701, "ordinal": 0.8697, "interval": 0.8693}
    for level, value in expected.items():
        assert krippendorff_alpha(ratings, level=level) == pytest.approx(value, abs=1e-4)


def test_methods_fixture_kappa_standard_error_and_interval():
    estimate = cohen_kappa_interval(FIXTURE_A, FIXTURE_B)
    assert estimate.se == pytest.approx(0.1770, abs=1e-4)
    assert (estimate.low, estimate.high) == pytest.approx((0.209, 0.902), abs=1e-3)
    assert estimate.n == 12


def test_course_notes_example_kappa_and_reading():
    assert confusion_matrix(NOTES_A, NOTES_B, labels=[1, 0]).tolist() == [[75, 25], [75, 225]]
    assert percent_agreement(NOTES_A, NOTES_B) == 0.75
    kappa = cohen_kappa(NOTES_A, NOTES_B)
    assert kappa == pytest.approx(0.4286, abs=1e-4)
    assert kappa_reading(kappa) == "not good"
    assert landis_koch_reading(kappa) == "moderate"


def test_specific_agreement_on_the_course_notes_table():
    positive, negative = specific_agreement(NOTES_A, NOTES_B)
    assert positive == pytest.approx(2 * 75 / (2 * 75 + 25 + 75))
    assert negative == pytest.approx(2 * 225 / (2 * 225 + 25 + 75))


def test_specific_agreement_is_undefined_without_a_category():
    positive, negative = specific_agreement([0, 0, 0], [0, 0, 0])
    assert np.isnan(positive)
    assert negative == 1.0


def test_specific_agreement_needs_binary_labels():
    with pytest.raises(ValueError, match="binary"):
        specific_agreement([0, 2], [0, 1])


# --------------------------------------------------------------------------- references


@SETTINGS
@given(label_pairs(), st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_matches_sklearn(pair, weights):
    a, b = pair
    labels = [0, 1, 2, 3]  # fixed, so weights are distances on the full grade scale
    expected = cohen_kappa_score(a, b, labels=labels, weights=weights)
    actual = cohen_kappa(a, b, weights=weights, labels=labels)
    if np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == pytest.approx(expected, abs=1e-12)


@SETTINGS
@given(label_pairs(), st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_standard_error_matches_statsmodels(pair, weights):
    a, b = pair
    if len(set(a) | set(b)) < 2:
        return
    table = confusion_matrix(a, b, labels=[0, 1, 2, 3])
    reference = inter_rater.cohens_kappa(table, wt=weights)
    estimate = cohen_kappa_interval(a, b, weights=weights, labels=[0, 1, 2, 3])
    assert estimate.kappa == pytest.approx(reference.kappa, abs=1e-12)
    if np.isnan(reference.std_kappa):  # statsmodels: sqrt of a rounding-negative variance
        assert estimate.se == pytest.approx(0.0, abs=1e-6)
        return
    # compare variances: a variance that is 0 up to rounding (1e-17) has a square root of
    # about 1e-8 in statsmodels and exactly 0 here
    assert estimate.se**2 == pytest.approx(reference.std_kappa**2, abs=1e-12)
    # the bounds are kappa -+ z se: the same rounding, through a square root (sqrt(1e-12) =
    # 1e-6) and z (1.96), allows 2e-6 where the variance is 0 up to rounding
    bound = 2e-6 if reference.std_kappa < 1e-5 else 1e-7
    assert estimate.low == pytest.approx(reference.kappa_low, abs=bound)
    assert estimate.high == pytest.approx(reference.kappa_upp, abs=bound)


def test_kappa_interval_widens_with_confidence():
    narrow = cohen_kappa_interval(FIXTURE_A, FIXTURE_B, confidence=0.8)
    wide = cohen_kappa_interval(FIXTURE_A, FIXTURE_B, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high
    assert narrow.se == wide.se


@SETTINGS
@given(label_pairs())
def test_confusion_matrix_matches_sklearn(pair):
    a, b = pair
    expected = sk_confusion_matrix(a, b, labels=[0, 1, 2, 3])
    assert (confusion_matrix(a, b, labels=[0, 1, 2, 3]) == expected).all()


def test_confusion_matrix_follows_the_given_label_order():
    table = confusion_matrix(["rel", "non", "rel"], ["non", "non", "rel"], labels=["rel", "non"])
    assert table.tolist() == [[1, 1], [0, 1]]
    with pytest.raises(ValueError, match="repeats"):
        confusion_matrix([0, 1], [1, 0], labels=[0, 1, 1])


@SETTINGS
@given(label_pairs())
def test_two_rater_fleiss_kappa_is_scotts_pi(pair):
    a, b = pair
    if len(set(a) | set(b)) < 2:
        return
    assert fleiss_kappa(np.array([a, b], dtype=float).T) == pytest.approx(scotts_pi(a, b))


def test_pairwise_percent_agreement_pools_judge_pairs():
    nan = np.nan
    ratings = np.array([[1, 1, 1], [1, 0, nan], [0, 0, nan], [0, nan, nan], [1, 0, 0]])
    # agreeing pairs 3 + 0 + 1 + 0 + 1 over pairs 3 + 1 + 1 + 0 + 3
    assert pairwise_percent_agreement(ratings) == pytest.approx(5 / 8)
    two = np.array([FIXTURE_A, FIXTURE_B], dtype=float).T
    assert pairwise_percent_agreement(two) == pytest.approx(percent_agreement(FIXTURE_A, FIXTURE_B))
    assert np.isnan(pairwise_percent_agreement([[1, nan], [nan, 0]]))


@SETTINGS
@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(5, 40))
def test_fleiss_kappa_matches_statsmodels_with_constant_judges(seed, judges, items):
    ratings = np.random.default_rng(seed).integers(0, 4, size=(items, judges))
    table, _ = inter_rater.aggregate_raters(ratings, n_cat=4)
    expected = inter_rater.fleiss_kappa(table, method="fleiss")
    actual = fleiss_kappa(ratings.astype(float))
    if np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == pytest.approx(expected, abs=1e-12)


def test_fleiss_kappa_with_different_numbers_of_judges_by_hand():
    nan = np.nan
    ratings = np.array(
        [
            [1, 1, 1],  # n=3, P = (9 - 3)/6 = 1
            [1, 0, nan],  # n=2, P = (1 + 1 - 2)/2 = 0
            [0, 0, nan],  # n=2, P = (4 - 2)/2 = 1
            [0, nan, nan],  # one rating: left out
            [1, 0, 0],  # n=3, P = (1 + 4 - 3)/6 = 1/3
        ]
    )
    p_bar = (1 + 0 + 1 + 1 / 3) / 4
    p_one = (3 + 1 + 0 + 1) / 10
    p_e = p_one**2 + (1 - p_one) ** 2
    assert fleiss_kappa(ratings) == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_fleiss_kappa_ignores_missing_cells_of_complete_items():
    ratings = np.array([[2, 2, 0], [1, 2, 1], [0, 0, 0], [2, 1, 1]], dtype=float)
    padded = np.hstack([ratings, np.full((4, 2), np.nan)])
    assert fleiss_kappa(padded) == pytest.approx(fleiss_kappa(ratings))


@SETTINGS
@given(
    st.integers(0, 10_000),
    st.integers(2, 5),
    st.integers(5, 30),
    st.sampled_from(["nominal", "ordinal", "interval"]),
)
def test_krippendorff_alpha_matches_krippendorff_with_missing(seed, judges, items, level):
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 4, size=(items, judges)).astype(float)
    ratings[rng.random(ratings.shape) < 0.3] = np.nan
    pairable = (~np.isnan(ratings)).sum(1) >= 2
    if pairable.sum() < 2 or len(np.unique(ratings[pairable][~np.isnan(ratings[pairable])])) < 2:
        return
    expected = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
    assert krippendorff_alpha(ratings, level=level) == pytest.approx(expected, abs=1e-9)


def test_krippendorff_alpha_interval_uses_grade_values():
    # grades 0 and 3 only: the interval distance is 9 for every disagreement, so alpha
    # equals the nominal one; ordinal distances depend on frequencies, not values.
    ratings = np.array([[0, 3], [0, 0], [3, 3], [3, 0], [0, 0]], dtype=float)
    assert krippendorff_alpha(ratings, level="interval") == pytest.approx(
        krippendorff_alpha(ratings, level="nominal")
    )


# --------------------------------------------------------------------------- errors


def test_two_rater_inputs_are_checked():
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        cohen_kappa([0.0, np.nan], [0.0, 1.0])
    with pytest.raises(ValueError, match="not in labels"):
        cohen_kappa([0, 2], [0, 1], labels=[0, 1])
    with pytest.raises(ValueError, match="at least one item"):
        percent_agreement([], [])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([0, 1], [1, 0], weights="cubic")


def test_many_rater_inputs_are_checked():
    with pytest.raises(ValueError, match="items x judges"):
        fleiss_kappa([0, 1, 2])
    with pytest.raises(ValueError, match="two judges"):
        krippendorff_alpha([[1, np.nan], [0, np.nan]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 0], [0, 0]], level="ratio")


def test_kappa_is_undefined_on_a_single_category():
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert np.isnan(cohen_kappa_interval([1, 1], [1, 1]).se)
    assert kappa_reading(float("nan")) == "undefined"


# --------------------------------------------------------------------------- readings


@pytest.mark.parametrize(
    ("kappa", "reading"),
    [(0.95, "good"), (0.81, "good"), (0.8, "fair"), (0.7, "fair"), (0.67, "fair"),
     (0.66, "not good"), (-0.2, "not good")],
)  # fmt: skip
def test_kappa_reading_follows_the_course_notes(kappa, reading):
    assert kappa_reading(kappa) == reading


@pytest.mark.parametrize(
    ("kappa", "reading"),
    [(-0.1, "poor"), (0.0, "slight"), (0.2, "slight"), (0.3, "fair"), (0.5, "moderate"),
     (0.7, "substantial"), (0.8, "substantial"), (0.9, "almost perfect")],
)  # fmt: skip
def test_landis_koch_reading(kappa, reading):
    assert landis_koch_reading(kappa) == reading


# --------------------------------------------------------------------------- bootstrap


def test_topic_bootstrap_interval_of_a_mean_matches_the_normal_interval():
    topic_values = np.random.default_rng(3).normal(0.5, 0.2, size=60)

    def mean_of(clusters: list[int]) -> float:
        return float(topic_values[clusters].mean())

    low, high = bootstrap_interval(mean_of, 60, n_resamples=2000, seed=1)
    half_width = 1.96 * topic_values.std(ddof=0) / np.sqrt(60)
    assert low == pytest.approx(topic_values.mean() - half_width, abs=0.01)
    assert high == pytest.approx(topic_values.mean() + half_width, abs=0.01)
    assert bootstrap_interval(mean_of, 60, n_resamples=2000, seed=1) == (low, high)


def test_topic_bootstrap_keeps_all_documents_of_a_drawn_topic():
    # per-topic judgements of two assessors; kappa over the documents of the drawn topics
    topics = [
        ([1, 1, 0, 0], [1, 1, 0, 0]),
        ([1, 0, 0, 0], [1, 1, 0, 0]),
        ([1, 1, 1, 0], [0, 1, 1, 0]),
    ]
    seen_sizes: set[int] = set()

    def kappa_of(clusters: list[int]) -> float:
        a = [g for t in clusters for g in topics[t][0]]
        b = [g for t in clusters for g in topics[t][1]]
        seen_sizes.add(len(a))
        return cohen_kappa(a, b)

    low, high = bootstrap_interval(kappa_of, 3, n_resamples=200, confidence=0.9)
    everything = kappa_of([0, 1, 2])
    assert seen_sizes == {12}
    assert low <= everything <= high
    assert high <= 1.0


def test_bootstrap_interval_drops_undefined_resamples():
    assert np.isnan(bootstrap_interval(lambda _: float("nan"), 5, n_resamples=20)[0])
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_interval(lambda _: 0.0, 5, n_resamples=0)


# --------------------------------------------------------------------------- grades


def test_binarise_at_the_relevance_level():
    assert binarise([0, 1, 2, 3], 2).tolist() == [0, 0, 1, 1]
    assert binarise([0, 1, 2, 3], 1).dtype.kind == "i"
    with_missing = binarise([0, np.nan, 3], 1)
    assert with_missing[0] == 0 and np.isnan(with_missing[1]) and with_missing[2] == 1


@pytest.mark.parametrize(
    ("grades", "options", "final"),
    [
        ([2, 2, 1], {"rule": "majority"}, 2),
        ([0, 1, 1, 2], {"rule": "majority"}, 1),
        ([0, 2], {"rule": "majority"}, None),
        ([0, 2], {"rule": "majority", "tie": "higher"}, 2),
        ([0, 2], {"rule": "majority", "tie": "lower"}, 0),
        ([0, 0, 3, 3, 1], {"rule": "majority", "tie": "higher"}, 3),
        ([1, None, 1, 0], {"rule": "majority"}, 1),
        ([1, 2], {"rule": "mean"}, 2),  # 1.5 rounds half up
        ([0, 1, 1, 1], {"rule": "mean"}, 1),  # 0.75
        ([0, 0, 1], {"rule": "mean"}, 0),  # 0.33
        ([2, 3, 3], {"rule": "mean"}, 3),  # 2.67
        ([0, 2, 1], {"rule": "any"}, 2),
        ([0, 0], {"rule": "any"}, 0),
        ([3, 1, 2], {"rule": "all"}, 1),
        ([3, 0], {"rule": "all"}, 0),
        ([2, 0, 1], {"rule": "primary", "primary_index": 1}, 0),
        ([2, None, 1], {"rule": "primary", "primary_index": 1}, None),
        ([None, None], {"rule": "majority"}, None),
    ],
)
def test_merge_rules_on_hand_made_cases(grades, options, final):
    assert merge_grades(grades, **options) == final


def test_merge_rule_options_are_checked():
    with pytest.raises(ValueError, match="rule"):
        merge_grades([1, 0], rule="median")
    with pytest.raises(ValueError, match="tie"):
        merge_grades([1, 0], rule="majority", tie="coin")
    with pytest.raises(ValueError, match="primary_index"):
        merge_grades([1, 0], rule="primary")
    with pytest.raises(ValueError, match="outside"):
        merge_grades([1, 0], rule="primary", primary_index=2)


def test_kappa_standard_error_is_exactly_zero_under_perfect_agreement():
    # Found by hypothesis: rounding in spread - (kappa - p_e (1 - kappa))^2 gave se ~1e-8.
    labels = [int(x) for x in np.random.default_rng(12).integers(0, 3, 12)]
    estimate = cohen_kappa_interval(labels, labels)
    assert estimate.kappa == pytest.approx(1.0)
    assert estimate.se == 0.0
    assert (estimate.low, estimate.high) == (estimate.kappa, estimate.kappa)


def _sparse_ratings(rng: np.random.Generator, items: int, judges: int) -> np.ndarray:
    """items x judges grades 0-3, most cells NaN (each judge grades some items), so that items
    have 0, 1, 2 or more grades: the shape of a campaign's label matrix."""
    grades = rng.integers(0, 4, size=(items, judges)).astype(float)
    grades[rng.random((items, judges)) < 0.6] = np.nan
    return grades


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_of_draws_equals_fleiss_kappa_of_the_gathered_items(seed):
    rng = np.random.default_rng(seed)
    ratings = _sparse_ratings(rng, 120, 5)
    ratings[:10] = 2.0  # a topic of one category: a resample of it alone has no kappa
    ratings[10:20, 1:] = np.nan  # a topic without a pairable item
    topic_of = np.repeat(np.arange(12), 10)
    clusters = [np.flatnonzero(topic_of == t) for t in range(12)]
    draws = cluster_draws(12, 300, seed)
    draws[0] = 0  # only the one-category topic
    draws[1] = 1  # only the topic without pairs
    draws[2, :] = [0, 1] * 6
    fast = fleiss_kappa_of_draws(ratings, clusters, draws)

    def gathered(row: np.ndarray) -> float:
        try:
            return fleiss_kappa(ratings[np.concatenate([clusters[t] for t in row])])
        except ValueError:  # no item with two grades
            return float("nan")

    slow = np.array([gathered(row) for row in draws])
    assert np.isnan(fast[0]) and np.isnan(slow[0])
    assert np.isnan(fast[1]) and np.isnan(slow[1])
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isfinite(fast[3:]).all()
    # the same draws as bootstrap_interval's (same seed): the same interval
    unedited = fleiss_kappa_of_draws(ratings, clusters, cluster_draws(12, 300, seed))
    expected = bootstrap_interval(
        lambda row: gathered(np.array(row)), 12, n_resamples=300, seed=seed
    )
    assert percentile_interval(unedited) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(4))
def test_cohen_kappa_of_draws_is_cohen_kappa_of_the_gathered_items(seed, weights):
    """Bit for bit: a resample's confusion matrix is the sum of its topics' (integer counts),
    and its kappa is computed as cohen_kappa computes it."""
    rng = np.random.default_rng(seed)
    labels = [0, 1, 2]
    a = rng.integers(0, 3, size=150)
    b = np.where(rng.random(150) < 0.6, a, rng.integers(0, 3, size=150))
    a[:15] = b[:15] = 1  # a topic of one category: a resample of it alone has no kappa
    topic_of = rng.permutation(np.repeat(np.arange(10), 15))
    topic_of[:15], topic_of[15:][topic_of[15:] == 0] = 0, 9
    clusters = [np.flatnonzero(topic_of == t) for t in range(10)]
    draws = cluster_draws(10, 200, seed)
    draws[0] = 0  # only the one-category topic
    fast = cohen_kappa_of_draws(a, b, clusters, draws, labels=labels, weights=weights)

    def gathered(row: np.ndarray) -> float:
        rows = np.concatenate([clusters[t] for t in row])
        return cohen_kappa(a[rows], b[rows], labels=labels, weights=weights)

    slow = np.array([gathered(row) for row in draws])
    assert np.isnan(fast[0]) and np.isnan(slow[0])
    np.testing.assert_array_equal(fast, slow)
    assert np.isfinite(fast[1:]).all()


def test_percentile_interval_leaves_out_undefined_resamples():
    assert percentile_interval(np.array([np.nan, 1.0, 2.0, 3.0]), 0.5) == (1.5, 2.5)
    low, high = percentile_interval(np.array([np.nan, np.nan]))
    assert np.isnan(low) and np.isnan(high)
