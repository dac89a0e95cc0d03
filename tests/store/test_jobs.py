"""Report jobs (services.jobs): queued once, computed from one snapshot, cached until the
campaign's judgements, runs, qrels or final labels change; orphans are queued again."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.web.conftest import write_campaign_files
from workbench.services import (
    campaigns,
    document_imports,
    jobs,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import ServiceError
from workbench.store import Store
from workbench.store.models import (
    Campaign,
    FinalLabel,
    Judgement,
    ReportJob,
    ReportResult,
    User,
    utcnow,
)

KIND = "test-judgement-count"


class Wakes:
    """A stand-in for the process's worker: counts wake-ups; the test runs the jobs."""

    def __init__(self) -> None:
        self.count = 0

    def wake(self) -> None:
        self.count += 1


def count_judgements(session: Any, campaign_id: int, params: dict[str, Any], progress) -> bytes:  # type: ignore[no-untyped-def]
    progress("counting")
    if params.get("refuse"):
        raise ServiceError("this report needs final labels")
    rows = session.scalars(select(Judgement.id).where(Judgement.campaign_id == campaign_id))
    return str(len(rows.all())).encode()


jobs.register(KIND, count_judgements)


@pytest.fixture
def campaign(store: Store, tmp_path: Path) -> int:
    files = write_campaign_files(tmp_path / "files")
    with store.session() as s:
        c = campaigns.create_campaign(s, "c1")
        other = campaigns.create_campaign(s, "c2")
        s.add(User(username="ann", password_hash="-", role="assessor"))
        topic_imports.import_topics(s, c, files["topics"])
        run_imports.import_runs(s, c, [files["runA"]])
        assert other.id != c.id
        return c.id


def judge(store: Store, campaign_id: int, grade: int = 1, docno: str = "D1") -> None:
    with store.session() as s:
        user = s.scalar(select(User.id))
        s.add(Judgement(campaign_id=campaign_id, qid="T1", docno=docno, user_id=user, grade=grade))


def run_queued(store: Store) -> int:
    """Claim and compute every queued job in this process; how many ran."""
    ran = 0
    while (claimed := jobs._claim_next(store)) is not None:
        jobs.run_job(store, claimed[0])
        ran += 1
    return ran


def test_a_job_is_queued_once_and_its_result_cached(store: Store, campaign: int) -> None:
    wakes = Wakes()
    first = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    again = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (first.status, first.generation, first.result) == ("queued", 1, None)
    assert again.id == first.id and again.generation == 1 and wakes.count == 2
    assert run_queued(store) == 1
    done = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (done.status, done.result, done.fresh, done.result_generation) == ("done", b"0", True, 1)
    assert wakes.count == 2  # nothing to do: not woken
    assert run_queued(store) == 0
    other = jobs.request_job(store, campaign, KIND, {"x": 1}, worker=wakes, wait=0)
    assert other.id != first.id  # other parameters, another job


def test_a_judgement_makes_the_result_stale_and_it_is_recomputed(
    store: Store, campaign: int
) -> None:
    wakes = Wakes()
    jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    run_queued(store)
    judge(store, campaign)
    stale = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (stale.status, stale.generation, stale.result, stale.fresh) == ("queued", 2, b"0", False)
    run_queued(store)
    fresh = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (fresh.result, fresh.fresh, fresh.result_generation) == (b"1", True, 2)


def test_another_campaigns_judgement_changes_nothing(store: Store, campaign: int) -> None:
    with store.read_session() as s:
        before = jobs.fingerprint(s, campaign)
        other = s.scalar(select(Campaign.id).where(Campaign.name == "c2"))
    judge(store, other)
    with store.read_session() as s:
        assert jobs.fingerprint(s, campaign) == before


def test_runs_qrels_and_final_labels_change_the_fingerprint(
    store: Store, campaign: int, tmp_path: Path
) -> None:
    files = write_campaign_files(tmp_path / "more")
    judge(store, campaign)
    seen = []

    def now() -> str:
        with store.read_session() as s:
            return jobs.fingerprint(s, campaign)

    seen.append(now())
    with store.session() as s:
        c = s.get(Campaign, campaign)
        run_imports.import_runs(s, c, [files["runB"]])
    seen.append(now())
    files["runB"].write_text(files["runB"].read_text().replace(" 9 runB", " 9.5 runB"))
    with store.session() as s:
        run_imports.import_runs(s, s.get(Campaign, campaign), [files["runB"]], replace=True)
    seen.append(now())
    with store.session() as s:
        qrels_imports.import_qrels(s, s.get(Campaign, campaign), files["qrels"])
    seen.append(now())
    with store.session() as s:
        s.add(FinalLabel(campaign_id=campaign, qid="T1", docno="D1", grade=1, rule="majority"))
    seen.append(now())
    with store.session() as s:
        label = s.scalar(select(FinalLabel))
        assert label is not None
        label.grade = 2  # changed in place: counted (`changes`) as every ORM write is
    seen.append(now())
    documents = tmp_path / "docs.jsonl"
    documents.write_text('{"docno": "D1", "text": "one"}\n')
    document_imports.import_documents_in_steps(store, campaign, [documents])
    seen.append(now())
    assert len(set(seen)) == len(seen)


def test_a_refused_report_fails_once_until_the_data_change(store: Store, campaign: int) -> None:
    wakes = Wakes()
    jobs.request_job(store, campaign, KIND, {"refuse": True}, worker=wakes, wait=0)
    run_queued(store)
    failed = jobs.request_job(store, campaign, KIND, {"refuse": True}, worker=wakes, wait=0)
    assert (failed.status, failed.error) == ("failed", "this report needs final labels")
    assert run_queued(store) == 0
    judge(store, campaign)
    again = jobs.request_job(store, campaign, KIND, {"refuse": True}, worker=wakes, wait=0)
    assert (again.status, again.generation) == ("queued", 2)


def test_an_orphaned_job_is_queued_again(store: Store, campaign: int) -> None:
    """A job whose process died (no heartbeat for STALE_S) is queued by the next request."""
    wakes = Wakes()
    queued = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert jobs._claim_next(store) == (queued.id, 1)  # claimed, then its process dies
    running = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (running.status, running.generation) == ("running", 1)
    long_ago = utcnow() - dt.timedelta(seconds=jobs.STALE_S + 1)
    with store.session() as s:
        s.execute(update(ReportJob).values(heartbeat_at=long_ago))
    requeued = jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0)
    assert (requeued.status, requeued.generation) == ("queued", 2)
    jobs._finish(store, queued.id, 1, status="done", result=b"late")  # the first claim's
    with store.read_session() as s:
        assert s.scalar(select(ReportResult.result)) is None
    assert run_queued(store) == 1
    assert jobs.request_job(store, campaign, KIND, {}, worker=wakes, wait=0).result == b"0"


def test_a_deleted_campaign_takes_its_jobs_along(store: Store, campaign: int) -> None:
    jobs.request_job(store, campaign, KIND, {}, worker=Wakes(), wait=0)
    with store.session() as s:
        s.delete(s.get(Campaign, campaign))
    with store.read_session() as s:
        assert s.scalar(select(ReportJob.id)) is None


def test_a_queued_job_says_how_many_jobs_are_ahead_of_it(store: Store, campaign: int) -> None:
    """One job runs per process: a report queued behind others says so on its page."""
    wakes = Wakes()
    first = jobs.request_job(store, campaign, KIND, {"n": 1}, worker=wakes, wait=0)
    assert first.progress == "queued"  # nothing ahead of it
    second = jobs.request_job(store, campaign, KIND, {"n": 2}, worker=wakes, wait=0)
    assert second.progress.startswith("waiting: 1 report(s) or import(s) ahead of it")
    assert jobs._claim_next(store) == (first.id, 1)  # the first runs: still ahead
    third = jobs.request_job(store, campaign, KIND, {"n": 3}, worker=wakes, wait=0)
    assert third.progress.startswith("waiting: 2 report(s)")
    jobs.run_job(store, first.id)
    again = jobs.request_job(store, campaign, KIND, {"n": 3}, worker=wakes, wait=0)
    assert again.progress.startswith("waiting: 1 report(s)")


def test_the_worker_writes_the_heartbeat_while_its_child_computes(
    store: Store, campaign: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heartbeat comes from the Worker thread, not from a thread of the child that would
    hold the write lock while the computation holds the child's interpreter lock."""
    monkeypatch.setattr(jobs, "HEARTBEAT_S", 0.05)
    jobs.request_job(store, campaign, KIND, {}, worker=Wakes(), wait=0)
    job_id, generation = jobs._claim_next(store) or (0, 0)
    with store.read_session() as s:
        claimed_at = s.get_one(ReportJob, job_id).heartbeat_at
    child = tmp_path / "silent_child.py"  # computes for 0.5 s and never writes to the store
    child.write_text(
        "import sys, time\nsys.stdin.readline()\ntime.sleep(0.5)\nprint('done', flush=True)\n"
    )
    worker = jobs.Worker(store, [sys.executable, str(child)], dict(os.environ), timeout=30)
    answered = worker._run(None, job_id, generation)
    assert answered is not None  # the child answered: the job is not failed
    answered.wait(timeout=10)
    with store.read_session() as s:
        beaten_at = s.get_one(ReportJob, job_id).heartbeat_at
    assert claimed_at is not None and beaten_at is not None
    assert (beaten_at - claimed_at).total_seconds() >= 0.3


def test_finished_reports_beyond_the_cap_are_evicted_with_their_results(
    store: Store, campaign: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every distinct parameter set is a job: past KEPT_REPORTS finished ones per campaign the
    least recently queued go, with their results; pending jobs, other campaigns' jobs and the
    most recent ones stay; a job evicted and asked for again is computed again."""
    monkeypatch.setattr(jobs, "KEPT_REPORTS", 5)
    wakes = Wakes()
    with store.read_session() as session:
        other = session.scalar(select(Campaign.id).where(Campaign.id != campaign))
    assert other is not None
    jobs.request_job(store, other, KIND, {"n": -1}, worker=wakes, wait=0)
    run_queued(store)
    ids = []
    for n in range(12):
        ids.append(jobs.request_job(store, campaign, KIND, {"n": n}, worker=wakes, wait=0).id)
        if n < 11:  # the last one stays queued
            run_queued(store)
    with store.read_session() as session:
        rows = session.execute(select(ReportJob.id, ReportJob.campaign_id, ReportJob.status))
        left = {job_id: (owner, status) for job_id, owner, status in rows}
        results = set(session.scalars(select(ReportResult.job_id)))
    mine = sorted(job_id for job_id, (owner, _) in left.items() if owner == campaign)
    assert mine == ids[-5:]  # four finished and the queued one
    assert left[ids[-1]][1] == "queued"
    assert sum(owner == other for owner, _ in left.values()) == 1
    assert results == {job_id for job_id, (_, status) in left.items() if status == "done"}
    again = jobs.request_job(store, campaign, KIND, {"n": 0}, worker=wakes, wait=0)
    assert again.status == "queued" and again.id not in ids


def test_a_task_whose_outcome_was_never_shown_is_evicted_after_a_day(
    store: Store, campaign: int
) -> None:
    jobs.register_task("test-task", lambda _store, _campaign, _params, _progress: b"[]")
    wakes = Wakes()
    task = jobs.request_job(store, campaign, "test-task", {"upload": 1}, worker=wakes, wait=0)
    run_queued(store)
    jobs.request_job(store, campaign, KIND, {"n": 1}, worker=wakes, wait=0)
    with store.session() as session:
        assert session.get(ReportJob, task.id) is not None  # finished an instant ago: kept
        session.execute(
            update(ReportJob)
            .where(ReportJob.id == task.id)
            .values(queued_at=utcnow() - dt.timedelta(seconds=jobs.KEPT_TASK_S + 60))
        )
    jobs.request_job(store, campaign, KIND, {"n": 2}, worker=wakes, wait=0)
    with store.read_session() as session:
        assert session.get(ReportJob, task.id) is None


def test_a_task_runs_on_the_machine_that_saved_its_files(store: Store, campaign: int) -> None:
    """An upload's task reads files saved where it was queued: a worker of another machine
    (several app servers) leaves it alone, while reports go to any worker."""
    import socket

    jobs.register_task("test-task", lambda _store, _campaign, _params, _progress: b"[]")
    wakes = Wakes()
    task = jobs.request_job(store, campaign, "test-task", {"upload": 2}, worker=wakes, wait=0)
    report = jobs.request_job(store, campaign, KIND, {"n": 3}, worker=wakes, wait=0)
    with store.session() as session:
        assert session.get(ReportJob, task.id).runs_on == socket.gethostname()
        assert session.get(ReportJob, report.id).runs_on == ""
        session.get(ReportJob, task.id).runs_on = "another-machine"
    assert run_queued(store) == 1  # the report only
    with store.read_session() as session:
        assert session.get(ReportJob, task.id).status == "queued"
        assert session.get(ReportJob, report.id).status == "done"


def test_the_worker_waits_on_a_child_whose_pipe_is_above_descriptor_1024(
    store: Store, campaign: int, tmp_path: Path
) -> None:
    """A server holding over 1,024 open files gives its child pipes that select() cannot
    watch ("filedescriptor out of range"): the Worker still hears the child's answer."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this machine allows {hard} open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        jobs.request_job(store, campaign, KIND, {}, worker=Wakes(), wait=0)
        job_id, generation = jobs._claim_next(store) or (0, 0)
        child = tmp_path / "child.py"
        child.write_text("import sys\nsys.stdin.readline()\nprint('done', flush=True)\n")
        worker = jobs.Worker(store, [sys.executable, str(child)], dict(os.environ), timeout=30)
        answered = worker._run(None, job_id, generation)
        assert answered is not None and answered.stdout is not None
        assert answered.stdout.fileno() > 1024
        answered.wait(timeout=10)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
