"""Tukey HSD's p-values: our vectorised studentized-range sf against scipy's (issue 29, §2).

The scale benchmark's case (benchmarks/scale, --fraction 0.02): 150 runs x 5 topics, so
11,175 pairs, k = 150 means and df = 149 x 4 = 596. The scores are random (seed 29: a run
quality 0.3-2.0 as there, plus noise, so that p ranges from ~0 to 1); the
q of each pair is the paired Tukey statistic |x_i - x_j| / sqrt(V_E / n). Times
`workbench.studentized_range.studentized_range_sf` on all pairs at once and
`scipy.stats.studentized_range.sf` pair by pair (on all pairs, or on `--sample N` of them,
the total then extrapolated and marked so), and prints the CPU seconds, the ratio and the
largest absolute difference of the p-values on the pairs both computed.

Usage: python benchmarks/bench_studentized_range.py [--runs 150] [--topics 5] [--sample N]
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.stats import two_way_anova  # noqa: E402
from workbench.studentized_range import studentized_range_sf  # noqa: E402


def tukey_case(runs: int, topics: int, seed: int = 29) -> tuple[np.ndarray, int, int]:
    """The q of every pair, k and df of a random runs x topics score matrix."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.3, 2.0, size=(runs, 1))  # as the scale benchmark's runs
    scores = 0.1 * quality + rng.normal(0, 0.03, size=(runs, topics))
    anova = two_way_anova(scores)
    means = scores.mean(1)
    se = np.sqrt(anova.v_e / topics)
    q = np.array([abs(means[i] - means[j]) / se for i, j in combinations(range(runs), 2)])
    return q, runs, anova.df_e


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--sample", type=int, help="time scipy on this many pairs only")
    args = parser.parse_args(argv)
    q, k, df = tukey_case(args.runs, args.topics)
    started = time.process_time()
    ours = studentized_range_sf(q, k, df)
    ours_s = time.process_time() - started
    picked = np.arange(len(q))
    if args.sample and args.sample < len(q):
        picked = np.random.default_rng(1).choice(len(q), args.sample, replace=False)
    started = time.process_time()
    theirs = np.array([stats.studentized_range.sf(x, k, df) for x in q[picked]])
    scipy_s = (time.process_time() - started) * len(q) / len(picked)
    extrapolated = f" (extrapolated from {len(picked)} pairs)" if len(picked) < len(q) else ""
    print(f"{len(q)} pairs, k = {k}, df = {df}; p from {ours.min():.3g} to {ours.max():.3g}")
    print(f"ours  (vectorised): {ours_s:8.2f} s CPU")
    print(f"scipy (pair by pair): {scipy_s:6.1f} s CPU{extrapolated}")
    print(f"ratio: {scipy_s / ours_s:.0f}x")
    print(f"largest |difference| of p: {np.abs(ours[picked] - theirs).max():.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
