"""The Worker's children forked from the fork server (services.forked): kept between jobs, given
the Worker's environment, replaced after a crash; a waiting request wakes when its job ends."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.store.test_jobs import Wakes
from workbench.services import campaigns, jobs
from workbench.store import Store
from workbench.store.db import ENV_VAR
from workbench.store.models import ReportJob, ReportResult

MARK = "WORKBENCH_TEST_FORKED_MARK"


def _whoami(_session: Any, _campaign: Any, _params: dict[str, Any], _progress: Any) -> bytes:
    return f"{os.getpid()} {os.environ.get(MARK)}".encode()


def _exit(_session: Any, _campaign: Any, params: dict[str, Any], _progress: Any) -> bytes:
    os._exit(int(params["status"]))


def _sleep(_session: Any, _campaign: Any, params: dict[str, Any], _progress: Any) -> bytes:
    time.sleep(float(params["seconds"]))
    return b"slept"


def _exit_once(_session: Any, _campaign: Any, params: dict[str, Any], _progress: Any) -> bytes:
    """Killed the first time (as by the OOM killer), computed the next."""
    marker = Path(params["marker"])
    if not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return b"computed"


jobs.register("test-whoami", _whoami)
jobs.register("test-exit-once", _exit_once)
jobs.register("test-exit", _exit)
jobs.register("test-sleep", _sleep)


@pytest.fixture
def campaign(store: Store) -> int:
    with store.session() as session:
        return campaigns.create_campaign(session, "c1").id


def serve_here() -> None:
    """The forked child's main: this module registered the kinds above when it was imported."""
    from workbench.store import open_store

    jobs.serve(open_store())


def worker_of(store: Store) -> jobs.Worker:
    env = {**os.environ, ENV_VAR: store.url, MARK: "given to the child"}
    return jobs.Worker(store, [], env, timeout=60, forked=f"{__name__}:serve_here")


def claim(store: Store, campaign: int, kind: str, params: dict[str, Any]) -> tuple[int, int]:
    jobs.request_job(store, campaign, kind, params, worker=Wakes(), wait=0)
    claimed = jobs._claim_next(store)
    assert claimed is not None
    return claimed


def outcome(store: Store, job_id: int) -> tuple[str, str, str]:
    """(status, error, result) of a job."""
    with store.read_session() as session:
        job = session.get_one(ReportJob, job_id)
        result = session.scalar(select(ReportResult.result).where(ReportResult.job_id == job_id))
        return job.status, job.error, (result or b"").decode()


def test_the_forked_child_is_kept_between_jobs_with_the_workers_environment(
    store: Store, campaign: int
) -> None:
    worker = worker_of(store)
    first_id, generation = claim(store, campaign, "test-whoami", {"n": 1})
    child = worker._run(None, first_id, generation)
    assert child is not None and child.poll() is None  # answered, and kept
    second_id, generation = claim(store, campaign, "test-whoami", {"n": 2})
    assert worker._run(child, second_id, generation) is child
    first, second = outcome(store, first_id), outcome(store, second_id)
    pid = child.pid
    assert first == ("done", "", f"{pid} given to the child") == second
    assert pid != os.getpid() and os.environ.get(MARK) is None
    jobs._close(child)
    assert child.poll() == 0  # its stdin closed: it ended


def test_a_forked_child_that_dies_fails_its_job_and_the_next_job_gets_a_new_one(
    store: Store, campaign: int
) -> None:
    worker = worker_of(store)
    dying, generation = claim(store, campaign, "test-exit", {"status": 3})
    assert worker._run(None, dying, generation) is None
    status, error, _ = outcome(store, dying)
    assert (status, error) == ("failed", "the report's process exited with status 3")
    child = worker._run(None, *claim(store, campaign, "test-whoami", {}))
    assert child is not None
    with store.read_session() as session:
        done = session.scalar(select(ReportJob.id).where(ReportJob.kind == "test-whoami"))
    assert done is not None and outcome(store, done)[2] == f"{child.pid} given to the child"
    jobs._close(child)


def test_a_report_whose_process_was_killed_is_computed_again_at_the_next_request(
    store: Store, campaign: int, tmp_path: Path
) -> None:
    """A killed process is no answer: its failure is shown once, then the next request
    queues the report again (a report that fails by itself is not: test_jobs.py)."""
    worker = worker_of(store)
    params = {"marker": str(tmp_path / "killed-once")}
    killed, generation = claim(store, campaign, "test-exit-once", params)
    assert worker._run(None, killed, generation) is None
    assert outcome(store, killed)[:2] == ("failed", "the report's process exited with status -9")
    again = jobs.request_job(store, campaign, "test-exit-once", params, worker=Wakes(), wait=0)
    assert (again.id, again.status, again.generation) == (killed, "queued", 2)
    assert jobs._claim_next(store) == (killed, 2)
    child = worker._run(None, killed, 2)
    assert child is not None and outcome(store, killed) == ("done", "", "computed")
    jobs._close(child)
    done = jobs.request_job(store, campaign, "test-exit-once", params, worker=Wakes(), wait=0)
    assert (done.status, done.generation, done.fresh) == ("done", 2, True)


def test_a_waiting_request_wakes_when_this_processs_worker_finishes_its_job(
    store: Store, campaign: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request does not poll the store until its wait ends: with polls a minute apart it
    still returns the result as soon as the Worker thread has it."""
    monkeypatch.setattr(jobs, "POLL_S", 60.0)
    worker = worker_of(store)
    started = time.monotonic()
    state = jobs.request_job(store, campaign, "test-whoami", {}, worker=worker, wait=120)
    assert state.status == "done" and state.result is not None
    assert time.monotonic() - started < 30


def test_a_request_waiting_for_its_own_workers_job_does_not_poll_the_store(
    store: Store, campaign: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While this process's worker computes the job, the waiting request reads the store only
    after it ends (it read the job's state every POLL_S: 20 reads a second of the job, a third
    of a second of CPU for a report page on a loaded machine)."""
    reads = []
    real = store.read_session

    def counted(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "read_session", counted)
    worker = worker_of(store)
    state = jobs.request_job(store, campaign, "test-sleep", {"seconds": 1.5}, worker=worker,
                             wait=120)  # fmt: skip
    assert state.status == "done" and state.result == b"slept"
    # the job's state before and after queueing it, a poll every POLL_S until the worker has
    # claimed it (a few, more on a loaded machine), and once it is done; at least 30 polls
    # (1.5 s / POLL_S) without the wait on the worker
    assert len(reads) <= 12, len(reads)


def test_a_stopped_worker_ends_its_thread_and_child_and_a_wake_starts_it_again(
    store: Store, campaign: int
) -> None:
    """stop() (an app letting its store go) ends the idle thread at once instead of after
    IDLE_S; the child it kept ends with it; a later request is served by a new thread."""
    worker = worker_of(store)
    state = jobs.request_job(store, campaign, "test-whoami", {"n": 1}, worker=worker, wait=120)
    assert state.status == "done" and state.result is not None
    first_child_pid = int(state.result.decode().split()[0])
    thread = worker._thread
    assert thread is not None and thread.is_alive()  # idle, waiting IDLE_S for the next job
    jobs.stop_workers()
    assert not thread.is_alive() and worker._thread is None
    with pytest.raises(ProcessLookupError):  # its child read end-of-file and exited (reaped)
        for _ in range(100):
            os.kill(first_child_pid, 0)
            time.sleep(0.05)
    state = jobs.request_job(store, campaign, "test-whoami", {"n": 2}, worker=worker, wait=120)
    assert state.status == "done" and state.result is not None
    assert int(state.result.decode().split()[0]) != first_child_pid
    worker.stop()


def test_a_stopping_worker_whose_child_fails_leaves_the_job_to_be_claimed_again(
    store: Store, campaign: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker told to stop while its child computes a job (a test or server letting its store
    go, which is why the child may fail) writes nothing to the store: it wrote the failure into
    a store that was gone (a traceback in CI's log). The job stays running, and is claimed
    again once its heartbeat is stale."""
    worker = worker_of(store)
    dying, generation = claim(store, campaign, "test-exit", {"status": 3})
    worker._stopping = True
    assert worker._run(None, dying, generation) is None
    assert outcome(store, dying) == ("running", "", "")
    assert jobs._claim_next(store) is None  # its heartbeat is fresh
    monkeypatch.setattr(jobs, "STALE_S", -1.0)
    assert jobs._claim_next(store) == (dying, generation)
