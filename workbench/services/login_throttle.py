"""Throttling of failed logins, counted in the store so that every worker process shares them.

A key is a digest (fixed length, whatever the username's length) of an account and the
client's address, or of an address alone (`login_keys`). After `limit` failures of a key the
next login for it waits `window` seconds, and each further failure doubles the wait (at most
`max_wait`): wait = min(window * 2^(failures - limit), max_wait). A key is forgotten one
quiet `window` after its wait ends, or at a successful login. Nothing is written for a
refused (throttled) attempt, and expired keys are deleted on each write, so the table holds
only keys that failed recently.
"""

from __future__ import annotations

import hashlib
import math
import time

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from workbench import limits
from workbench.store.db import Store
from workbench.store.models import LoginFailure, username_key

Keys = list[tuple[str, int]]
"""(key, failures allowed before it waits) pairs of one login attempt."""


def throttle_key(*parts: str) -> str:
    """The hex SHA-256 of the parts (each cut to 4 * limits.USERNAME characters)."""
    text = "\x1f".join(part[: 4 * limits.USERNAME] for part in parts)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def login_keys(username: str, address: str, limit: int, address_limit: int) -> Keys:
    """The keys a login for `username` from `address` counts under: the account (its name
    as names are unique, without regard to case) at this address, allowed `limit` failures,
    and the address alone, allowed `address_limit`."""
    return [
        (throttle_key("account", username_key(username), address), limit),
        (throttle_key("address", address), address_limit),
    ]


class LoginThrottle:
    """Failed logins per key in `store`; see the module's docstring for the waits."""

    def __init__(self, store: Store, window: float, max_wait: float) -> None:
        self.store = store
        self.window = window
        self.max_wait = max_wait

    def wait(self, failures: int, limit: int) -> float:
        """Seconds a key with this many failures waits after its last failure."""
        if failures < limit:
            return 0.0
        return min(self.window * 2 ** min(failures - limit, 30), self.max_wait)

    def retry_after(self, keys: Keys) -> int:
        """Seconds until a login for these keys may be tried again (0 = allowed now)."""
        now = time.time()
        with self.store.read_session() as db:
            rows = {
                row.key: (row.failures, row.last_at)
                for row in db.scalars(
                    select(LoginFailure).where(LoginFailure.key.in_([k for k, _ in keys]))
                )
            }
        waits = [
            self.wait(rows[key][0], limit) - (now - rows[key][1])
            for key, limit in keys
            if key in rows
        ]
        longest = max(waits, default=0.0)
        return math.ceil(longest) if longest > 0 else 0

    def failed(self, keys: Keys) -> None:
        """Count a failure for each key (a key quiet for its wait and a window starts again)."""
        now = time.time()
        for attempt in range(2):
            try:
                with self.store.session() as db:
                    horizon = now - self.max_wait - self.window
                    db.execute(delete(LoginFailure).where(LoginFailure.last_at < horizon))
                    for key, limit in keys:
                        row = db.get(LoginFailure, key)
                        if row is None:
                            db.add(LoginFailure(key=key, failures=1, last_at=now))
                            continue
                        forgotten = now - row.last_at > self.wait(row.failures, limit) + self.window
                        row.failures = 1 if forgotten else row.failures + 1
                        row.last_at = now
                return
            except IntegrityError:  # another worker inserted the same key: count again
                if attempt:
                    raise

    def succeeded(self, keys: Keys) -> None:
        """A login went through: forget the failures of its account key (the first)."""
        with self.store.session() as db:
            db.execute(delete(LoginFailure).where(LoginFailure.key == keys[0][0]))
