"""Machine judging jobs against the local test server: every operational behaviour (429 and
5xx with back-off, timeouts, malformed answers, the budget caps, the cache, bounded
concurrency, stop and resume, a crash and its resume, one runner at a time)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import func, select

from tests.conftest import REPO
from workbench.judge_client import ChatClient
from workbench.services import machine_jobs, machine_judges
from workbench.services.campaigns import get_campaign
from workbench.services.errors import Conflict
from workbench.store.models import MachineJudgement

pytestmark = pytest.mark.slow


def new_job(store, stub, *, name="machine:stub", settings=None, **job):
    settings = {"backoff_s": 0.01, "backoff_cap_s": 0.05, **(settings or {})}
    with store.session() as session:
        campaign = get_campaign(session, "mc")
        judge = machine_judges.add_judge(
            session, campaign, model="stub", name=name, base_url=stub.url, settings=settings
        )
        return machine_jobs.create_job(session, campaign, judge, **job).id


def labels(store, judge="machine:stub"):
    from workbench.store.models import MachineJudge

    with store.read_session() as session:
        rows = session.execute(
            select(MachineJudgement).join(MachineJudge).where(MachineJudge.name == judge)
        ).scalars()
        return {(r.qid, r.docno): r for r in rows}


def test_429_and_5xx_are_retried_with_back_off_and_retry_after(store, stub, machine_campaign):
    stub.behaviour.fail_next = [429, 503, 500, 429]
    stub.behaviour.retry_after = 0.04
    job = new_job(store, stub, concurrency=1)
    sleeps: list[float] = []
    info = machine_jobs.run_job(
        store, job, client_factory=lambda endpoint: ChatClient(endpoint, sleep=sleeps.append)
    )
    assert info.status == "done" and info.done == info.total == len(machine_campaign)
    assert stub.record.requests == stub.record.graded + 4
    # back-off 0.01 * 2^(n-1), jittered into [half, whole], at least Retry-After for a 429
    assert len(sleeps) == 4
    assert sleeps[0] == pytest.approx(0.04) and sleeps[3] == pytest.approx(0.04)
    assert 0.01 <= sleeps[1] <= 0.02 and 0.02 <= sleeps[2] <= 0.04
    first = min(labels(store).values(), key=lambda r: r.id)
    assert first.attempts == 5  # four failures, then the answer


def test_a_question_never_answered_is_cannot_judge_and_asked_again_on_resume(
    store, stub, machine_campaign
):
    stub.behaviour.fail_next = [503] * 3  # the first question fails all its 3 attempts
    job = new_job(store, stub, settings={"attempts": 3}, concurrency=1)
    info = machine_jobs.run_job(store, job)
    # the first question is D1-00's, whose duplicate D1-dup shares its fate
    assert info.status == "done" and info.done == info.total - 2
    assert "2 document(s) got no answer" in info.error
    failed = sorted((r.docno, r.cannot_judge) for r in labels(store).values() if not r.answered)
    assert [docno for docno, _ in failed] == ["D1-00", "D1-dup"]
    assert failed[0][1].startswith("no answer: HTTP 503")
    again = machine_jobs.run_job(store, job)
    assert again.status == "done" and again.done == again.total and again.error == ""
    assert labels(store)[("1", "D1-00")].answered and labels(store)[("1", "D1-00")].grade == 2
    assert len(labels(store)) == len(machine_campaign)


def test_timeouts(store, stub, machine_campaign):
    stub.behaviour.slow_s = 1.0
    job = new_job(store, stub, settings={"timeout_s": 0.2, "attempts": 2}, topics=["1"])
    info = machine_jobs.run_job(store, job)
    slow = [r for r in labels(store).values() if r.cannot_judge and "timed out" in r.cannot_judge]
    assert info.status == "done" and slow == []  # no document of topic 1 is slow
    with store.session() as session:  # make one slow
        from workbench.store.models import DocumentRow

        row = session.scalar(select(DocumentRow).where(DocumentRow.docno == "D2-00"))
        row.text += " STUB:SLOW"
    job2 = new_job(
        store, stub, name="machine:stub@2", settings={"timeout_s": 0.2, "attempts": 2}, topics=["2"]
    )
    info = machine_jobs.run_job(store, job2)
    bad = labels(store, "machine:stub@2")[("2", "D2-00")]
    assert not bad.answered and "timed out (0.2 s per attempt)" in bad.cannot_judge
    assert bad.attempts == 2 and info.done == info.total - 1


def test_malformed_refused_and_off_scale_answers_are_cannot_judge(store, stub, machine_campaign):
    with store.session() as session:
        from workbench.store.models import DocumentRow

        for docno, word in (("D3-00", "STUB:REFUSE"), ("D3-01", "STUB:OFFSCALE")):
            row = session.scalar(select(DocumentRow).where(DocumentRow.docno == docno))
            row.text += f" {word}"
    job = new_job(store, stub, topics=["1", "3"])
    info = machine_jobs.run_job(store, job)
    rows = labels(store)
    assert info.status == "done" and info.cannot_judge == 3
    assert rows[("1", "D1-bad")].cannot_judge.startswith("malformed answer: no grade in")
    assert rows[("3", "D3-00")].cannot_judge.startswith("refused: I'm sorry")
    assert rows[("3", "D3-01")].cannot_judge == "grade 9 is not on the scale (0, 1, 2)"
    assert all(r.answered for r in rows.values())  # answers, not asked again


def test_the_budget_in_calls_is_never_exceeded_and_can_be_raised(store, stub, machine_campaign):
    job = new_job(store, stub, concurrency=4, budget_calls=10)
    info = machine_jobs.run_job(store, job)
    assert info.status == "budget" and info.calls == 10 and stub.record.graded == 10
    assert info.done == 11  # D1-dup, a duplicate of D1-00, comes with it
    more = machine_jobs.run_job(store, job, budget_calls=25)
    assert more.status == "budget" and more.calls == 25 and stub.record.graded == 25
    rest = machine_jobs.run_job(store, job, budget_calls=1000)
    assert rest.status == "done" and rest.done == rest.total
    assert stub.record.graded == len(machine_campaign) - 4  # the duplicates from the cache


def test_the_budget_in_tokens(store, stub, machine_campaign):
    job = new_job(store, stub, concurrency=2, budget_tokens=2000)
    info = machine_jobs.run_job(store, job)
    per_question = info.tokens / info.calls
    assert info.status == "budget" and info.tokens >= 2000
    # checked before each question: those in flight may pass it, by at most `concurrency`
    assert info.tokens < 2000 + 2 * per_question + 1


def test_the_cache_answers_the_same_question_once(store, stub, machine_campaign):
    first = machine_jobs.run_job(store, new_job(store, stub))
    asked = stub.record.graded
    assert first.cached == 4 and asked == len(machine_campaign) - 4
    # another judge with the same model, template and answer settings: no question at all
    second = machine_jobs.run_job(store, new_job(store, stub, name="machine:stub@2"))
    assert second.status == "done" and second.cached == second.total and second.calls == 0
    assert stub.record.graded == asked and second.tokens == 0
    copied = labels(store, "machine:stub@2")[("1", "D1-00")]
    assert copied.cached and copied.grade == 2 and copied.raw_answer.startswith('{"grade"')
    # another temperature is another question
    third = machine_jobs.run_job(
        store, new_job(store, stub, name="machine:stub@3", settings={"temperature": 0.5})
    )
    assert third.calls == asked and stub.record.graded == 2 * asked


def test_concurrency_is_bounded(store, stub, machine_campaign):
    stub.behaviour.delay_s = 0.05
    info = machine_jobs.run_job(store, new_job(store, stub, concurrency=3))
    assert info.status == "done" and stub.record.max_in_flight == 3


def test_stop_and_resume(store, stub, machine_campaign):
    stub.behaviour.delay_s = 0.05
    job = new_job(store, stub, concurrency=2)
    with store.session() as session:
        campaign = get_campaign(session, "mc")

    def stop_soon():
        while labels(store) == {} or len(labels(store)) < 6:
            time.sleep(0.02)
        with store.session() as session:
            machine_jobs.request_stop(session, get_campaign(session, "mc"), job)

    stopper = threading.Thread(target=stop_soon)
    stopper.start()
    info = machine_jobs.run_job(store, job)
    stopper.join()
    assert info.status == "stopped" and 6 <= info.done < info.total
    resumed = machine_jobs.run_job(store, job)
    assert resumed.status == "done" and resumed.done == resumed.total
    assert stub.record.graded == len(machine_campaign) - 4  # nothing asked twice
    assert campaign is not None


def test_a_job_is_never_run_twice_at_once(store, stub, machine_campaign):
    stub.behaviour.delay_s = 0.05
    job = new_job(store, stub, concurrency=1)
    runner = threading.Thread(target=machine_jobs.run_job, args=(store, job))
    runner.start()
    while machine_jobs.info(store, job).status != "running":
        time.sleep(0.01)
    with pytest.raises(Conflict, match="is running in another process"):
        machine_jobs.run_job(store, job)
    with store.session() as session:
        machine_jobs.request_stop(session, get_campaign(session, "mc"), job)
    runner.join()


def test_a_crashed_job_resumes_where_it_was(store, stub, machine_campaign, database_url):
    """The judging process is killed (SIGKILL) in the middle of its pool; the job shows as
    interrupted once its heartbeat is stale, and a new run finishes it: every document
    judged once, at most the questions in flight asked twice."""
    stub.behaviour.delay_s = 0.1
    job = new_job(store, stub, concurrency=2)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--db", database_url, "machine", "run", "--job",
         str(job), "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(labels(store)) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert machine_jobs.info(store, job).status == "running"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    asked_before = stub.record.graded
    kept = len(labels(store))
    assert 10 <= kept < len(machine_campaign)
    with store.read_session() as session:
        job_row = machine_jobs.get_job(session, get_campaign(session, "mc"), job)
        assert machine_jobs._status(job_row, machine_jobs.utcnow(), stale_s=0) == "interrupted"
    with pytest.raises(Conflict):  # its heartbeat is still fresh for the default 30 s
        machine_jobs.run_job(store, job)
    info = machine_jobs.run_job(store, job, stale_s=0)
    assert info.status == "done" and info.done == info.total == len(machine_campaign)
    with store.read_session() as session:
        count = session.scalar(select(func.count(MachineJudgement.id)))
    assert count == len(machine_campaign)
    asked_again = asked_before + (len(machine_campaign) - 4 - kept)
    assert asked_again <= stub.record.graded <= asked_again + 2 + 4


def test_a_client_builds_the_answer_models_before_threads_parse_answers():
    """openai defers building its pydantic models, and a deferred build racing in several
    threads fails ("BaseModel cannot be instantiated directly", seen in CI): a new client
    builds every model an answer is parsed into, in a fresh process where none was built."""
    script = (
        "import pydantic, typing\n"
        "from pydantic._internal._mock_val_ser import MockCoreSchema\n"
        "from openai.types.chat import ChatCompletion\n"
        "from workbench.judge_client import ChatClient, Endpoint\n"
        "def models(tp, seen):\n"
        "    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel) and tp not in seen:\n"
        "        seen.add(tp)\n"
        "        for f in tp.model_fields.values(): models(f.annotation, seen)\n"
        "    for a in typing.get_args(tp): models(a, seen)\n"
        "    return seen\n"
        "def deferred():\n"
        "    return sorted(m.__name__ for m in models(ChatCompletion, set())\n"
        "                  if isinstance(m.__pydantic_core_schema__, MockCoreSchema))\n"
        "before = deferred()\n"
        "ChatClient(Endpoint(base_url='http://127.0.0.1:9/v1', model='m')).close()\n"
        "print(len(before), 'ChatCompletion' in before, deferred())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True
    )
    count, root_deferred, after = done.stdout.split(maxsplit=2)
    assert int(count) > 10 and root_deferred == "True"
    assert after.strip() == "[]"
