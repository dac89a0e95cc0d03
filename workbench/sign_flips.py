"""Sign-flipped sums of the randomization test and of Wilcoxon's signed ranks (pure numpy;
docs/methods.md section 4).

A pair of runs with non-zero topic differences d (length n) is compared with the sums
sum_t s_t d_t over sign vectors s: all 2^n of them (exact) or B drawn at random. Every
pair with the same n flips the same signs, so the sign matrices are made once per n and
the random case of many pairs is one matrix product.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np


@functools.lru_cache(maxsize=21)
def all_signs(n: int) -> np.ndarray:
    """The 2^n sign vectors of length n (rows; int8, read-only): made once per n, as every
    pair of runs with n non-zero differences flips the same signs."""
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    signs = (1 - 2 * bits).astype(np.int8)
    signs.flags.writeable = False
    return signs


def rank_sums(ranks: np.ndarray) -> np.ndarray:
    """For each of the 2^n sign vectors of `all_signs`, the sum of the ranks it makes
    positive: the signed-rank statistic R+ under every flip (Wilcoxon's exact null)."""
    return (all_signs(len(ranks)) > 0) @ ranks


@functools.lru_cache(maxsize=32)
def random_signs(seed: int, n_resamples: int, n: int) -> np.ndarray:
    """n_resamples random sign vectors of length n (rows; int8, read-only), drawn from
    `default_rng(seed)` in blocks of 1,000 rows: the same for every pair of runs with n
    non-zero differences, so drawn once (a campaign's 11,175 pairs drew them 11,175 times)."""
    rng = np.random.default_rng(seed)
    blocks = [
        rng.choice((-1.0, 1.0), size=(min(1000, n_resamples - start), n))
        for start in range(0, n_resamples, 1000)
    ]
    signs = np.concatenate(blocks).astype(np.int8)
    signs.flags.writeable = False
    return signs


_BLOCK = 2_000_000  # flipped sums per block of the batched product (16 MB of float64)


def flip_hits(
    signs: np.ndarray, differences: Sequence[np.ndarray], edges: Sequence[float]
) -> list[int]:
    """#{s : |s . d| >= edge} over the rows s of ``signs`` (all 2^n or B random; n columns)
    for each d (length n) and its edge: one product signs @ [d_1 ... d_k] per block of
    columns instead of k products.

    The product's rounding may differ from the one-pair product ``signs @ d``, each being
    within gamma_n sum|d| of the exact sum (gamma_n ~ n eps, any summation order or FMA),
    so a column with a sum within 4 (n + 1) eps sum|d| of its edge is counted again with
    ``signs @ d``: every count is the one-pair product's, bit for bit.
    """
    as_float = signs.astype(float)
    width = max(1, _BLOCK // max(len(signs), 1))
    hits: list[int] = []
    for start in range(0, len(differences), width):
        block = differences[start : start + width]
        columns = np.column_stack(block)
        limits = np.asarray(edges[start : start + width], dtype=float)
        slack = 4 * (columns.shape[0] + 1) * np.finfo(float).eps * np.abs(columns).sum(0)
        margins = as_float @ columns  # then, in place: |s . d| - edge (>= 0: counted)
        np.abs(margins, out=margins)
        margins -= limits
        counts = (margins >= 0).sum(0)
        np.abs(margins, out=margins)
        unsure = (margins <= slack).any(0)
        for j in np.flatnonzero(unsure).tolist():
            counts[j] = (np.abs(signs @ block[j]) >= limits[j]).sum()
        hits.extend(int(c) for c in counts)
    return hits
