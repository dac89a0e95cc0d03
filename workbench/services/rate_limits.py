"""Rate limits per (action, user) shared by every app server of a database server store.

A token bucket (`burst` requests at once, refilled at `rate` per second) per action and user.
On PostgreSQL the bucket is a row of the UNLOGGED table `rate_buckets` (no WAL, no flush:
its state may be lost in a crash, which only refills the buckets), taken and refilled by one
statement under the database's clock, so that several app servers (and their workers) hold
one limit together. On SQLite, a store of one machine, each process keeps its own buckets
(`LocalBuckets`): the limit holds per worker process.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from sqlalchemy import text

from workbench.store.db import Store

_REFILLED = (
    "least(CAST(:burst AS double precision), "
    "b.tokens + (extract(epoch from now()) - b.at) * CAST(:rate AS double precision))"
)
_TAKE = text(
    f"""
    INSERT INTO rate_buckets AS b (action, user_id, tokens, granted, at)
    VALUES (:action, :user_id, CAST(:burst AS double precision) - 1, true,
            extract(epoch from now()))
    ON CONFLICT (action, user_id) DO UPDATE SET
        tokens = {_REFILLED} - CASE WHEN {_REFILLED} >= 1 THEN 1 ELSE 0 END,
        granted = {_REFILLED} >= 1,
        at = extract(epoch from now())
    RETURNING b.tokens, b.granted
    """
)
"""Refill the bucket for the time since its last use (every SET sees the old row), take a
token when there is one: one statement, atomic under concurrent requests of any server."""


class LocalBuckets:
    """Token buckets per (action, user) in this process; at most `size` buckets (the least
    recently used go first)."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._buckets: OrderedDict[tuple[str, int], tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, action: str, user_id: int, rate: float, burst: float) -> float:
        """0 if the request may go ahead, else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.pop((action, user_id), (burst, now))
            tokens = min(burst, tokens + (now - then) * rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / rate
            self._buckets[action, user_id] = (tokens - 1 if not wait else tokens, now)
            while len(self._buckets) > self.size:
                self._buckets.popitem(last=False)
        return wait


class RateLimiter:
    """The store's shared buckets on PostgreSQL, this process's own elsewhere."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.shared = store.engine.dialect.name == "postgresql"
        self.local = LocalBuckets()

    def take(self, action: str, user_id: int, rate: float, burst: float) -> float:
        """0 if the request may go ahead (a token is taken), else the seconds until it may."""
        if not self.shared:
            return self.local.take(action, user_id, rate, burst)
        parameters = {"action": action, "user_id": user_id, "rate": rate, "burst": burst}
        with self.store.connection(autocommit=True) as connection:
            tokens, granted = connection.execute(_TAKE, parameters).one()
        return 0.0 if granted else (1 - tokens) / rate
