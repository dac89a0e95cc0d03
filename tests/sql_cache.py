"""One cache of compiled SQL for the engines of the whole test process.

SQLAlchemy keeps the statements it compiled in a cache per engine (`Engine._compiled_cache`),
keyed by the dialect object and the statement's cache key. The suite makes an engine per test
(each test has its own store, its app and each CLI command another), so every test compiled
the same few hundred statements again: about a tenth of the service and web tests' CPU. A
compiled statement is a pure function of the statement and the dialect's configuration, so
here the engines share one cache whose keys name the dialect by its class and its settings
(every hashable plain attribute: server version, paramstyle, feature flags set when it first
connected) instead of by identity: two engines configured alike share their compiled
statements, and an engine configured otherwise compiles its own.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, MutableMapping
from typing import Any

from sqlalchemy import util
from sqlalchemy.engine import Dialect, Engine

PLAIN = (bool, int, float, str, bytes, type(None), tuple)
_signatures: weakref.WeakKeyDictionary[Dialect, tuple[Any, ...]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def dialect_signature(dialect: Dialect) -> tuple[Any, ...]:
    """The dialect's class and its hashable plain settings (taken at its first compiled
    statement, after it first connected: SQLAlchemy sets the server's features then)."""
    found = _signatures.get(dialect)
    if found is None:
        settings = []
        for name, value in sorted(vars(dialect).items()):
            if isinstance(value, PLAIN):
                try:
                    hash(value)
                except TypeError:
                    continue
                settings.append((name, value))
        found = (type(dialect), tuple(settings))
        with _lock:
            _signatures[dialect] = found
    return found


class SharedCompiledCache(MutableMapping[tuple[Any, ...], Any]):
    """A compiled-SQL cache for many engines: SQLAlchemy's keys (dialect, statement key, ...)
    with the dialect replaced by `dialect_signature`."""

    def __init__(self, capacity: int = 5000) -> None:
        self._cache: util.LRUCache[tuple[Any, ...], Any] = util.LRUCache(capacity)

    @staticmethod
    def _key(key: tuple[Any, ...]) -> tuple[Any, ...]:
        return (dialect_signature(key[0]), *key[1:])

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
        return self._cache.get(self._key(key), default)

    def __getitem__(self, key: tuple[Any, ...]) -> Any:
        return self._cache[self._key(key)]

    def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
        self._cache[self._key(key)] = value

    def __delitem__(self, key: tuple[Any, ...]) -> None:
        del self._cache[self._key(key)]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._cache)

    def __len__(self) -> int:
        return len(self._cache)


SHARED = SharedCompiledCache()
ORIGINAL_INIT = Engine.__init__


def share_compiled_sql() -> None:
    """Have every engine made from now on use `SHARED` (unless made with query_cache_size=0;
    idempotent)."""
    if getattr(Engine.__init__, "shared", False):
        return

    def init(self: Engine, *args: Any, **kwargs: Any) -> None:
        ORIGINAL_INIT(self, *args, **kwargs)
        if self._compiled_cache is not None:
            self._compiled_cache = SHARED

    init.shared = True  # type: ignore[attr-defined]
    Engine.__init__ = init  # type: ignore[method-assign]
