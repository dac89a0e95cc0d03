"""Cost-of-input checks: the time of a parser as a ratio across input sizes, not a wall time.

`growth(parse, make, n)` times `parse(make(n))` and `parse(make(4 n))`, each the best of a few
runs (the least disturbed by other processes), and returns the ratio. A linear parser gives
about 4; a quadratic one 16, a cubic one 64. Tests assert a bound well under the quadratic
ratio (LINEAR_BOUND) at sizes where the parse takes milliseconds, so that fixed costs do not
hide the growth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

FACTOR = 4
LINEAR_BOUND = 6.0
REPEATS = 5


def best_time(parse: Callable[[Any], object], data: Any, repeats: int = REPEATS) -> float:
    """The shortest of `repeats` timings of parse(data)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        parse(data)
        best = min(best, time.perf_counter() - start)
    return best


def growth(parse: Callable[[Any], object], make: Callable[[int], Any], n: int) -> float:
    """time(parse(make(FACTOR n))) / time(parse(make(n))), each the best of REPEATS."""
    small, large = make(n), make(FACTOR * n)
    parse(small)  # warm caches and imports
    return best_time(parse, large) / best_time(parse, small)


def refused(parse: Callable[[Any], object], error: type[Exception]) -> Callable[[Any], object]:
    """`parse`, for inputs it must refuse: the expected error is part of the work timed."""

    def run(data: Any) -> object:
        try:
            return parse(data)
        except error:
            return None

    return run
