"""Rate limits shared by every app server of a PostgreSQL store (`services.rate_limits`)."""

from __future__ import annotations

import threading

from sqlalchemy import text

from workbench.services.rate_limits import RateLimiter
from workbench.store import Store


def test_two_servers_hold_one_limit_on_a_server_store_and_their_own_on_sqlite(
    store: Store,
) -> None:
    """Two limiters over one store (two app servers): on PostgreSQL they share each bucket,
    so a burst of 4 lets 4 requests through in all; on SQLite each process has its own."""
    servers = [RateLimiter(store), RateLimiter(store)]
    waits = [servers[k % 2].take("judge", 7, rate=0.01, burst=4) for k in range(8)]
    other_user = servers[0].take("judge", 8, rate=0.01, burst=4)
    other_action = servers[1].take("password", 7, rate=0.01, burst=4)
    assert other_user == other_action == 0.0
    if store.engine.dialect.name == "postgresql":
        assert waits[:4] == [0.0] * 4
        assert all(95 < wait <= 100 for wait in waits[4:])  # 1 token at 0.01/s: about 100 s
        with store.engine.connect() as connection:
            persistence = connection.execute(
                text("SELECT relpersistence FROM pg_class WHERE relname = 'rate_buckets'")
            ).scalar_one()
        assert persistence == "u"  # UNLOGGED: no WAL to flush for a bucket
    else:
        assert waits == [0.0] * 8


def test_concurrent_requests_take_each_token_once(store: Store) -> None:
    """Twenty threads of two servers ask at once for a bucket of 10: exactly 10 go ahead
    (on SQLite, 10 per server process)."""
    servers = [RateLimiter(store), RateLimiter(store)]
    granted: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(20)

    def ask(k: int) -> None:
        start.wait()
        wait = servers[k % 2].take("judge", 1, rate=0.001, burst=10)
        with lock:
            granted.append(wait == 0.0)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shared = store.engine.dialect.name == "postgresql"
    assert sum(granted) == (10 if shared else 20)
