"""Reports computed outside the request: a job table, a worker per process that runs each job
in a child process, and results cached until the campaign's data change.

A job is one (campaign, kind, parameters). `request_job` reads it in a read transaction and
queues it (a short write) when it has no result for the campaign's current data, as told by
`fingerprint` (its judgements, runs, qrels, final labels, pools, topics and scale). It then
waits at most `wait` seconds for the result, so a request thread is never held longer.

Each process has one `Worker`: a thread, started when a job is queued and ended when none is
left, that claims jobs one at a time and has a child process compute each (`serve`), so that
the computation never competes for this process's interpreter lock with the request threads.
The child is kept for the next job and forked from a fork server that imported the job
modules once (`services.forked`), so that starting one costs no imports; a request waiting
for a job this process's Worker runs wakes when it ends (others' jobs are polled).
A queued job's progress says how many jobs are ahead of it (one runs per server process, so
that reports never take more than that many cores from the requests).
The child reads in one read transaction (a consistent snapshot, no write lock), writes its
progress in short transactions, and stores the result with the fingerprint of the snapshot it
read. The Worker thread writes the job's heartbeat every HEARTBEAT_S while it waits for the
child. A job whose process died (no heartbeat for STALE_S) is queued again by the next
request that finds it.

Jobs and results are bounded: when a new job is queued, the campaign's finished reports
beyond the KEPT_REPORTS most recently queued are deleted with their results, and so are
finished tasks older than KEPT_TASK_S whose outcome was never shown.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import selectors
import socket
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from workbench.priority import run_as_batch
from workbench.services import changes
from workbench.services.errors import NotFound, ServiceError
from workbench.services.forked import Child, fork
from workbench.store import Store
from workbench.store.db import cast_result
from workbench.store.models import (
    Campaign,
    DocumentImport,
    Grade,
    Pool,
    QrelsSet,
    QueryLog,
    ReportJob,
    ReportResult,
    Run,
    Topic,
    utcnow,
)

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
HEARTBEAT_S = 5.0
STALE_S = 30.0
"""A running job without a heartbeat, or a queued one unclaimed, for this long is orphaned."""
TIMEOUT_S = 900.0
IDLE_S = 30.0
"""How long the worker and its child process wait for another job before they end."""
POLL_S = 0.05
"""How often a request waiting for a job run by another process reads its state."""
KEPT_REPORTS = 50
"""The finished report jobs (with their results) kept per campaign: every distinct parameter
set is a job, so an admin trying many would otherwise grow the table without end."""
KEPT_TASK_S = 86_400.0
"""How long a finished task's outcome waits to be shown (its page) before it is deleted."""

Progress = Callable[[str], None]
JobFunction = Callable[[Session, int, dict[str, Any], Progress], bytes]
TaskFunction = Callable[[Store, int, dict[str, Any], Progress], bytes]
Abandoned = Callable[[Store, int, dict[str, Any]], None]
_functions: dict[str, JobFunction] = {}
_tasks: dict[str, TaskFunction] = {}
_abandoned: dict[str, Abandoned] = {}
Depends = Callable[[Session, int], list[Any]]
_depends: dict[str, Depends] = {}


def register(kind: str, function: JobFunction, *, depends: Depends | None = None) -> None:
    """Make `kind` runnable: function(session, campaign id, params, progress) -> result bytes
    (the campaign exists: the job fails when it was deleted meanwhile).
    It raises ServiceError for a report the campaign cannot have (stored as the job's error).
    `depends(session, campaign id)`: what else its result is computed from, beyond
    `fingerprint`'s data (plain values; they enter its fingerprint)."""
    _functions[kind] = function
    if depends is not None:
        _depends[kind] = depends


def register_task(kind: str, function: TaskFunction, *, abandoned: Abandoned | None = None) -> None:
    """Make `kind` a task, run once per request (an upload to import) by a worker of the
    machine that queued it (its files are there):
    function(store, campaign id, params, progress) -> result bytes, writing in its own
    transactions. Its outcome never goes stale; ServiceError is stored as its error.
    `abandoned(store, campaign id, params)` cleans up after a task whose process died or
    was stopped (killed, out of memory, over its time), which could not clean up itself."""
    _tasks[kind] = function
    if abandoned is not None:
        _abandoned[kind] = abandoned


@dataclass(frozen=True)
class JobState:
    """A job as a request sees it. `result` is the latest result, computed from the data of
    job generation `result_generation`; `fresh` when that data is still the campaign's."""

    id: int
    status: str
    progress: str
    generation: int
    result: bytes | None
    result_generation: int
    fresh: bool
    error: str
    finished_at: dt.datetime | None

    @property
    def pending(self) -> bool:
        return self.status in (QUEUED, RUNNING)


def job_key(kind: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """(canonical JSON of the parameters, sha256 of kind and JSON)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return text, hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()


def fingerprint(session: Session, campaign_id: int, kind: str | None = None) -> str:
    """A digest of what a campaign's reports are computed from; it changes when a judgement,
    run, qrels set or label, final label, pool, topic, query log, document import or the scale
    is added, changed or removed, and with what job `kind` depends on besides (`register`).
    The tables that grow with the campaign (`changes.TRACKED`: judgements, final labels, pool
    entries, qrels entries, ...) enter as the campaign's change counter, which every writer of
    them increments in its transaction: one indexed read, whatever their size. The rest is
    read as it is (a few rows per run, pool, qrels set, ...)."""

    def one(query: Any) -> list[Any]:
        return [list(row) for row in session.execute(query)]

    parts = [
        changes.version(session, campaign_id),
        one(select(Pool.id).where(Pool.campaign_id == campaign_id).order_by(Pool.id)),
        one(select(Topic.id).where(Topic.campaign_id == campaign_id).order_by(Topic.id)),
        one(
            select(Run.id, Run.checksum, Run.contributes, Run.group)
            .where(Run.campaign_id == campaign_id)
            .order_by(Run.id)
        ),
        one(select(QrelsSet.id).where(QrelsSet.campaign_id == campaign_id).order_by(QrelsSet.id)),
        one(  # each committed document import (the collection's size enters some reports)
            select(func.count(DocumentImport.id), func.max(DocumentImport.id)).where(
                DocumentImport.campaign_id == campaign_id, DocumentImport.state != "open"
            )
        ),
        one(
            select(QueryLog.id, QueryLog.name)
            .where(QueryLog.campaign_id == campaign_id, QueryLog.state == "ready")
            .order_by(QueryLog.id)
        ),
        one(select(Campaign.relevance_level).where(Campaign.id == campaign_id)),
        one(
            select(Grade.value, Grade.key)
            .where(Grade.campaign_id == campaign_id)
            .order_by(Grade.value)
        ),
    ]
    if kind in _depends:
        parts.append(_depends[kind](session, campaign_id))
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _state(session: Session, job: ReportJob, current: str) -> JobState:
    """The job as a request sees it, with its last result (read from ReportResult)."""
    result = session.scalar(select(ReportResult.result).where(ReportResult.job_id == job.id))
    return JobState(
        id=job.id,
        status=job.status,
        progress=job.progress,
        generation=job.generation,
        result=result,
        result_generation=job.result_generation,
        fresh=result is not None and job.fingerprint == current,
        error=job.error,
        finished_at=job.finished_at,
    )


def _orphaned(job: ReportJob, now: dt.datetime) -> bool:
    stale = now - dt.timedelta(seconds=STALE_S)
    if job.status == QUEUED:
        return job.queued_at < stale
    return job.status == RUNNING and (job.heartbeat_at or job.queued_at) < stale


def _needs_run(job: ReportJob | None, current: str, now: dt.datetime) -> bool:
    """Whether a request queues the job: none yet; a report finished for other data than
    `current` (or whose process died: `wanted` emptied); a queued or running one orphaned."""
    if job is None:
        return True
    if job.status in (DONE, FAILED):
        return job.kind not in _tasks and job.wanted != current
    return _orphaned(job, now)


def request_job(
    store: Store,
    campaign_id: int,
    kind: str,
    params: Mapping[str, Any],
    *,
    worker: Worker,
    wait: float = 1.0,
) -> JobState:
    """The job's state, after queueing it when its result (if any) predates the campaign's
    current data or its process died, and waiting at most `wait` seconds for it to finish."""
    if kind not in _functions and kind not in _tasks:
        raise ValueError(f"no job kind {kind!r}")
    text, key = job_key(kind, params)
    where = and_(ReportJob.campaign_id == campaign_id, ReportJob.key == key)
    with store.read_session() as session:
        current = "" if kind in _tasks else fingerprint(session, campaign_id, kind)
        job = session.scalar(select(ReportJob).where(where))
        state = _state(session, job, current) if job is not None else None
        queue = _needs_run(job, current, utcnow())
    if queue:
        with store.session() as session:
            job = session.scalar(select(ReportJob).where(where))
            now = utcnow()
            if job is None:
                _evict(session, campaign_id, now)
                job = ReportJob(
                    campaign_id=campaign_id,
                    kind=kind,
                    key=key,
                    params=text,
                    generation=0,
                    runs_on=socket.gethostname() if kind in _tasks else "",
                )
                session.add(job)
            if _needs_run(job, current, now) or job.id is None:
                job.status, job.progress, job.error = QUEUED, "queued", ""
                job.generation = (job.generation or 0) + 1
                job.wanted, job.queued_at, job.heartbeat_at = current, now, None
            session.flush()
            queued_id = job.id
        with store.read_session() as session:
            queued = session.get(ReportJob, queued_id)
            if queued is None:
                raise NotFound(f"campaign {campaign_id} was deleted meanwhile")
            state = _state(session, queued, current)
    assert state is not None
    if state.pending:
        worker.wake()
    deadline = time.monotonic() + wait
    while state.pending and (left := deadline - time.monotonic()) > 0:
        worker.wait_for_job(state.id, left)  # at once when this process ran it
        with store.read_session() as session:
            job = session.get(ReportJob, state.id)
            if job is None:  # the campaign was deleted meanwhile
                break
            state = _state(session, job, current)
    if state.status == QUEUED:
        with store.read_session() as session:
            ahead = _jobs_ahead(session, state.id)
        if ahead:
            state = dataclasses.replace(
                state,
                progress=f"waiting: {ahead} report(s) or import(s) ahead of it in the queue "
                "(each server process computes one at a time)",
            )
    return state


def _evict(session: Session, campaign_id: int, now: dt.datetime) -> None:
    """Delete the campaign's finished report jobs beyond the KEPT_REPORTS - 1 most recently
    queued (room for the one being added), and every finished task older than KEPT_TASK_S;
    their results go with them (ON DELETE CASCADE)."""
    finished = ReportJob.status.in_((DONE, FAILED))
    tasks = ReportJob.kind.in_(list(_tasks))
    reports = and_(ReportJob.campaign_id == campaign_id, finished, ~tasks)
    kept = (
        select(ReportJob.id)
        .where(reports)
        .order_by(ReportJob.queued_at.desc(), ReportJob.id.desc())
        .limit(KEPT_REPORTS - 1)
    )
    evicted = session.scalars(select(ReportJob.id).where(reports, ReportJob.id.not_in(kept)))
    horizon = now - dt.timedelta(seconds=KEPT_TASK_S)
    old_tasks = session.scalars(
        select(ReportJob.id).where(finished, tasks, ReportJob.queued_at < horizon)
    )
    doomed = [*evicted, *old_tasks]
    if doomed:
        session.execute(delete(ReportResult).where(ReportResult.job_id.in_(doomed)))
        session.execute(delete(ReportJob).where(ReportJob.id.in_(doomed)))


def _jobs_ahead(session: Session, job_id: int) -> int:
    """How many jobs of any campaign run, or wait to run before it, ahead of a queued job."""
    job = session.get(ReportJob, job_id)
    if job is None or job.status != QUEUED:
        return 0
    earlier = or_(
        ReportJob.queued_at < job.queued_at,
        and_(ReportJob.queued_at == job.queued_at, ReportJob.id < job.id),
    )
    pending = ReportJob.status.in_((QUEUED, RUNNING))
    return session.scalar(select(func.count(ReportJob.id)).where(pending, earlier)) or 0


def task_state(store: Store, campaign_id: int, job_id: int) -> tuple[str, dict[str, Any]] | None:
    """(kind, parameters) of a task of the campaign, or None when there is no such task."""
    with store.read_session() as session:
        job = session.get(ReportJob, job_id)
        if job is None or job.campaign_id != campaign_id or job.kind not in _tasks:
            return None
        return job.kind, json.loads(job.params)


def forget(store: Store, job_id: int) -> None:
    """Delete a finished job (a task whose outcome has been shown)."""
    with store.session() as session:
        session.execute(
            delete(ReportJob).where(ReportJob.id == job_id, ReportJob.status.in_((DONE, FAILED)))
        )


def discard_result(store: Store, job_id: int) -> None:
    """Delete the job's result (one that cannot be used: its seal does not match this app's
    key) and have the next request queue the job again, unless it is pending already."""
    with store.session() as session:
        session.execute(delete(ReportResult).where(ReportResult.job_id == job_id))
        session.execute(
            update(ReportJob)
            .where(ReportJob.id == job_id, ReportJob.status.in_((DONE, FAILED)))
            .values(wanted="", fingerprint="")
            .execution_options(synchronize_session=False)
        )


def _claim_next(store: Store) -> tuple[int, int] | None:
    """Mark the oldest queued (or orphaned) job that this machine may run (a task runs where
    its files were saved) running; (job id, generation), or None."""
    with store.session() as session:
        now = utcnow()
        stale = now - dt.timedelta(seconds=STALE_S)
        candidates = session.scalars(
            select(ReportJob)
            .where(
                or_(
                    ReportJob.status == QUEUED,
                    and_(ReportJob.status == RUNNING, ReportJob.heartbeat_at < stale),
                ),
                ReportJob.runs_on.in_(("", socket.gethostname())),
            )
            .order_by(ReportJob.queued_at)
            .limit(5)
        ).all()
        for job in candidates:
            claimed = session.execute(
                update(ReportJob)
                .where(
                    ReportJob.id == job.id,
                    ReportJob.status == job.status,
                    ReportJob.generation == job.generation,
                )
                .values(status=RUNNING, heartbeat_at=now, progress="starting")
                .execution_options(synchronize_session=False)
            )
            if cast_result(claimed).rowcount == 1:
                return job.id, job.generation
    return None


def _finish(
    store: Store, job_id: int, generation: int, result: bytes | None = None, **values: Any
) -> None:
    """Store the outcome of the job's generation (unless it was claimed again meanwhile):
    `values` of its ReportJob row and, when given, its new result."""
    with store.session() as session:
        finished = session.execute(
            update(ReportJob)
            .where(
                ReportJob.id == job_id,
                ReportJob.generation == generation,
                ReportJob.status == RUNNING,
            )
            .values(finished_at=utcnow(), progress="", **values)
            .execution_options(synchronize_session=False)
        )
        if result is not None and cast_result(finished).rowcount == 1:
            session.execute(delete(ReportResult).where(ReportResult.job_id == job_id))
            session.add(ReportResult(job_id=job_id, result=result))


def _touch(store: Store, job_id: int, generation: int, **values: Any) -> None:
    """The job's heartbeat (and progress): one UPDATE without the ORM, so that the write lock
    is held for little Python work."""
    with store.connection() as connection:
        connection.execute(
            update(ReportJob)
            .where(ReportJob.id == job_id, ReportJob.generation == generation)
            .values(heartbeat_at=utcnow(), **values)
        )


def run_job(store: Store, job_id: int) -> None:
    """Compute a claimed job (in the child process) and store its result or error."""
    with store.read_session() as session:
        job = session.get(ReportJob, job_id)
        if job is None or job.status != RUNNING:
            return
        kind, generation = job.kind, job.generation
        params, campaign_id = json.loads(job.params), job.campaign_id

    def progress(text: str) -> None:
        _touch(store, job_id, generation, progress=text[:200])

    current = ""
    try:
        if kind in _tasks:
            result = _tasks[kind](store, campaign_id, params, progress)
        else:
            with store.read_session() as session:
                current = fingerprint(session, campaign_id, kind)
                campaign = session.get(Campaign, campaign_id)
                if campaign is None:
                    raise ServiceError(f"campaign {campaign_id} no longer exists")
                result = _functions[kind](session, campaign.id, params, progress)
    except Exception as error:
        if isinstance(error, ServiceError):
            message = str(error)
        else:
            traceback.print_exc()
            message = f"the report failed ({type(error).__name__}: {error})"
        seen: dict[str, Any] = {"wanted": current} if current else {}
        _finish(store, job_id, generation, status=FAILED, error=message, **seen)
    else:
        _finish(
            store,
            job_id,
            generation,
            status=DONE,
            result=result,
            result_generation=generation,
            fingerprint=current,
            wanted=current,
            error="",
        )


_workers: weakref.WeakSet[Worker] = weakref.WeakSet()
"""Every worker of this process that is still referred to (`stop_workers`)."""


def stop_workers(timeout: float = 10.0) -> None:
    """Stop every worker of this process (`Worker.stop`): a server shutting down, or a test
    letting its apps and stores go."""
    for worker in list(_workers):
        worker.stop(timeout)


class Worker:
    """This process's job runner: a thread, alive while there are jobs (and IDLE_S after),
    that claims them one at a time and has a child process (`command`, with `env`) compute
    each, for at most `timeout` s. The child is started once and reads job ids on its stdin,
    so that it imports the statistics and plotting libraries once; it exits when its stdin
    closes (this thread ending, or this process dying).

    With `forked` (a module-level function named "module:function": `serve` over a store, as
    `command` would run), the child is instead forked from this process's fork server
    (`multiprocessing`'s), which imported the module once: a new child (after IDLE_S, a crash,
    or in another app of this process) costs milliseconds instead of a new interpreter's
    imports."""

    def __init__(
        self,
        store: Store,
        command: Sequence[str],
        env: Mapping[str, str],
        *,
        timeout: float = TIMEOUT_S,
        idle: float = IDLE_S,
        forked: str | None = None,
    ) -> None:
        self.store = store
        self.command = list(command)
        self.env = dict(env)
        self.timeout = timeout
        self.idle = idle
        self.forked = forked
        self._wakeup = threading.Condition()
        self._pending = False
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._finished = threading.Condition()
        self._running: int | None = None
        """The job this worker's child is computing (guarded by `_finished`)."""
        _workers.add(self)

    def wait_for_job(self, job_id: int, timeout: float) -> None:
        """Wait for job `job_id` at most `timeout` s: until this worker finishes it when it is
        the one computing it (the request wakes at once, without reading the store: a poll
        every POLL_S cost a report page up to a third of a second of CPU), else POLL_S, less
        when this worker finishes a job meanwhile (jobs of other processes are polled)."""
        with self._finished:
            self._finished.wait(timeout if self._running == job_id else min(POLL_S, timeout))

    def wake(self) -> None:
        """Look for jobs to run (starts the thread when it is not running)."""
        with self._wakeup:
            self._pending = True
            self._stopping = False  # a wake after stop() cancels it
            self._wakeup.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="report-jobs", daemon=True)
                self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread after the job it is running (its child is told to end), waiting at most
        `timeout` s for it (a job whose child fails meanwhile is left to be claimed again, not
        failed in a store that may be gone); a later wake() starts it again. An app that lets
        its store go (a test's, a server shutting down) stops its worker first, or the thread
        would poll a store that is gone, or a new one made at the same path."""
        with self._wakeup:
            thread = self._thread
            self._stopping = True
            self._wakeup.notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        child: Child | None = None
        stopped = False
        try:
            while True:
                with self._wakeup:
                    if not self._pending and not self._stopping:
                        self._wakeup.wait(self.idle)
                    if self._stopping or not self._pending:
                        stopped, self._stopping = self._stopping, False
                        self._thread = None
                        return
                    self._pending = False
                try:
                    while not self._stopping and (claimed := _claim_next(self.store)):
                        with self._finished:
                            self._running = claimed[0]
                        try:
                            child = self._run(child, *claimed)
                        finally:
                            with self._finished:
                                self._running = None
                                self._finished.notify_all()
                except Exception:  # the store is unreachable: the next request wakes us again
                    traceback.print_exc()
        finally:
            if child is not None:
                _close(child, wait=not stopped)

    def _run(self, child: Child | None, job_id: int, generation: int) -> Child | None:
        """Have the child compute the job; the child, or None when it had to be stopped."""
        if child is None or child.poll() is not None:
            if self.forked is not None:
                child = fork(self.forked, self.env)
            else:
                child = subprocess.Popen(
                    self.command,
                    env=self.env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write(f"{job_id}\n".encode())
            child.stdin.flush()
            deadline = time.monotonic() + self.timeout
            ready: list[Any] = []
            # a selector (poll or epoll), not select(): a process with over 1,024 open files
            # has descriptors that select() cannot watch
            with selectors.DefaultSelector() as waiting:
                waiting.register(child.stdout, selectors.EVENT_READ)
                while not ready and (left := deadline - time.monotonic()) > 0:
                    ready = waiting.select(min(HEARTBEAT_S, left))
                    if not ready:
                        self._beat(job_id, generation)
            answered = bool(ready) and child.stdout.readline() != b""
        except OSError:
            answered = False
        if answered:
            return child
        # a process killed (the kernel's OOM killer, an operator) is no answer of the report's:
        # the job is not marked as computed for this data (`wanted`), so the next request
        # queues it again; a report that failed by itself or ran past the time limit (it would
        # again) fails once per data
        retry: dict[str, Any] = {}
        if not ready:
            error = f"the report took longer than {self.timeout:.0f} s and was stopped"
        else:
            error = f"the report's process exited with status {child.wait()}"
            retry["wanted"] = ""
        child.kill()
        child.wait()
        if self._stopping:
            # stopped (an app letting its store go): the store may be gone, which is likely
            # why the child failed; the job is left running, and claimed again (`_claim_next`)
            # once its heartbeat is stale, when its store is still there
            return None
        _finish(self.store, job_id, generation, status=FAILED, error=error, **retry)
        self._clean_up(job_id)
        return None

    def _clean_up(self, job_id: int) -> None:
        """Call the `abandoned` function of a task whose process died or was stopped."""
        with self.store.read_session() as session:
            job = session.get(ReportJob, job_id)
            if job is None or job.kind not in _abandoned:
                return
            kind, campaign_id, params = job.kind, job.campaign_id, json.loads(job.params)
        try:
            _abandoned[kind](self.store, campaign_id, params)
        except Exception:  # the next import of the campaign clears what is left
            traceback.print_exc()

    def _beat(self, job_id: int, generation: int) -> None:
        """The heartbeat of a job its child is computing, written by this thread: in the
        child, a heartbeat thread that held the write lock had to wait for the interpreter
        lock of the computation (a long sort or pickling holds it), and every writer waited
        with it (0.3-0.4 s). A store that cannot be reached skips a beat."""
        with contextlib.suppress(SQLAlchemyError):
            _touch(self.store, job_id, generation)


def _close(child: Child, *, wait: bool = True) -> None:
    """End an idle child: its stdin closes, it exits; with `wait`, wait for that (killed after
    10 s). A stopped worker does not wait: its child ends on its own and is reaped later (by
    `subprocess` or `multiprocessing` at their next start)."""
    if child.stdin is not None:
        with contextlib.suppress(OSError):
            child.stdin.close()
    if not wait:
        return
    try:
        child.wait(timeout=10)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def serve(store: Store) -> None:
    """The child process: at a lower CPU priority than the web workers, compute each job id
    read from stdin and answer a line on stdout when it is stored; exit at end of input.
    Anything else the job prints goes to stderr."""
    run_as_batch()
    answers = sys.stdout
    sys.stdout = sys.stderr
    try:
        for line in sys.stdin:
            run_job(store, int(line))
            answers.write("done\n")
            answers.flush()
    finally:
        store.dispose()
