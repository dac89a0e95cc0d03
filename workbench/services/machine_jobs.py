"""Machine judging jobs: a judge labels a scope of pooled documents, in the background,
resumably.

A job is a `MachineJob` row: its scope (the sampled documents of one pool, optionally some
topics, optionally only those without a current human grade: "humans first, the machine fills
the holes"), its limits and its counters. `run_job` runs it in the calling process (the CLI's
`workbench machine run`, or the process the web starts with `launch`):

- the documents still to judge are those of the scope without an answered label of the judge,
  so a job stopped, over budget or whose process died resumes where it was (a label is
  committed within FLUSH_S of its answer; at most the questions in flight are asked again);
- at most `concurrency` questions are in flight (threads; the model's server does the work);
- each question is retried with back-off on 429, 5xx and timeouts (`judge_client`);
- a cap in questions (`budget_calls`, never exceeded) or tokens (`budget_tokens`, checked
  before each question: the questions in flight may pass it) ends the job as "budget";
- an answer is cached by (model, template, answer settings, topic text, document text)
  (`judge_prompt.cache_key`): a label with the same key already in the campaign (another
  judge, a duplicate document) is copied, marked cached, at no cost;
- a malformed, refused or off-scale answer, a document without text, or a question the
  endpoint never answered is recorded as "cannot judge" with the reason (unanswered ones are
  asked again when the job resumes); a wrong endpoint, model or key (401, 403, 404) fails
  the job at once.

A running job writes its heartbeat every HEARTBEAT_S; one without a heartbeat for STALE_S
is "interrupted" and may be resumed by anyone; a fresh one is never run twice.

We use a job table of our own rather than the report jobs (`services.jobs`): those run one
at a time per server process in a child stopped after 15 minutes and are recomputed whole,
whereas judging a pool takes hours of waiting on a remote server, resumes document by
document, and must not hold up the reports.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from workbench import judge_prompt
from workbench.judge_client import ChatClient, EndpointError, MissingClientLibrary, Reply
from workbench.services import machine_judges
from workbench.services.archive import refuse_if_archived
from workbench.services.current_judgements import graded_keys
from workbench.services.errors import Conflict, NotFound, ServiceError
from workbench.services.machine_questions import (
    Chunks,
    JobView,
    Key,
    Task,
    answer_values,
    label_row,
    next_chunk,
    unanswered_ids,
)
from workbench.services.pools import get_pool, qid_key
from workbench.services.topics import campaign_qids, chosen_topics
from workbench.store import Store
from workbench.store.db import ENV_VAR
from workbench.store.models import (
    Campaign,
    MachineJob,
    MachineJudge,
    MachineJudgement,
    PoolEntry,
    utcnow,
)

QUEUED, RUNNING, DONE, STOPPED, BUDGET, FAILED = (
    "queued", "running", "done", "stopped", "budget", "failed"
)  # fmt: skip
INTERRUPTED = "interrupted"  # shown for a running job without a recent heartbeat
HEARTBEAT_S = 2.0
STALE_S = 30.0
FLUSH_S = 0.5
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class JobInfo:
    """A job as pages and commands show it."""

    id: int
    judge: str
    status: str
    scope: dict[str, Any]
    total: int
    done: int
    calls: int
    tokens: int
    cached: int
    cannot_judge: int
    cost: float
    concurrency: int
    budget_calls: int | None
    budget_tokens: int | None
    error: str
    created_at: dt.datetime
    heartbeat_at: dt.datetime | None
    finished_at: dt.datetime | None

    @property
    def active(self) -> bool:
        return self.status in (QUEUED, RUNNING)

    @property
    def resumable(self) -> bool:
        return self.status in (STOPPED, BUDGET, FAILED, INTERRUPTED, QUEUED)

    @property
    def percent(self) -> float:
        return 100.0 * self.done / self.total if self.total else 100.0

    def describe_scope(self) -> str:
        scope = self.scope
        text = f"pool {scope.get('pool_number')}"
        if scope.get("topics"):
            text += f", {len(scope['topics'])} topic(s)"
        if scope.get("only_unjudged"):
            text += ", documents without a human grade"
        return text

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("created_at", "heartbeat_at", "finished_at"):
            value = data[name]
            data[name] = value.isoformat() if value is not None else None
        return {**data, "percent": round(self.percent, 1), "scope_text": self.describe_scope()}


def _status(job: MachineJob, now: dt.datetime, stale_s: float = STALE_S) -> str:
    if job.status == RUNNING and (
        job.heartbeat_at is None or job.heartbeat_at < now - dt.timedelta(seconds=stale_s)
    ):
        return INTERRUPTED
    return job.status


def job_info(session: Session, job: MachineJob) -> JobInfo:
    judge = session.get(MachineJudge, job.judge_id)
    return JobInfo(
        job.id, judge.name if judge else "?", _status(job, utcnow()), dict(job.scope), job.total,
        job.done, job.calls, job.tokens, job.cached, job.cannot_judge, job.cost,
        job.concurrency, job.budget_calls, job.budget_tokens, job.error, job.created_at,
        job.heartbeat_at, job.finished_at,
    )  # fmt: skip


def get_job(session: Session, campaign: Campaign, job_id: int) -> MachineJob:
    job = session.get(MachineJob, job_id)
    if job is None or job.campaign_id != campaign.id:
        raise NotFound(f"campaign {campaign.name!r} has no machine judging job {job_id}")
    return job


def list_jobs(session: Session, campaign: Campaign) -> list[JobInfo]:
    jobs = session.scalars(
        select(MachineJob).where(MachineJob.campaign_id == campaign.id).order_by(MachineJob.id)
    )
    return [job_info(session, job) for job in jobs]


# --------------------------------------------------------------------------------- scope


def scope_items(session: Session, campaign: Campaign, scope: dict[str, Any]) -> list[Key]:
    """The (qid, docno) of a scope, topics in order, docnos sorted."""
    query = select(PoolEntry.qid, PoolEntry.docno).where(
        PoolEntry.pool_id == scope["pool"], PoolEntry.sampled.is_(True)
    )
    if scope.get("topics"):
        query = query.where(PoolEntry.qid.in_(scope["topics"]))
    items = {(qid, docno) for qid, docno in session.execute(query)}
    if scope.get("only_unjudged"):
        items -= graded_keys(session, campaign)
    return sorted(items, key=lambda key: (qid_key(key[0]), key[1]))


def _answered(session: Session, judge_id: int) -> set[Key]:
    rows = session.execute(
        select(MachineJudgement.qid, MachineJudgement.docno).where(
            MachineJudgement.judge_id == judge_id, MachineJudgement.answered.is_(True)
        )
    )
    return {(qid, docno) for qid, docno in rows}


def create_job(
    session: Session,
    campaign: Campaign,
    judge: MachineJudge,
    *,
    pool_number: int | None = None,
    topics: Sequence[str] | None = None,
    only_unjudged: bool = False,
    concurrency: int = 4,
    budget_calls: int | None = None,
    budget_tokens: int | None = None,
) -> MachineJob:
    """A queued job of `judge` over the sampled documents of a pool (default: the latest),
    of `topics` when given, only those without a human grade when `only_unjudged`."""
    refuse_if_archived(campaign)
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ServiceError(f"concurrency: expected 1..{MAX_CONCURRENCY}, got {concurrency}")
    for name, cap in (("budget in calls", budget_calls), ("budget in tokens", budget_tokens)):
        if cap is not None and cap < 1:
            raise ServiceError(f"{name}: expected a positive number, got {cap}")
    active = session.scalar(
        select(MachineJob.id).where(
            MachineJob.judge_id == judge.id, MachineJob.status.in_((QUEUED, RUNNING))
        )
    )
    if active is not None:
        raise Conflict(
            f"judge {judge.name!r} already has job {active} queued or running: resume or "
            "stop it first"
        )
    pool = get_pool(session, campaign, pool_number)
    chosen = None
    if topics:
        chosen = sorted(
            chosen_topics(topics, campaign_qids(session, campaign), campaign), key=qid_key
        )
    scope = {"pool": pool.id, "pool_number": pool.number, "topics": chosen,
             "only_unjudged": only_unjudged}  # fmt: skip
    items = scope_items(session, campaign, scope)
    if not items:
        raise ServiceError(f"pool {pool.number} has no document to judge in that scope")
    job = MachineJob(
        campaign_id=campaign.id,
        judge_id=judge.id,
        scope=scope,
        status=QUEUED,
        concurrency=concurrency,
        budget_calls=budget_calls,
        budget_tokens=budget_tokens,
        total=len(items),
        done=len(set(items) & _answered(session, judge.id)),
    )
    session.add(job)
    session.flush()
    return job


def request_stop(session: Session, campaign: Campaign, job_id: int) -> None:
    """Ask a running job to stop after the questions in flight; a queued or interrupted one
    is marked stopped at once."""
    job = get_job(session, campaign, job_id)
    status = _status(job, utcnow())
    if status in (QUEUED, INTERRUPTED):
        job.status, job.finished_at = STOPPED, utcnow()
    elif status == RUNNING:
        job.stop_requested = True


# --------------------------------------------------------------------------------- running


@dataclass
class _Counters:
    done: int = 0
    calls: int = 0
    tokens: int = 0
    cached: int = 0
    cannot_judge: int = 0
    cost: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)


Progress = Callable[[JobInfo], None]
ClientFactory = Callable[[Any], Any]


def _claim(store: Store, job_id: int, stale_s: float, budgets: dict[str, int]) -> None:
    """Mark the job running, refused while another process runs it; the job's row is read for
    update, so two claims at once (PostgreSQL) take turns and the second sees the first."""
    with store.session() as session:
        job = session.get(MachineJob, job_id, with_for_update=True)
        if job is None:
            raise NotFound(f"no machine judging job {job_id}")
        campaign = session.get(Campaign, job.campaign_id)
        if campaign is not None:
            refuse_if_archived(campaign)  # resuming writes labels
        status = _status(job, utcnow(), stale_s)
        if status == RUNNING:
            raise Conflict(
                f"job {job_id} is running in another process (heartbeat "
                f"{(utcnow() - job.heartbeat_at).total_seconds():.0f} s ago)"  # type: ignore[operator]
            )
        for name, value in budgets.items():
            setattr(job, name, value)
        job.status, job.stop_requested, job.error = RUNNING, False, ""
        job.heartbeat_at, job.finished_at = utcnow(), None


def run_job(
    store: Store,
    job_id: int,
    *,
    progress: Progress | None = None,
    client_factory: ClientFactory | None = None,
    stale_s: float = STALE_S,
    budget_calls: int | None = None,
    budget_tokens: int | None = None,
) -> JobInfo:
    """Run (or resume) a job to its end: done, stopped, over budget or failed; budget_calls
    and budget_tokens, when given, replace the job's caps (to resume one over budget).
    Refuses a job that another process runs (fresh heartbeat)."""
    budgets = {"budget_calls": budget_calls, "budget_tokens": budget_tokens}
    _claim(store, job_id, stale_s, {k: v for k, v in budgets.items() if v is not None})
    try:
        return _run(store, job_id, progress, client_factory)
    except BaseException as error:  # record why, then let it go on (KeyboardInterrupt too)
        if isinstance(error, KeyboardInterrupt):
            _set(store, job_id, status=STOPPED, error="interrupted", finished_at=utcnow())
            raise
        message = (
            str(error)
            if isinstance(error, ServiceError | MissingClientLibrary)
            else (f"{type(error).__name__}: {error}")
        )
        _set(store, job_id, status=FAILED, error=message[:2000], finished_at=utcnow())
        if isinstance(error, ServiceError | MissingClientLibrary):
            return info(store, job_id)
        raise


def info(store: Store, job_id: int) -> JobInfo:
    with store.read_session() as session:
        job = session.get(MachineJob, job_id)
        if job is None:
            raise NotFound(f"no machine judging job {job_id}")
        return job_info(session, job)


def _set(store: Store, job_id: int, **values: Any) -> None:
    with store.session() as session:
        session.execute(update(MachineJob).where(MachineJob.id == job_id).values(**values))


def _run(
    store: Store, job_id: int, progress: Progress | None, client_factory: ClientFactory | None
) -> JobInfo:
    with store.read_session() as session:
        job = session.get(MachineJob, job_id)
        assert job is not None
        campaign = session.get(Campaign, job.campaign_id)
        judge = session.get(MachineJudge, job.judge_id)
        assert campaign is not None and judge is not None
        endpoint = machine_judges.endpoint_of(judge)
        params = {**machine_judges.parameters({}), **judge.params}
        grades = [value for value, _ in machine_judges.scale(campaign)]
        scope, concurrency = dict(job.scope), job.concurrency
        budget_calls, budget_tokens = job.budget_calls, job.budget_tokens
        view = JobView(job.id, job.judge_id, job.campaign_id, judge.template_hash)
        items = scope_items(session, campaign, scope)
        answered = _answered(session, judge.id)
        todo = [key for key in items if key not in answered]
        totals = _Counters(
            done=len(items) - len(todo),
            calls=job.calls,
            tokens=job.tokens,
            cached=job.cached,
            cannot_judge=job.cannot_judge,
            cost=job.cost,
        )
    _set(store, job_id, total=len(items), done=totals.done)
    client = (client_factory or ChatClient)(endpoint)
    unanswered = unanswered_ids(store, view.judge_id)
    last_flush = time.monotonic()
    status = DONE
    error = ""
    stop = False
    in_flight: dict[Future[Reply | EndpointError], Task] = {}
    queue: list[Task] = []
    topics: dict[str, judge_prompt.Topic] = {}
    chunks = Chunks(todo)

    def ask(task: Task) -> Reply | EndpointError:
        assert task.prompt is not None
        try:
            return client.ask(task.prompt.messages, params)
        except EndpointError as failure:
            return failure

    def flush(force: bool = False) -> bool:
        """Write the labels gathered and the counters; True when a stop was asked."""
        nonlocal last_flush, unanswered
        if not force and time.monotonic() - last_flush < FLUSH_S:
            return False
        rows, totals.rows = totals.rows, []
        with store.session() as session:
            for values in rows:
                existing = unanswered.pop((values["qid"], values["docno"]), None)
                if existing is not None:
                    session.execute(
                        update(MachineJudgement)
                        .where(MachineJudgement.id == existing)
                        .values(**values, created_at=utcnow())
                    )
                else:
                    session.add(MachineJudgement(**values))
            session.execute(
                update(MachineJob).where(MachineJob.id == job_id).values(
                    done=totals.done, calls=totals.calls, tokens=totals.tokens,
                    cached=totals.cached, cannot_judge=totals.cannot_judge, cost=totals.cost,
                    heartbeat_at=utcnow(),
                )
            )  # fmt: skip
            stop_asked = bool(
                session.scalar(select(MachineJob.stop_requested).where(MachineJob.id == job_id))
            )
        last_flush = time.monotonic()
        if progress is not None:
            progress(info(store, job_id))
        return stop_asked

    def record(task: Task, values: dict[str, Any], *, cached: bool = False) -> None:
        for n, key in enumerate(task.keys):
            copy = dict(values)
            if cached or n > 0:  # a duplicate's label is the first one's, at no cost
                copy.update(cached=True, prompt_tokens=0, completion_tokens=0, cost=0.0,
                            latency_ms=0.0, attempts=0)  # fmt: skip
            totals.rows.append(label_row(view, task, key, **copy))
            totals.done += 1 if copy.get("answered", True) else 0
            totals.cached += 1 if copy["cached"] else 0
            totals.cannot_judge += 1 if copy.get("grade") is None else 0

    def over_budget() -> bool:
        asked = totals.calls + len(in_flight)
        return (budget_calls is not None and asked >= budget_calls) or (
            budget_tokens is not None and totals.tokens >= budget_tokens
        )

    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="machine-judge")
    try:
        while True:
            if not queue and not stop:
                queue = next_chunk(store, chunks, campaign, judge, topics, record)
            while queue and not stop and len(in_flight) < concurrency:
                if over_budget():
                    status, stop = BUDGET, True
                    break
                task = queue.pop(0)
                in_flight[executor.submit(ask, task)] = task
            if not in_flight and (stop or not queue):
                if stop or chunks.exhausted():
                    break
                continue
            finished, _ = wait(list(in_flight), timeout=FLUSH_S, return_when=FIRST_COMPLETED)
            for future in finished:
                task = in_flight.pop(future)
                outcome = future.result()
                totals.calls += 1
                if isinstance(outcome, EndpointError):
                    if outcome.fatal:
                        status, stop, error = FAILED, True, str(outcome)
                        continue
                    record(
                        task,
                        {
                            "grade": None,
                            "answered": False,
                            "attempts": outcome.attempts,
                            "cannot_judge": f"no answer: {outcome}",
                            "cached": False,
                        },
                    )
                    continue
                values = answer_values(outcome, grades, params)
                totals.tokens += outcome.prompt_tokens + outcome.completion_tokens
                totals.cost += values["cost"]
                record(task, values)
            if flush() and not stop:
                status, stop = STOPPED, True
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
        close = getattr(client, "close", None)
        if close is not None:
            close()
    flush(force=True)
    missing = len(items) - totals.done
    if status == DONE and missing:
        error = (
            f"{missing} document(s) got no answer (recorded as cannot judge); resume the "
            "job to ask again"
        )
    _set(store, job_id, status=status, error=error, finished_at=utcnow(), stop_requested=False)
    return info(store, job_id)


# ------------------------------------------------------------------------------ launching


def launch(store: Store, job_id: int) -> subprocess.Popen[bytes]:
    """Run the job in a process of its own (`workbench machine run --job ID`), detached from
    the caller's session so that it outlives a web worker's restart; it reads the store at
    the caller's URL and the endpoint's key from the caller's environment."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    env = {
        **os.environ,
        ENV_VAR: store.url,
        "PYTHONPATH": os.pathsep.join(p for p in (root, path) if p),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "machine", "run", "--job", str(job_id), "--quiet"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
