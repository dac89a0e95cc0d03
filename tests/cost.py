"""Cost-of-input checks: the time of a parser as a ratio across input sizes, not a wall time.

`growth(parse, make, n)` times `parse(make(n))` and `parse(make(16 n))`, each the best of a
few runs in processor time (the least disturbed by other processes), and returns the ratio.
A linear parser gives about 16, a quadratic one 256, a cubic one 4096. The bound,
LINEAR_BOUND = 16 ** 1.5 = 64 (a growth exponent of 1.5), sits far from both: on this shared
machine a linear reader's cost per byte still grows by up to about 2.5 times once its arrays
outgrow the processor's caches (measured: a numpy pass over 0.75 MB costs 0.76 ns/byte, over
48 MB 1.74 ns/byte, under load), which a 4x step with a bound of 6 cannot tell from noise.
Sizes are chosen so that the small parse takes milliseconds and fixed costs do not hide the
growth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FACTOR = 16
LINEAR_BOUND = FACTOR**1.5
REPEATS = 5


def cpu_time(parse: Callable[[Any], object], data: Any) -> float:
    """The processor time of parse(data): time spent by this process only, so that other
    processes sharing the machine do not count (their effect on caches still does)."""
    start = time.process_time()
    parse(data)
    return time.process_time() - start


def growth(parse: Callable[[Any], object], make: Callable[[int], Any], n: int) -> float:
    """cost(FACTOR n) / cost(n): each cost the least of REPEATS processor times, the sizes
    timed alternately so that a disturbance hits both alike."""
    small, large = make(n), make(FACTOR * n)
    parse(small)  # warm caches and imports
    best_small = best_large = float("inf")
    for _ in range(REPEATS):
        best_small = min(best_small, cpu_time(parse, small))
        best_large = min(best_large, cpu_time(parse, large))
    return best_large / best_small


def on_disk(folder: Path, text: Callable[[int], str]) -> Callable[[int], Path]:
    """`make` for readers of files: writes text(n) once, outside the timings."""

    def make(n: int) -> Path:
        path = folder / f"input-{n}.txt"
        path.write_text(text(n), encoding="utf-8")
        return path

    return make


def refused(parse: Callable[[Any], object], error: type[Exception]) -> Callable[[Any], object]:
    """`parse`, for inputs it must refuse: the expected error is part of the work timed."""

    def run(data: Any) -> object:
        try:
            return parse(data)
        except error:
            return None

    return run
