"""trec_eval's ordering of a run's lines, and the relevance of each ranked document.

trec_eval ranks a topic's lines by score descending, ties by docno descending (``strcmp`` on
bytes); the rank column is ignored.  trec_eval 9.0.8 compared scores as 32-bit floats.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def segment_trec_order(
    docnos: np.ndarray, scores: np.ndarray, offsets: np.ndarray, *, float32: bool = False
) -> np.ndarray:
    """A permutation putting every CSR segment [offsets[i], offsets[i+1]) in trec order.

    Checked vectorised over all segments at once; only the segments out of order are sorted.
    """
    keys = np.asarray(scores, dtype=np.float32 if float32 else np.float64)
    n = len(keys)
    order = np.arange(n, dtype=np.int64)
    if n < 2:
        return order
    step = keys[1:] - keys[:-1]
    bad = (step > 0) | ((step == 0) & (docnos[1:] >= docnos[:-1]))
    inner = offsets[1:-1]
    inner = inner[(inner > 0) & (inner < n)]
    bad[inner - 1] = False  # pairs across a segment boundary do not matter
    if not bad.any():
        return order
    bad_rows = np.flatnonzero(bad)
    segments = np.unique(np.searchsorted(offsets, bad_rows, side="right") - 1)
    for s in segments:
        lo, hi = int(offsets[s]), int(offsets[s + 1])
        order[lo:hi] = lo + np.lexsort((docnos[lo:hi], keys[lo:hi]))[::-1]
    return order
