"""Password hashes, computed behind the requests: one low-priority thread per process.

A password check is deliberately expensive (werkzeug's default scrypt: about 95 ms of CPU and
32 MiB). A crowd logging in at once (1,000 assessors at the start of a shift) is then most of a
core for minutes, and at the priority of the server's request threads every judgement waits
behind the logins for a CPU. So every hash and check of this process runs in one thread whose
nice value is raised by `priority.BATCH_NICE` (`priority.run_thread_as_batch`; the hashing
releases the interpreter's lock, so the thread is scheduled as a task of its own): the
judging requests are served first, the logins take the CPU they leave, and checks of one
process wait for each other instead of taking every core. The caller waits for the result.
At most `max_waiting` callers of a process wait at once; the next one is refused with
`HashingBusy` rather than hold another request thread (the login page answers 503 with
Retry-After: the waiting checks times the running mean of a check's time in the thread, so
a crowd's retries spread out instead of coming back together). A new password's hash is
never refused. Our own design (the same idea as the report jobs' low-priority child).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from werkzeug.security import check_password_hash, generate_password_hash

from workbench import priority

MAX_WAITING = 3
"""How many callers of one process may wait for the hashing thread at once (the one being
served included): one less than `workbench serve`'s 4 request threads per worker, so that
logins never hold every thread of a worker. Our own default (the web's setting
PASSWORD_CHECKS_WAITING): a login beyond it is answered 503 with Retry-After."""


class HashingBusy(Exception):
    """More than the allowed callers already wait for this process's hashing thread;
    `retry_after` (whole seconds) is when they will likely have been served."""

    def __init__(self, waiting: int, retry_after: int) -> None:
        super().__init__(f"{waiting} password checks are waiting in this process")
        self.retry_after = retry_after


MAX_RETRY_AFTER_S = 30
SMOOTHING = 0.2
"""Weight of the newest check in the running mean of a check's time in the thread."""


class _Lane:
    """The process's hashing thread, how many callers wait for it, and the running mean of
    how long a check takes there (wall time: at low priority it grows with the load)."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(
            max_workers=1,
            thread_name_prefix="password-hashing",
            initializer=priority.run_thread_as_batch,
        )
        self.waiting = 0
        self.seconds_per_check = 0.1
        self.lock = threading.Lock()

    def run(self, work: Callable[[], object], max_waiting: int) -> object:
        with self.lock:
            if self.waiting >= max_waiting:
                # the queue ahead drains in about waiting x seconds_per_check
                wait = math.ceil(self.waiting * self.seconds_per_check)
                raise HashingBusy(self.waiting, min(max(1, wait), MAX_RETRY_AFTER_S))
            self.waiting += 1
        try:
            return self.executor.submit(self._timed, work).result()
        finally:
            with self.lock:
                self.waiting -= 1

    def _timed(self, work: Callable[[], object]) -> object:
        started = time.monotonic()
        try:
            return work()
        finally:
            took = time.monotonic() - started
            self.seconds_per_check += SMOOTHING * (took - self.seconds_per_check)


_lane: _Lane | None = None
_lane_lock = threading.Lock()


def _current_lane() -> _Lane:
    global _lane
    with _lane_lock:
        if _lane is None:
            _lane = _Lane()
        return _lane


def _forget_lane() -> None:
    """A forked child has no hashing thread: it starts its own on first use."""
    global _lane, _lane_lock
    _lane, _lane_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lane)


def password_matches(password_hash: str, password: str, *, max_waiting: int = MAX_WAITING) -> bool:
    """werkzeug's `check_password_hash(password_hash, password)`, in the hashing thread;
    HashingBusy when `max_waiting` callers already wait."""
    matched = _current_lane().run(lambda: check_password_hash(password_hash, password), max_waiting)
    return bool(matched)


def hash_password(password: str, method: str) -> str:
    """werkzeug's `generate_password_hash(password, method=method)`, in the hashing thread,
    never refused (new passwords are set one at a time, by their users or an admin)."""
    return str(
        _current_lane().run(lambda: generate_password_hash(password, method=method), sys.maxsize)
    )
