"""Survival function of the studentized range, for one (k, df) and many q at once, and its
inverse (the critical value q_crit of Tukey's intervals).

Q = R / S with R the range of k independent standard normals and S^2 ~ chi^2_df / df
independent of R (Lund & Lund 1983, "Algorithm AS 190", Applied Statistics 32(2), 204-210;
Copenhaver & Holland 1988, J. Statist. Comput. Simul. 30, 1-15). With the largest normal
as the integration variable z, the range's survival function is

    P(R > y) = k ∫ φ(z) [Φ(z)^(k-1) - (Φ(z) - Φ(z - y))^(k-1)] dz            (df = inf)

and, S having density f(s) = 2 (df/2)^(df/2) / Γ(df/2) s^(df-1) exp(-df s^2 / 2),

    P(Q > q) = ∫_0^inf f(s) P(R > q s) ds.                                   (df finite)

Both integrals are written as tails (no 1 - cdf), so tiny p-values keep their relative
accuracy. Fixed Gauss-Legendre rules do the integrals, as matrix operations in numpy:
``log P(R > y)`` is computed once per k on Chebyshev nodes of panels of y in [0, Y_MAX]
(each value a composite Gauss-Legendre rule over the window of z where the integrand is
within e^-40 of its largest value on a coarse grid) and interpolated; the outer integral
over u = log s is a composite Gauss-Legendre rule over the window of u found the same way,
for all q together. Beyond Y_MAX = 56, P(R > y) < 1e-320 and is taken as 0.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.polynomial import chebyshev, legendre

from workbench.lazy import optimize, special

Y_MAX = 56.0
PANEL_EDGES = np.concatenate([np.arange(0.0, 8.0, 0.5), np.arange(8.0, Y_MAX + 1e-9, 1.0)])
CHEB_DEGREE = 24
COARSE = 96  # points of the coarse grid that finds an integrand's window
GRADES = np.concatenate([[0.0], 2.0 ** np.arange(-8, -3), np.arange(1, 9) / 8])  # from the peak
NODES = 12  # Gauss-Legendre nodes per panel
THRESHOLD = 40.0  # the window keeps where log integrand > its maximum - THRESHOLD
CHUNK = 2048  # q values integrated together

_GL_X, _GL_W = legendre.leggauss(NODES)


def _graded_rule(lo: np.ndarray, peak: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (one row per interval) of a composite Gauss-Legendre rule on
    [lo, hi] whose panels halve in width towards ``peak`` from either side (GRADES)."""
    edges = np.concatenate(
        [
            peak[:, None] - (peak - lo)[:, None] * GRADES[::-1],
            peak[:, None] + (hi - peak)[:, None] * GRADES[1:],
        ],
        axis=1,
    )
    width = np.diff(edges, axis=1)
    nodes = edges[:, :-1, None] + width[:, :, None] * (_GL_X + 1.0) / 2.0
    weights = width[:, :, None] * _GL_W / 2.0
    return nodes.reshape(len(lo), -1), weights.reshape(len(lo), -1)


def _window(grid: np.ndarray, logf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the grid point before the first point within THRESHOLD of the row's largest
    value, the largest value's point, and the grid point after the last one within."""
    keep = logf > logf.max(axis=1, keepdims=True) - THRESHOLD
    n = grid.shape[1]
    first = np.maximum(keep.argmax(axis=1) - 1, 0)
    last = np.minimum(n - 1 - keep[:, ::-1].argmax(axis=1) + 1, n - 1)
    rows = np.arange(len(grid))
    return grid[rows, first], grid[rows, logf.argmax(axis=1)], grid[rows, last]


def _log_range_integrand(z: np.ndarray, y: np.ndarray, k: float) -> np.ndarray:
    """log of k φ(z) [Φ(z)^(k-1) - (Φ(z) - Φ(z-y))^(k-1)], stable in the tails.

    = log k + log φ(z) + (k-1) log Φ(z) + log(1 - (1 - ρ)^(k-1)), ρ = Φ(z-y)/Φ(z).
    """
    log_phi_z = special.log_ndtr(z)
    log_rho = np.minimum(special.log_ndtr(z - y) - log_phi_z, 0.0)
    rho = np.exp(log_rho)
    with np.errstate(divide="ignore"):
        t = -(k - 1.0) * np.log1p(-np.minimum(rho, 1.0))  # (1 - ρ)^(k-1) = e^-t
        log_one_minus = np.where(
            log_rho < -30.0,
            np.log(k - 1.0) + log_rho - (k - 1.0) * rho / 2.0,  # t ~ (k-1) ρ, tiny
            np.log(-np.expm1(-t)),
        )
    return np.log(k) - 0.5 * z * z - 0.5 * np.log(2 * np.pi) + (k - 1.0) * log_phi_z + log_one_minus


def log_range_sf(y: np.ndarray, k: float) -> np.ndarray:
    """log P(R > y) for the range R of k standard normals, by quadrature (no interpolation)."""
    y = np.asarray(y, dtype=float)
    flat = y.ravel()
    top = np.maximum(flat / 2.0, np.sqrt(2.0 * np.log(k))) + 9.5
    grid = -9.5 + (top[:, None] + 9.5) * np.linspace(0.0, 1.0, COARSE)
    nodes, weights = _graded_rule(*_window(grid, _log_range_integrand(grid, flat[:, None], k)))
    logf = _log_range_integrand(nodes, flat[:, None], k)
    peak = logf.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a sum that underflows: log 0
        out = peak + np.log((weights * np.exp(logf - peak[:, None])).sum(axis=1))
    return np.where(flat <= 0, 0.0, np.minimum(out, 0.0)).reshape(y.shape)


class _RangeLogSf:
    """Piecewise Chebyshev interpolant of log P(R > y) on [0, Y_MAX] for one k (built by
    `_range_log_sf`, which keeps the last few: a Tukey HSD asks for one k twice)."""

    def __init__(self, k: float) -> None:
        lo, hi = PANEL_EDGES[:-1], PANEL_EDGES[1:]
        x = np.cos(np.pi * (np.arange(CHEB_DEGREE + 1) + 0.5) / (CHEB_DEGREE + 1))
        y = (lo[:, None] + hi[:, None]) / 2 + (hi - lo)[:, None] / 2 * x
        values = log_range_sf(y, k)
        self.coef = np.stack([chebyshev.chebfit(x, v, CHEB_DEGREE) for v in values])

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """Evaluate panel by panel (points sorted by panel), Clenshaw on each."""
        flat = y.ravel()
        panel = np.searchsorted(PANEL_EDGES, flat, side="right") - 1
        panel = np.clip(panel, 0, len(self.coef) - 1).astype(np.int16)
        order = np.argsort(panel, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(panel, minlength=len(self.coef)))])
        out = np.empty_like(flat)
        for i, coef in enumerate(self.coef):
            at = order[bounds[i] : bounds[i + 1]]
            if len(at):
                lo, hi = PANEL_EDGES[i], PANEL_EDGES[i + 1]
                x = np.clip((2 * flat[at] - lo - hi) / (hi - lo), -1.0, 1.0)
                out[at] = chebyshev.chebval(x, coef)
        out = np.where(flat > Y_MAX, -np.inf, np.minimum(np.where(flat <= 0, 0.0, out), 0.0))
        return out.reshape(y.shape)


@functools.lru_cache(maxsize=16)
def _range_log_sf(k: float) -> _RangeLogSf:
    """The interpolant of k (0.1-0.2 s of quadrature), kept for the next call (40 KB each)."""
    return _RangeLogSf(k)


def _log_chi_weight(u: np.ndarray, df: float) -> np.ndarray:
    """log f(e^u) + u for S = sqrt(chi^2_df / df): log 2 + c(df/2) + df (u - (e^(2u) - 1)/2),

    c(a) = a log a - a - log Γ(a), by Stirling's series for large a (no cancellation).
    """
    a = df / 2.0
    if a < 50:
        c = a * np.log(a) - a - special.gammaln(a)
    else:
        c = 0.5 * np.log(a / (2 * np.pi)) - 1 / (12 * a) + 1 / (360 * a**3) - 1 / (1260 * a**5)
    return np.log(2.0) + c + df * (u - np.expm1(2.0 * u) / 2.0)


def studentized_range_sf(q, k: float, df: float) -> np.ndarray:
    """P(Q > q) for the studentized range Q with k means and df degrees of freedom (df = inf
    allowed), for an array q; agrees with scipy.stats.studentized_range.sf (see module doc).
    """
    if not k > 1:
        raise ValueError(f"k must be > 1, not {k}")
    if not df > 0:
        raise ValueError(f"df must be > 0, not {df}")
    q = np.asarray(q, dtype=float)
    flat = q.ravel()
    out = np.full(flat.shape, np.nan)
    out[flat <= 0] = 1.0
    out[flat == np.inf] = 0.0
    todo = np.flatnonzero((flat > 0) & np.isfinite(flat))
    if len(todo):
        log_sf = _range_log_sf(k)
        for start in range(0, len(todo), CHUNK):  # bounded memory: CHUNK x 312 nodes
            at = todo[start : start + CHUNK]
            out[at] = np.exp(log_sf(flat[at])) if np.isinf(df) else _outer(flat[at], log_sf, df)
    return out.reshape(q.shape)


def studentized_range_isf(p: float, k: float, df: float) -> float:
    """The q with P(Q > q) = p (0 < p < 1): scipy.stats.studentized_range.isf(p, k, df), as
    a root of log P(Q > q) - log p found by Brent's method on the same quadrature as
    `studentized_range_sf` (the interpolant built once; relative tolerance 1e-12)."""
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), not {p}")
    if not k > 1:
        raise ValueError(f"k must be > 1, not {k}")
    if not df > 0:
        raise ValueError(f"df must be > 0, not {df}")
    log_sf = _range_log_sf(k)

    def gap(q: float) -> float:
        at = np.array([q])
        sf = np.exp(log_sf(at))[0] if np.isinf(df) else _outer(at, log_sf, df)[0]
        return float(np.log(sf) - np.log(p)) if sf > 0 else -np.inf

    high = 1.0
    while gap(high) > 0:  # P(Q > q) falls from 1 at q = 0 to 0: bracket the root
        high *= 2.0
    return float(optimize.brentq(gap, high / 2.0 if high > 1 else 1e-12, high, rtol=1e-12))


def _outer(q: np.ndarray, log_sf: _RangeLogSf, df: float) -> np.ndarray:
    """∫ f(s) P(R > q s) ds over u = log s, for every q."""
    half = COARSE // 2
    right = 0.5 * np.log1p(120.0 / df) + np.sqrt(60.0 / df)
    left_local = -(60.0 / df + np.sqrt(60.0 / df))
    local = np.linspace(left_local, right, half)
    left = np.minimum(left_local, left_local - np.log(q) - 1.0) - 1.0
    wide = left[:, None] + (right - left)[:, None] * np.linspace(0.0, 1.0, half)
    grid = np.sort(np.concatenate([np.broadcast_to(local, wide.shape), wide], axis=1), axis=1)
    logf = _log_chi_weight(grid, df) + log_sf(q[:, None] * np.exp(grid))
    nodes, weights = _graded_rule(*_window(grid, logf))
    logf = _log_chi_weight(nodes, df) + log_sf(q[:, None] * np.exp(nodes))
    peak = logf.max(axis=1)
    finite = np.isfinite(peak)
    total = (weights[finite] * np.exp(logf[finite] - peak[finite, None])).sum(axis=1)
    out = np.zeros(len(q))
    out[finite] = np.minimum(np.exp(peak[finite]) * total, 1.0)
    return out
