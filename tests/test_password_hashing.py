"""Password hashes run in one low-priority thread per process (`workbench.password_hashing`):
the same hashes and checks as werkzeug's, at a lower CPU priority than the caller, with a
bound on the callers waiting for a check, and a new thread in a forked child."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time

import pytest
from werkzeug.security import check_password_hash, generate_password_hash

from workbench import password_hashing
from workbench.password_hashing import HashingBusy, hash_password, password_matches
from workbench.priority import BATCH_NICE

FAST = "pbkdf2:sha256:1000"


def test_hashes_and_checks_are_werkzeugs() -> None:
    ours = hash_password("correct horse", FAST)
    assert ours.startswith("pbkdf2:sha256:1000$")
    assert check_password_hash(ours, "correct horse")
    theirs = generate_password_hash("battery staple", method=FAST)
    assert password_matches(theirs, "battery staple")
    assert not password_matches(theirs, "battery stapler")
    assert not password_matches(ours, "")


def _thread_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_checks_run_in_one_thread_at_batch_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int]] = []

    def recording(password_hash: str, password: str) -> bool:
        seen.append((threading.current_thread().name, _thread_nice()))
        return password == "yes"

    monkeypatch.setattr(password_hashing, "check_password_hash", recording)
    assert password_matches("any", "yes") and not password_matches("any", "no")
    names = {name for name, _ in seen}
    assert len(names) == 1 and names.pop().startswith("password-hashing")
    expected = min(_thread_nice() + BATCH_NICE, 19)
    assert [nice for _, nice in seen] == [expected, expected]
    assert _thread_nice() < expected  # the caller keeps its own priority


def test_a_caller_beyond_the_bound_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(password_hash: str, password: str) -> bool:
        if password == "hold":
            entered.set()
            release.wait(30)
        return True

    monkeypatch.setattr(password_hashing, "check_password_hash", held)
    results: list[bool] = []
    first = threading.Thread(target=lambda: results.append(password_matches("h", "hold")))
    first.start()
    assert entered.wait(30)
    with pytest.raises(HashingBusy, match="1 password checks are waiting"):
        password_matches("h", "next", max_waiting=1)
    release.set()
    first.join(30)
    assert results == [True]
    assert password_matches("h", "after", max_waiting=1)  # the count went back to 0


def test_retry_after_is_the_queue_times_the_measured_check_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused caller is told to come back when the checks ahead of it will likely be done:
    the waiting checks times the running mean of a check's time in the thread."""
    monkeypatch.setattr(password_hashing, "SMOOTHING", 1.0)  # the mean is the last check's time
    entered, release = threading.Event(), threading.Event()

    def timed(password_hash: str, password: str) -> bool:
        if password == "slow":
            time.sleep(1.2)
        if password == "hold":
            entered.set()
            release.wait(30)
        return True

    monkeypatch.setattr(password_hashing, "check_password_hash", timed)
    assert password_matches("h", "slow")
    first = threading.Thread(target=password_matches, args=("h", "hold"))
    first.start()
    assert entered.wait(30)
    try:
        with pytest.raises(HashingBusy) as one_ahead:
            password_matches("h", "next", max_waiting=1)
        assert one_ahead.value.retry_after == 2  # ceil(1 x 1.2 s)
    finally:
        release.set()
        first.join(30)


def test_an_error_in_the_hashing_thread_reaches_the_caller_and_frees_its_place() -> None:
    with pytest.raises(ValueError):
        hash_password("pw", "pbkdf2:sha256:notanumber")
    assert password_matches(generate_password_hash("pw", method=FAST), "pw", max_waiting=1)


def _child_checks(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    queue.put(password_matches(generate_password_hash("pw", method=FAST), "pw"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is Unix's")
def test_a_forked_child_starts_its_own_hashing_thread() -> None:
    assert password_matches(generate_password_hash("pw", method=FAST), "pw")  # parent's thread
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_checks, args=(queue,))
    child.start()
    assert queue.get(timeout=60) is True
    child.join(60)
    assert child.exitcode == 0
