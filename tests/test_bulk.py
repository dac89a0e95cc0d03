"""workbench.bulk: the collector paused for a block, nested and across threads."""

from __future__ import annotations

import gc
import threading

from workbench.bulk import collector_paused


def test_the_collector_is_paused_in_the_block_and_on_after_it():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds the pause
    assert gc.isenabled()


def test_a_pause_ends_after_an_error_too():
    try:
        with collector_paused():
            raise ValueError("inside")
    except ValueError:
        pass
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_of_two_threads_end_with_the_last():
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause goes on
    leave.set()
    thread.join(10)
    assert gc.isenabled()
