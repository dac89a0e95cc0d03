"""The metrics' hash table: (topic, docno) keys of the qrels, probed with a run's rows."""

from __future__ import annotations

import weakref

import numpy as np

from workbench.trec.keys import docno_hash, group_keys, starts_of_runs
from workbench.trec.qrels import Qrels


class KeyTable:
    """Open addressing with linear probing over uint64 keys, built and probed vectorised."""

    def __init__(self, keys: np.ndarray) -> None:
        size = 1 << max(int(4 * len(keys)).bit_length(), 4)
        self.mask = np.uint64(size - 1)
        self.keys = np.zeros(size, dtype=np.uint64)
        self.index = np.full(size, -1, dtype=np.int64)
        slots = keys & self.mask
        pending = np.arange(len(keys))
        while len(pending):
            s = slots[pending]
            free = self.index[s] == -1
            candidates, wanted = pending[free], s[free]
            by_slot = np.argsort(wanted, kind="stable")  # np.unique would import numpy.ma
            first = by_slot[starts_of_runs(wanted[by_slot])]
            taken_slots, winners = wanted[first], candidates[first]
            self.index[taken_slots] = winners
            self.keys[taken_slots] = keys[winners]
            placed = np.zeros(len(keys), dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + np.uint64(1)) & self.mask

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Index of each key in the table's source array, -1 when absent."""
        result = np.full(len(keys), -1, dtype=np.int64)
        slot = keys & self.mask
        index = self.index[slot]
        hit = (index >= 0) & (self.keys[slot] == keys)
        result[hit] = index[hit]
        active = np.flatnonzero((index >= 0) & ~hit)
        while len(active):
            s = (slot[active] + np.uint64(1)) & self.mask
            slot[active] = s
            index = self.index[s]
            hit = (index >= 0) & (self.keys[s] == keys[active])
            result[active[hit]] = index[hit]
            active = active[(index >= 0) & ~hit]
        return result


# One table per Qrels object while it lives (several runs are matched against the same qrels).
_TABLES: weakref.WeakKeyDictionary[Qrels, KeyTable] = weakref.WeakKeyDictionary()


def match_table(qrels: Qrels) -> KeyTable:
    """The (topic index, docno) keys of the qrels' grouped entries, for matching run rows."""
    table = _TABLES.get(qrels)
    if table is None:
        table = KeyTable(group_keys(docno_hash(qrels.grouped_docnos), qrels.grouped_topic))
        _TABLES[qrels] = table
    return table
