"""64-bit keys of docnos and (topic, docno) pairs; grouping rows by topic; duplicate search."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from workbench.trec.scan import _decode


def docno_hash(docnos: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each bytes string of an 'S' array (vectorised FNV-style mixing).

    Independent of the array's width, so hashes of runs and qrels compare directly.
    """
    width = docnos.dtype.itemsize
    padded_width = -(-width // 8) * 8
    if padded_width != width:
        docnos = docnos.astype(f"S{padded_width}")
    words = docnos.view(np.uint64).reshape(len(docnos), padded_width // 8)
    h = np.full(len(docnos), 0xCBF29CE484222325, dtype=np.uint64)
    for j in range(words.shape[1]):
        word = words[:, j]
        mixed = h ^ word
        mixed *= np.uint64(0x100000001B3)
        mixed ^= mixed >> np.uint64(29)
        # an all-zero word is padding (docnos hold no NUL), so the hash ignores the width
        h = mixed if j == 0 else np.where(word != 0, mixed, h)
    return h


MIX = np.uint64(0x9E3779B97F4A7C15)


def starts_of_runs(ordered: np.ndarray) -> np.ndarray:
    """Indices where a sorted array takes a new value."""
    if not len(ordered):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))


def group_keys(hashes: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """64-bit keys of (group, docno) pairs from docno hashes and integer group ids."""
    return hashes ^ (groups.astype(np.uint64) * MIX)


def first_duplicate(
    keys: Callable[[], np.ndarray], docnos: np.ndarray, group_of: Callable[[int], int]
) -> int | None:
    """Index of the first row whose (group, docno) appeared on an earlier row, or None.

    ``keys()`` gives each row's (group, docno) key; it is called again (rather than kept)
    only when two keys collide, to spare memory on large runs.
    """
    if len(docnos) < 2:
        return None
    ordered = keys()
    ordered.sort()
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    del ordered
    if not len(repeated):
        return None
    seen: set[tuple[int, bytes]] = set()
    for row in np.flatnonzero(np.isin(keys(), repeated)).tolist():
        pair = (group_of(row), bytes(docnos[row]))
        if pair in seen:
            return row
        seen.add(pair)
    return None


def group_topics(qids: np.ndarray) -> tuple[list[str], np.ndarray | None, np.ndarray]:
    """(distinct qids in first-appearance order, stable order grouping rows or None when
    already grouped, CSR offsets)."""
    if not len(qids):
        return [], None, np.zeros(1, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(qids[1:] != qids[:-1]) + 1))
    return group_segments(starts.tolist(), [bytes(q) for q in qids[starts]], len(qids))


def group_segments(
    seg_starts: list[int], seg_qids: list[bytes], n: int
) -> tuple[list[str], np.ndarray | None, np.ndarray]:
    """:func:`_group` from the runs of equal qids: their first rows and qids."""
    codes: dict[bytes, int] = {}
    seg_codes = np.array([codes.setdefault(q, len(codes)) for q in seg_qids], dtype=np.int64)
    names = _decode(codes)
    seg_lengths: np.ndarray = np.diff(np.array([*seg_starts, n], dtype=np.int64))
    if len(codes) == len(seg_qids):
        return names, None, offsets_of(seg_lengths)
    row_codes = np.repeat(seg_codes, seg_lengths)
    order = np.argsort(row_codes, kind="stable")
    return names, order, offsets_of(np.bincount(row_codes, minlength=len(codes)))


def offsets_of(counts: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def segment_rows(offsets: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the CSR segments ``which`` (-1: an empty segment), in that order, and their
    new offsets."""
    valid = which >= 0
    if not valid.any():
        return np.zeros(0, dtype=np.int64), np.zeros(len(which) + 1, dtype=np.int64)
    safe = np.where(valid, which, 0)
    lengths = np.where(valid, offsets[safe + 1] - offsets[safe], 0)
    new_offsets = offsets_of(lengths)
    starts = np.where(valid, offsets[safe], 0)
    rows = np.arange(int(new_offsets[-1]), dtype=np.int64) + np.repeat(
        starts - new_offsets[:-1], lengths
    )
    return rows, new_offsets


def segments_with_repeats(hashes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per CSR segment of ``hashes``: whether some value occurs twice in it (bool array).

    In C when the accelerator is built (a hash set per segment), else by sorting the
    (segment, hash) keys."""
    from workbench.trec.native import repeated_hashes

    flags = repeated_hashes(hashes, offsets)
    if flags is not None:
        return flags
    counts = np.diff(offsets)
    out = np.zeros(len(counts), dtype=bool)
    if len(hashes) < 2:
        return out
    keys = group_keys(hashes, np.repeat(np.arange(len(counts)), counts))
    ordered = np.sort(keys)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if len(repeated):
        rows = np.flatnonzero(np.isin(keys, repeated))
        out[np.searchsorted(offsets, rows, side="right") - 1] = True
    return out
