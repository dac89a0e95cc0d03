"""workbench.bulk: the collector paused for a block, nested and across threads."""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
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


EXIT_PROBE = """
import atexit, gc, sys
# registered first, so it runs last of the exit handlers, before the final collections
atexit.register(lambda: print("frozen", gc.get_freeze_count(), file=sys.stderr))
sys.argv = ["workbench", *sys.argv[1:]]
from workbench.__main__ import run
run()
"""


def _command(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "WORKBENCH_SECRET_KEY": "k" * 64}
    environment.pop("WORKBENCH_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, *args],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120,
    )  # fmt: skip


def _frozen(stderr: str) -> int:
    return int(stderr.rsplit("frozen ", 1)[1].split()[0])


def test_a_command_leaves_its_objects_to_the_os_after_releasing_its_store(tmp_path):
    """The `workbench` command freezes its objects before the interpreter's final collections
    (`skip_exit_collections`), after its click context closed its store: the SQLite file
    holds the command's write on its own (no WAL left beside it) and opens in sqlite3."""
    store = tmp_path / "store.sqlite"
    done = _command(tmp_path, "--db", f"sqlite:///{store}", "campaign", "create", "C")
    assert done.returncode == 0, done.stderr
    assert _frozen(done.stderr) > 10_000  # every module of the command, out of the walks
    assert not (tmp_path / "store.sqlite-wal").exists()
    with sqlite3.connect(store) as connection:
        assert connection.execute("select name from campaigns").fetchall() == [("C",)]


def test_a_failing_command_is_frozen_too_and_keeps_its_status(tmp_path):
    done = _command(tmp_path, "trec-eval", str(tmp_path / "no-such-qrels"), "runs")
    assert done.returncode != 0
    assert _frozen(done.stderr) > 1_000
