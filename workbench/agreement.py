"""Inter-assessor agreement and merge rules: pure functions (numpy/scipy only).

Conventions (docs/methods.md section 3):

* Two-rater functions take two aligned label vectors ``a`` and ``b`` (one entry per
  document both judged; no missing values).
* Many-rater functions take ``ratings``, an items x judges array with ``NaN`` where a
  judge did not judge the item.
* ``labels`` fixes the ordered category list (so absent grades keep tables square and
  weighted kappa uses the right distances); by default it is the sorted union of the
  observed labels. Weighted-kappa distances are index distances in that list, as in
  scikit-learn and statsmodels.
* The relevance threshold is :func:`workbench.relevance.is_relevant`, applied here only by
  :func:`binarise`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import floor
from typing import Literal, get_args

import numpy as np

from workbench.relevance import is_relevant

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]
MergeRule = Literal["majority", "mean", "any", "all", "primary"]
TieRule = Literal["adjudicate", "higher", "lower"]

MERGE_RULES: tuple[str, ...] = get_args(MergeRule)
TIE_RULES: tuple[str, ...] = get_args(TieRule)


@dataclass(frozen=True)
class KappaEstimate:
    """Cohen's kappa with its large-sample standard error and a normal confidence interval."""

    kappa: float
    se: float
    low: float
    high: float
    confidence: float
    n: int


# --------------------------------------------------------------------------- helpers


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"expected two 1-d label vectors, got shapes {a.shape} and {b.shape}")
    if len(a) != len(b):
        raise ValueError(f"label vectors differ in length: {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError("no items: agreement needs at least one item judged by both")
    for name, v in (("a", a), ("b", b)):
        if v.dtype.kind == "f" and np.isnan(v).any():
            raise ValueError(f"{name} contains NaN: pass only items judged by both raters")
    return a, b


def _labels(labels, *vectors: np.ndarray) -> np.ndarray:
    observed = np.unique(np.concatenate(vectors))
    if labels is None:
        return observed
    labels = np.asarray(labels)
    if len(np.unique(labels)) != len(labels):
        raise ValueError(f"labels= repeats a label: {labels.tolist()}")
    missing = np.setdiff1d(observed, labels)
    if missing.size:
        raise ValueError(f"labels {missing.tolist()} occur in the data but not in labels=")
    return labels


def _ratings(ratings) -> np.ndarray:
    r = np.asarray(ratings, dtype=float)
    if r.ndim != 2:
        raise ValueError(f"ratings must be an items x judges array, got shape {r.shape}")
    return r


def _pairable(ratings) -> np.ndarray:
    """The items (rows) judged by at least two judges; an error if there is none."""
    r = _ratings(ratings)
    r = r[(~np.isnan(r)).sum(1) >= 2]
    if len(r) == 0:
        raise ValueError("no item has ratings from at least two judges")
    return r


def _category_counts(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(categories, n_ic): the sorted grades used and, per item, how many judges gave each."""
    categories = np.unique(r[~np.isnan(r)])
    counts = np.stack([(r == c).sum(1) for c in categories], axis=1).astype(float)
    return categories, counts.reshape(len(r), len(categories))


# --------------------------------------------------------------------------- two raters


def confusion_matrix(a, b, *, labels=None) -> np.ndarray:
    """k x k counts: entry [i, j] = #items a labelled ``labels[i]`` and b ``labels[j]``."""
    a, b = _pair(a, b)
    cats = _labels(labels, a, b)
    k, n = len(cats), len(a)
    values, inverse = np.unique(np.concatenate([cats, a, b]), return_inverse=True)
    position = np.empty(len(values), dtype=np.int64)
    position[inverse[:k]] = np.arange(k)  # sorted value index -> index in cats
    cell = position[inverse[k : k + n]] * k + position[inverse[k + n :]]
    return np.bincount(cell, minlength=k * k).reshape(k, k)


def percent_agreement(a, b) -> float:
    """Observed agreement p_o = #{i: a_i = b_i} / n."""
    a, b = _pair(a, b)
    return float(np.mean(a == b))


def _agreement_weights(k: int, weights: Weights) -> np.ndarray:
    """Agreement weights w_ij: identity, 1 - |i-j|/(k-1) (linear), 1 - (i-j)^2/(k-1)^2."""
    if weights is None or k == 1:
        return np.eye(k)
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / (k - 1)
    if weights == "linear":
        return 1.0 - distance
    if weights == "quadratic":
        return 1.0 - distance**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")


def _kappa_parts(a, b, weights: Weights, labels) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(p_o, p_e, proportions p_ij, agreement weights w_ij), weighted when asked."""
    return _table_kappa_parts(confusion_matrix(a, b, labels=labels), weights)


def _table_kappa_parts(
    counts: np.ndarray, weights: Weights
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """`_kappa_parts` of a confusion matrix of counts."""
    table = counts.astype(float)
    p = table / table.sum()
    w = _agreement_weights(len(p), weights)
    p_o = float((w * p).sum())
    p_e = float((w * np.outer(p.sum(1), p.sum(0))).sum())
    return p_o, p_e, p, w


def _chance_corrected(p_o: float, p_e: float) -> float:
    if np.isclose(p_e, 1.0):
        return float("nan")  # one category only: kappa undefined (0/0)
    return (p_o - p_e) / (1.0 - p_e)


def cohen_kappa(a, b, *, weights: Weights = None, labels=None) -> float:
    """Cohen's kappa (1960), weighted per Cohen (1968) when ``weights`` is given.

    kappa = (p_o - p_e) / (1 - p_e), p_o = sum_ij w_ij p_ij, p_e = sum_ij w_ij p_i. p_.j,
    with agreement weights w = identity (unweighted), 1 - |i-j|/(k-1) (linear) or
    1 - (i-j)^2/(k-1)^2 (quadratic). NaN when both raters use a single category.
    """
    p_o, p_e, _, _ = _kappa_parts(a, b, weights, labels)
    return _chance_corrected(p_o, p_e)


_CANCELLATION = 64 * np.finfo(float).eps


def cohen_kappa_interval(
    a, b, *, weights: Weights = None, labels=None, confidence: float = 0.95
) -> KappaEstimate:
    """Cohen's kappa with the Fleiss, Cohen & Everitt (1969) large-sample standard error.

    var = [sum_ij p_ij (w_ij - (wr_i + wc_j)(1 - kappa))^2 - (kappa - p_e (1 - kappa))^2]
          / (n (1 - p_e)^2),
    wr_i = sum_j p_.j w_ij, wc_j = sum_i p_i. w_ij (statsmodels ``std_kappa``);
    interval kappa -/+ z_{(1+confidence)/2} se.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    p_o, p_e, p, w = _kappa_parts(a, b, weights, labels)
    n = len(np.asarray(a))
    kappa = _chance_corrected(p_o, p_e)
    if np.isnan(kappa):
        nan = float("nan")
        return KappaEstimate(nan, nan, nan, nan, confidence, n)
    row, col = p.sum(1), p.sum(0)
    w_row, w_col = w @ col, row @ w
    spread = (p * (w - (w_row[:, None] + w_col[None, :]) * (1 - kappa)) ** 2).sum()
    excess = spread - (kappa - p_e * (1 - kappa)) ** 2
    if excess <= _CANCELLATION * spread:  # zero up to rounding (e.g. perfect agreement)
        excess = 0.0
    se = float(np.sqrt(excess / (n * (1 - p_e) ** 2)))
    from scipy import stats  # here, not at import: a CLI store command's start-up

    z = float(stats.norm.ppf((1 + confidence) / 2))
    return KappaEstimate(kappa, se, kappa - z * se, kappa + z * se, confidence, n)


def scotts_pi(a, b) -> float:
    """Scott's pi (1955): (p_o - p_e)/(1 - p_e), p_e = sum_c ((p_1c + p_2c)/2)^2."""
    table = confusion_matrix(a, b).astype(float)
    p = table / table.sum()
    pooled = (p.sum(0) + p.sum(1)) / 2
    return _chance_corrected(float(np.trace(p)), float((pooled**2).sum()))


def specific_agreement(a, b) -> tuple[float, float]:
    """Positive and negative specific agreement on binary labels (1 = relevant).

    PA = 2a/(2a + b + c), NA = 2d/(2d + b + c), a = both relevant, d = both non-relevant,
    b, c = the disagreements (Fleiss 1975). NaN when a category never occurs.
    """
    a, b = _pair(a, b)
    for name, v in (("a", a), ("b", b)):
        if not np.isin(v, (0, 1)).all():
            raise ValueError(f"{name} must be binary (0/1): binarise graded labels first")
    both = int(np.sum((a == 1) & (b == 1)))
    neither = int(np.sum((a == 0) & (b == 0)))
    disagree = len(a) - both - neither
    pa = 2 * both / (2 * both + disagree) if both + disagree else float("nan")
    na = 2 * neither / (2 * neither + disagree) if neither + disagree else float("nan")
    return pa, na


# --------------------------------------------------------------------------- many raters


def pairwise_percent_agreement(ratings) -> float:
    """Share of agreeing judge pairs among all pairs of judges of the same item.

    sum_i sum_c n_ic (n_ic - 1) / sum_i n_i (n_i - 1), pooled over items (an item with more
    judges has more pairs); with two judges it is :func:`percent_agreement`. NaN when no
    item has two judges.
    """
    _, counts = _category_counts(_ratings(ratings))
    n_i = counts.sum(1)
    pairs = float((n_i * (n_i - 1)).sum())
    if pairs == 0:
        return float("nan")
    return float((counts * (counts - 1)).sum()) / pairs


def fleiss_kappa(ratings) -> float:
    """Fleiss' kappa (1971), generalised to items with different numbers of judges.

    For item i with n_i >= 2 ratings and n_ic of them in category c:
    P_i = (sum_c n_ic^2 - n_i) / (n_i (n_i - 1)); P_bar = mean_i P_i;
    p_c = sum_i n_ic / sum_i n_i; P_e = sum_c p_c^2; kappa = (P_bar - P_e)/(1 - P_e).
    Items with fewer than two ratings are left out. With a constant n this is exactly
    Fleiss' kappa (statsmodels ``fleiss_kappa``); with two judges it equals Scott's pi.
    """
    _, counts = _category_counts(_pairable(ratings))
    n_i = counts.sum(1)
    p_bar = float(np.mean(((counts**2).sum(1) - n_i) / (n_i * (n_i - 1))))
    p_c = counts.sum(0) / n_i.sum()
    return _chance_corrected(p_bar, float((p_c**2).sum()))


def krippendorff_alpha(ratings, *, level: Level = "nominal") -> float:
    """Krippendorff's alpha = 1 - D_o/D_e from the coincidence matrix.

    Units with m_u >= 2 values are pairable; o_ck = sum_u #(c, k pairs in u)/(m_u - 1),
    n_c = sum_k o_ck, n = sum_c n_c, and
    alpha = 1 - (n - 1) sum_ck o_ck d_ck / sum_ck n_c n_k d_ck, with d_ck = [c != k]
    (nominal), (c - k)^2 (interval), or (sum_{g=c..k} n_g - (n_c + n_k)/2)^2 (ordinal).
    ``ratings`` is items x judges (the ``krippendorff`` package takes judges x items).
    """
    values, counts = _category_counts(_pairable(ratings))
    m_u = counts.sum(1)
    per_pair = counts / (m_u - 1)[:, None]
    coincidence = per_pair.T @ counts - np.diag(per_pair.sum(0))
    n_c = coincidence.sum(1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    elif level == "interval":
        delta = np.subtract.outer(values, values) ** 2
    elif level == "ordinal":
        through = np.cumsum(n_c)  # sum of n_g for g <= c
        index = np.arange(len(values))
        low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
        between = through[high] - (through - n_c)[low]  # sum of n_g for g from c to k
        delta = (between - np.add.outer(n_c, n_c) / 2) ** 2
    else:
        raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', not {level!r}")
    expected = (np.outer(n_c, n_c) * delta).sum()
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (coincidence * delta).sum() / expected)


# --------------------------------------------------------------------------- readings


def kappa_reading(kappa: float) -> str:
    """The course notes' reading: > 0.8 "good", 0.67 to 0.8 "fair", < 0.67 "not good"."""
    if np.isnan(kappa):
        return "undefined"
    if kappa > 0.8:
        return "good"
    if kappa >= 0.67:
        return "fair"
    return "not good"


def landis_koch_reading(kappa: float) -> str:
    """Landis & Koch (1977): < 0 poor, to .20 slight, .40 fair, .60 moderate,
    .80 substantial, above almost perfect."""
    if np.isnan(kappa):
        return "undefined"
    if kappa < 0:
        return "poor"
    for upper, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= upper:
            return word
    return "almost perfect"


# --------------------------------------------------------------------------- intervals


def cluster_draws(n_clusters: int, n_resamples: int, seed: int = 0) -> np.ndarray:
    """n_resamples x n_clusters indices of clusters drawn with replacement (the draws of
    `bootstrap_interval`, one resample per row)."""
    if n_clusters < 1:
        raise ValueError("bootstrap_interval needs at least one cluster")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    return np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))


def draw_counts(draws: np.ndarray, n_clusters: int) -> np.ndarray:
    """n_resamples x n_clusters: how many times each resample (a row of `cluster_draws`)
    drew each cluster."""
    return np.stack([np.bincount(row, minlength=n_clusters) for row in draws])


def percentile_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap `values`, leaving out the NaN ones (resamples
    where the statistic is undefined); (NaN, NaN) if none is defined."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_interval(
    statistic: Callable[[list[int]], float],
    n_clusters: int,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval resampling clusters (topics) with replacement.

    ``statistic`` receives the list of drawn cluster indices (with repeats) and returns
    the statistic over all items of those clusters. Resamples where it is NaN (e.g. a
    kappa on one category) are dropped; (NaN, NaN) if none is defined.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    draws = cluster_draws(n_clusters, n_resamples, seed)
    values = np.array([statistic(row.tolist()) for row in draws], dtype=float)
    return percentile_interval(values, confidence)


def fleiss_kappa_of_draws(ratings, clusters: Sequence[np.ndarray], draws: np.ndarray) -> np.ndarray:
    """`fleiss_kappa` over the items of each resample of clusters (`draws`, as
    `cluster_draws` makes them; `clusters[t]` the item rows of cluster t), without
    gathering the items: Fleiss' kappa is a ratio of sums over items, so with w_t the times
    cluster t is drawn, S_t = sum of P_i, N_t its pairable items, C_tc = sum of n_ic and
    M_t = sum of n_i over its items,
    P_bar = sum_t w_t S_t / sum_t w_t N_t, p_c = sum_t w_t C_tc / sum_t w_t M_t,
    kappa = (P_bar - P_e) / (1 - P_e) with P_e = sum_c p_c^2; NaN where a resample has no
    pairable item or one category only. Equal to `fleiss_kappa` of the gathered rows up to
    the order of floating-point sums (docs/methods.md section 3.3)."""
    r = _ratings(ratings)
    pairable = (~np.isnan(r)).sum(1) >= 2
    categories, counts = _category_counts(r)  # rows kept: clusters index them
    counts = counts * pairable[:, None]  # a category of unpairable items only counts 0
    n_i = counts.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_i = np.where(pairable, ((counts**2).sum(1) - n_i) / (n_i * (n_i - 1)), 0.0)
    sums = np.array([p_i[rows].sum() for rows in clusters])
    items = np.array([pairable[rows].sum() for rows in clusters], dtype=float)
    by_category = np.stack([counts[rows].sum(0) for rows in clusters]).reshape(
        len(clusters), len(categories)
    )
    weights = draw_counts(draws, len(clusters)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = weights @ sums / (weights @ items)
        drawn = weights @ by_category
        p_c = drawn / drawn.sum(1, keepdims=True)
        p_e = (p_c**2).sum(1)
        kappa = (p_bar - p_e) / (1.0 - p_e)
    kappa[np.isclose(p_e, 1.0) | ~np.isfinite(kappa)] = np.nan
    return kappa


def cohen_kappa_of_draws(
    a, b, clusters: Sequence[np.ndarray], draws: np.ndarray, *, labels, weights: Weights = None
) -> np.ndarray:
    """`cohen_kappa` of a and b over the items of each resample of clusters (`draws`, as
    `cluster_draws` makes them; `clusters[t]` the item rows of cluster t), without gathering
    the items: a resample's confusion matrix is sum_t w_t C_t, the clusters' matrices C_t
    weighted by how often each was drawn (integer counts, so the very matrix of the gathered
    items), and its kappa is computed as `cohen_kappa` computes it. NaN where a resample
    has one category only (docs/methods.md section 3.3)."""
    a, b = _pair(a, b)
    k = len(_labels(labels, a, b))
    per_cluster = np.stack(
        [confusion_matrix(a[rows], b[rows], labels=labels).ravel() for rows in clusters]
    )
    times = draw_counts(draws, len(clusters))
    tables = (times @ per_cluster).reshape(len(draws), k, k)
    kappas = np.empty(len(draws))
    with np.errstate(all="ignore"):
        for r, table in enumerate(tables):
            p_o, p_e, _, _ = _table_kappa_parts(table, weights)
            kappas[r] = _chance_corrected(p_o, p_e)
    return kappas


# --------------------------------------------------------------------------- grades


def binarise(grades, level: int) -> np.ndarray:
    """1 where grade >= level (relevant at the campaign's level), else 0; NaN stays NaN."""
    g = np.asarray(grades, dtype=float)
    binary = is_relevant(g, level).astype(float)
    binary[np.isnan(g)] = np.nan
    return binary if np.isnan(g).any() else binary.astype(np.int64)


def merge_grades(
    grades: Sequence[int],
    *,
    rule: MergeRule,
    tie: TieRule = "adjudicate",
    primary_index: int | None = None,
) -> int | None:
    """Final grade of one document from its judges' grades, or None = needs adjudication.

    * majority: the most frequent grade; a tie between grades goes to adjudication
      (None) or to the higher/lower tied grade (``tie``).
    * mean: the mean grade rounded half up (2.5 -> 3).
    * any: the maximum grade (relevant if any judge found it relevant, at every relevance
      level); all: the minimum grade (relevant only if every judge did).
    * primary: the grade of the judge at ``primary_index``; None if they did not judge
      (an entry of None in ``grades``). Other rules ignore None entries.
    """
    if rule not in MERGE_RULES:
        raise ValueError(f"rule must be one of {', '.join(MERGE_RULES)}, not {rule!r}")
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {', '.join(TIE_RULES)}, not {tie!r}")
    if rule == "primary":
        if primary_index is None:
            raise ValueError("rule 'primary' needs primary_index")
        if not 0 <= primary_index < len(grades):
            raise ValueError(f"primary_index {primary_index} outside 0..{len(grades) - 1}")
        grade = grades[primary_index]
        return None if grade is None else int(grade)
    given = [int(g) for g in grades if g is not None]
    if not given:
        return None
    if rule == "majority":
        counts = Counter(given).most_common()
        top = [g for g, c in counts if c == counts[0][1]]
        if len(top) == 1:
            return top[0]
        return None if tie == "adjudicate" else (max(top) if tie == "higher" else min(top))
    if rule == "mean":
        return floor(sum(given) / len(given) + 0.5)
    return max(given) if rule == "any" else min(given)
