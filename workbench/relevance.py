"""The one relevance threshold: a grade counts as relevant when grade >= level (trec_eval -l)."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np


@overload
def is_relevant(grade: int, level: int) -> bool: ...
@overload
def is_relevant(grade: np.ndarray, level: int) -> np.ndarray: ...
def is_relevant(grade, level):
    """grade >= level, for one grade (a bool) or a numpy array of grades (a bool array)."""
    return grade >= level
