"""trec_eval's ordering of a run's lines, and the relevance of each ranked document.

trec_eval ranks a topic's lines by score descending, ties by docno descending (``strcmp`` on
bytes); the rank column is ignored.  trec_eval 9.0.8 compared scores as 32-bit floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise

import numpy as np


def as_bytes_array(docnos: Sequence[str] | np.ndarray) -> np.ndarray:
    """Docnos as a fixed-width bytes ('S') array (utf-8), which numpy compares like strcmp."""
    if isinstance(docnos, np.ndarray) and docnos.dtype.kind == "S":
        return docnos
    if len(docnos) == 0:
        return np.zeros(0, dtype="S1")
    return np.array([d.encode("utf-8", "surrogateescape") for d in docnos], dtype=bytes)


def trec_order(
    docnos: Sequence[str] | np.ndarray, scores: np.ndarray, *, float32: bool = False
) -> np.ndarray:
    """Indices that order the lines: score descending, ties by docno descending.

    With ``float32`` the scores are first rounded to 32-bit floats (trec_eval 9.0.8).
    """
    keys = np.asarray(scores, dtype=np.float32 if float32 else np.float64)
    names = as_bytes_array(docnos)
    n = len(keys)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    if in_trec_order(names, keys):
        return np.arange(n, dtype=np.int64)
    return np.lexsort((names, keys))[::-1].astype(np.int64)


def in_trec_order(docnos: np.ndarray, keys: np.ndarray) -> bool:
    """Whether the lines already are in trec order (checked without sorting)."""
    step = keys[1:] - keys[:-1]
    if np.any(step > 0):
        return False
    ties = step == 0
    return not np.any(ties & (docnos[1:] >= docnos[:-1]))


def trec_order_blocks(
    docnos: np.ndarray, scores: np.ndarray, offsets: np.ndarray, *, float32: bool = False
) -> Iterator[tuple[int, int, np.ndarray | None]]:
    """The trec order of every CSR segment [offsets[i], offsets[i+1]), a block of whole
    segments (about ``_BLOCK`` rows) at a time: ``(first, last, order)`` for segments first
    to last - 1, ``order`` their rows as offsets from offsets[first] in trec order, or None
    when they already are; so that no permutation of the whole run is ever held.

    Segments whose scores rise anywhere are sorted one by one; elsewhere only the runs of
    tied scores are reordered (docno descending), all together.
    """
    keys = np.asarray(scores, dtype=np.float32) if float32 else np.asarray(scores, dtype=np.float64)
    n = len(keys)
    if not n:
        return
    first_segments = np.searchsorted(offsets, np.arange(0, n, _BLOCK), side="right") - 1
    cuts = [*sorted(set(first_segments.tolist())), len(offsets) - 1]
    for first, last in pairwise(cuts):
        lo, hi = int(offsets[first]), int(offsets[last])
        if hi > lo:
            yield (
                first,
                last,
                _block_order(docnos[lo:hi], keys[lo:hi], offsets[first : last + 1] - lo),
            )


_BLOCK = 1 << 18


def _block_order(docnos: np.ndarray, keys: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """:func:`trec_order_blocks` of one block of whole segments (``offsets`` from 0 to
    ``len(keys)``)."""
    n = len(keys)
    if n < 2:
        return None
    inner = offsets[1:-1]
    inner = inner[(inner > 0) & (inner < n)]
    same_segment = np.ones(n - 1, dtype=bool)
    same_segment[inner - 1] = False
    step = keys[1:] - keys[:-1]
    rising = np.flatnonzero((step > 0) & same_segment)
    tied = np.flatnonzero((step == 0) & same_segment)
    tied = tied[docnos[tied + 1] >= docnos[tied]]
    if not len(rising) and not len(tied):
        return None
    order = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    unsorted = sorted(set((np.searchsorted(offsets, rising, side="right") - 1).tolist()))
    for seg in unsorted:
        lo, hi = int(offsets[seg]), int(offsets[seg + 1])
        order[lo:hi] = lo + np.lexsort((docnos[lo:hi], keys[lo:hi]))[::-1]
    if len(tied):
        _order_ties(order, docnos, keys, offsets, same_segment, np.array(unsorted, dtype=int))
    return order


def _order_ties(
    order: np.ndarray,
    docnos: np.ndarray,
    keys: np.ndarray,
    offsets: np.ndarray,
    same_segment: np.ndarray,
    done: np.ndarray,
) -> None:
    """Within score-sorted segments, order each run of equal scores by docno descending."""
    n = len(keys)
    boundary = np.ones(n, dtype=bool)
    boundary[1:] = (keys[1:] != keys[:-1]) | ~same_segment
    group = np.cumsum(boundary) - 1
    sizes = np.bincount(group)
    rows = np.flatnonzero(sizes[group] > 1)
    if len(done):
        segment = np.searchsorted(offsets, rows, side="right") - 1
        sorted_already = np.zeros(len(offsets), dtype=bool)
        sorted_already[done] = True
        rows = rows[~sorted_already[segment]]
    if not len(rows):
        return
    ranked = np.lexsort((docnos[rows], -group[rows]))[::-1]
    order[rows] = rows[ranked]


def strcmp_key(text: str) -> bytes:
    """Sort key comparing ids as trec_eval's ``strcmp`` does (bytes of the utf-8 text)."""
    return text.encode("utf-8", "surrogateescape")


def first_repeated(docnos: Iterable[bytes]) -> bytes | None:
    """The smallest (``strcmp`` order) docno given twice, as trec_eval reports it, or None."""
    ordered = sorted(bytes(d) for d in docnos)
    return next((a for a, b in pairwise(ordered) if a == b), None)
