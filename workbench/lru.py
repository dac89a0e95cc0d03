"""A bounded, thread-safe least-recently-used map, and one value per engine: the per-process
caches of figures that a request checks against the store before using (the judging
sequences, an assessor's judged documents)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from sqlalchemy import Engine

T = TypeVar("T")


class LRU:
    """At most `size` in all: items, or with `weigh` the sum of their weights (a cache of
    sets bounded by the members it holds, not by the sets); the least recently used go
    first. An item heavier than `size` is not kept."""

    def __init__(self, size: int, weigh: Callable[[Any], int] | None = None) -> None:
        self._size = size
        self._weigh = weigh
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any) -> None:
        weight = 1 if self._weigh is None else self._weigh(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._items[key] = (value, weight)
            self._total += weight
            while self._total > self._size:
                _, (_, dropped) = self._items.popitem(last=False)
                self._total -= dropped


class PerEngine(Generic[T]):
    """One value per engine (so per store), made by `make` on first use and let go with its
    engine."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._values: weakref.WeakKeyDictionary[Engine, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __call__(self, engine: Engine) -> T:
        with self._lock:
            value = self._values.get(engine)
            if value is None:
                value = self._values[engine] = self._make()
            return value
