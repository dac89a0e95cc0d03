"""Batch work runs behind the web server: `workbench import` and the report-job child lower
their CPU priority (`os.nice` is replaced here: the suite's own process must keep its own),
and the store's checkpointer thread lowers its own."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench.cli import main
from workbench.priority import BATCH_NICE, run_as_batch, run_thread_as_batch


@pytest.fixture
def nice_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(os, "nice", lambda increment: calls.append(increment) or increment)
    return calls


def _import_topics(url: str, tmp_path: Path, *options: str) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tsolar panels\n")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", url, "db", "upgrade"]).exit_code == 0
    assert runner.invoke(main, ["--db", url, "campaign", "create", "c"]).exit_code == 0
    done = runner.invoke(
        main, ["--db", url, "import", *options, "topics", "--campaign", "c", str(topics)]
    )
    assert done.exit_code == 0, done.output
    assert done.output == "topics: 1 added from 1 file(s)\n"


def test_an_import_runs_at_batch_priority_by_default(
    nice_calls: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WORKBENCH_IMPORT_PRIORITY")
    _import_topics(f"sqlite:///{tmp_path / 'a.sqlite'}", tmp_path)
    assert nice_calls == [BATCH_NICE] and BATCH_NICE > 0


def test_an_import_can_keep_the_shells_priority(
    nice_calls: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WORKBENCH_IMPORT_PRIORITY")
    _import_topics(f"sqlite:///{tmp_path / 'a.sqlite'}", tmp_path, "--priority", "normal")
    assert nice_calls == []


def test_a_refused_nice_leaves_the_priority_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(increment: int) -> int:
        raise PermissionError("not allowed")

    monkeypatch.setattr(os, "nice", refuse)
    run_as_batch()  # no error


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads have their own nice")
def test_a_batch_thread_lowers_its_own_priority_not_its_process() -> None:
    seen: list[int] = []

    def batch() -> None:
        run_thread_as_batch()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=batch)
    thread.start()
    thread.join()
    assert seen == [min(before + BATCH_NICE, 19)]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
