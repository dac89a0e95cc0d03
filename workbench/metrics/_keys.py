"""The metrics' hash tables of the qrels, probed with a run's rows: one of (topic, docno) keys in
numpy, or (with the C accelerator) one small table per topic."""

from __future__ import annotations

import weakref

import numpy as np

from workbench.trec import native
from workbench.trec.keys import group_keys, starts_of_runs
from workbench.trec.qrels import Qrels


class KeyTable:
    """Open addressing with linear probing over uint64 keys, built and probed vectorised.

    Each slot holds (key, index + 1) side by side (0: empty), so a probe touches one cache line;
    probes gather whole slots through a 16-byte (complex128) view, which numpy copies fastest.
    """

    def __init__(self, keys: np.ndarray) -> None:
        size = 1 << max(int(4 * len(keys)).bit_length(), 4)
        self.mask = np.uint64(size - 1)
        self.slots = np.zeros((size, 2), dtype=np.uint64)
        slots = keys & self.mask
        pending = np.arange(len(keys))
        while len(pending):
            s = slots[pending]
            free = self.slots[s, 1] == 0
            candidates, wanted = pending[free], s[free]
            by_slot = np.argsort(wanted, kind="stable")  # np.unique would import numpy.ma
            first = by_slot[starts_of_runs(wanted[by_slot])]
            taken_slots, winners = wanted[first], candidates[first]
            self.slots[taken_slots, 0] = keys[winners]
            self.slots[taken_slots, 1] = winners + 1
            placed = np.zeros(len(keys), dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + np.uint64(1)) & self.mask

    def _entries(self, slot: np.ndarray) -> np.ndarray:
        return self.slots.view(np.complex128).ravel()[slot].view(np.uint64).reshape(-1, 2)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Index of each key in the table's source array, -1 when absent."""
        slot = keys & self.mask
        entry = self._entries(slot)
        used = entry[:, 1] != 0
        hit = used & (entry[:, 0] == keys)
        result = np.where(hit, entry[:, 1].astype(np.int64) - 1, -1)
        active = np.flatnonzero(used & ~hit)
        while len(active):
            s = (slot[active] + np.uint64(1)) & self.mask
            slot[active] = s
            entry = self._entries(s)
            used = entry[:, 1] != 0
            hit = used & (entry[:, 0] == keys[active])
            result[active[hit]] = entry[hit, 1].astype(np.int64) - 1
            active = active[used & ~hit]
        return result


# One table per Qrels object while it lives (several runs are matched against the same qrels).
_TABLES: weakref.WeakKeyDictionary[Qrels, KeyTable] = weakref.WeakKeyDictionary()


def match_table(qrels: Qrels) -> KeyTable:
    """The (topic index, docno) keys of the qrels' grouped entries, for matching run rows."""
    table = _TABLES.get(qrels)
    if table is None:
        table = KeyTable(group_keys(qrels.grouped_hashes, qrels.grouped_topic))
        _TABLES[qrels] = table
    return table


# With the C accelerator: one small table per qrels topic instead (probes stay in cache).
_TOPIC_TABLES: weakref.WeakKeyDictionary[Qrels, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def topic_tables(qrels: Qrels) -> tuple[np.ndarray, np.ndarray] | None:
    """The qrels' per-topic tables of docno hashes (``native.topic_tables``), built once per
    Qrels; None without the C accelerator (then :func:`match_table`)."""
    if not native.available():
        return None
    tables = _TOPIC_TABLES.get(qrels)
    if tables is None:
        tables = native.topic_tables(qrels.grouped_hashes, qrels.offsets)
        if tables is not None:
            _TOPIC_TABLES[qrels] = tables
    return tables
