"""The web side of report jobs (`services.jobs`): each app's worker, sealed results, and the
child process that computes them (`workbench.web.job_child`, job ids on stdin).

A job's result is the template context of its report page, pickled and sealed with an HMAC
keyed by the app's secret key, so that only what this app's job processes wrote is ever
unpickled. Config: REPORT_JOB_WAIT_SECONDS (how long a request waits for a job before it
shows its progress; default 1), REPORT_JOB_TIMEOUT_SECONDS (default 900).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import pickle
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask, current_app, flash

from workbench import querylog
from workbench.services import jobs
from workbench.services.store_handle import ENV_VAR, SQLITE_SYNCHRONOUS_ENV, Session
from workbench.web.db import get_store
from workbench.web.security import wants_json
from workbench.web.settings import EXTENSION as SETTINGS

EXTENSION = "workbench_report_jobs"
KEY_ENV = "WORKBENCH_REPORT_JOB_KEY"
JOB_CHILD = "workbench.web.job_child"
"""The module the jobs' child runs (`main`), forked or as `python -m`."""
WAIT_S = 1.0
DIGEST = hashlib.sha256().digest_size

PageFunction = Callable[[Session, int, dict[str, Any], jobs.Progress], dict[str, Any]]
"""Builds a report page's context from (session, the campaign's id, the job's params,
progress), as `services.jobs` hands them over."""


def seal(context: Mapping[str, Any], key: bytes) -> bytes:
    """The pickled context, preceded by its HMAC-SHA256 under `key`."""
    data = pickle.dumps(dict(context), protocol=pickle.HIGHEST_PROTOCOL)
    return hmac.new(key, data, hashlib.sha256).digest() + data


def unseal(sealed: bytes, key: bytes) -> dict[str, Any]:
    """The context of `seal`; ValueError when the seal does not match (never unpickled)."""
    tag, data = sealed[:DIGEST], sealed[DIGEST:]
    if not hmac.compare_digest(tag, hmac.new(key, data, hashlib.sha256).digest()):
        raise ValueError("a report job's result does not carry this app's seal")
    context: dict[str, Any] = pickle.loads(data)  # sealed by this app: never foreign bytes
    return context


def sealing_key(secret: str | bytes) -> bytes:
    secret = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(secret, b"workbench report jobs", hashlib.sha256).digest()


def page_job(kind: str, build: PageFunction, *, depends: jobs.Depends | None = None) -> None:
    """Register `kind`: its result is the sealed context `build` returns (`depends`: what it
    is computed from besides the reports' data, `jobs.register`)."""

    def run(
        session: Session, campaign_id: int, params: dict[str, Any], progress: jobs.Progress
    ) -> bytes:
        key = bytes.fromhex(os.environ[KEY_ENV])
        return seal(build(session, campaign_id, params, progress), key)

    jobs.register(kind, run, depends=depends)


def init_app(app: Flask) -> None:
    """The app's worker: it runs each job in a child forked with `workbench.web.job_child`
    imported (`services.forked`; `python -m workbench.web.job_child` is the same child). The
    app's process does not import that module (scipy, matplotlib: only its job children use
    them)."""
    store = app.extensions["workbench_store"]
    key = sealing_key(app.config["SECRET_KEY"])
    package_root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    env = {
        **os.environ,
        ENV_VAR: store.url,
        KEY_ENV: key.hex(),
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, path) if p),
    }
    synchronous = app.extensions[SETTINGS].sqlite_synchronous
    if synchronous:
        env[SQLITE_SYNCHRONOUS_ENV] = synchronous
    querylog_key = app.config.get("QUERYLOG_KEY")  # for the query-log import task
    if querylog_key:
        hex_key = querylog_key.hex() if isinstance(querylog_key, bytes) else str(querylog_key)
        env[querylog.KEY_ENV] = hex_key.strip()
    timeout = float(app.config.get("REPORT_JOB_TIMEOUT_SECONDS", jobs.TIMEOUT_S))
    command = [sys.executable, "-m", JOB_CHILD]
    worker = jobs.Worker(store, command, env, timeout=timeout, forked=f"{JOB_CHILD}:main")
    app.extensions[EXTENSION] = (worker, key)


def request(
    kind: str, campaign_id: int, params: Mapping[str, Any], *, wait: float | None = None
) -> jobs.JobState:
    """The job's state; queues the job when needed and waits at most `wait` seconds
    (default REPORT_JOB_WAIT_SECONDS) for it to end."""
    worker, _key = current_app.extensions[EXTENSION]
    if wait is None:
        wait = float(current_app.config.get("REPORT_JOB_WAIT_SECONDS", WAIT_S))
    return jobs.request_job(get_store(), campaign_id, kind, params, worker=worker, wait=wait)


RESEALED = (
    "The stored result of this report does not carry this server's seal (was the secret key "
    "changed?): it is computed again."
)


def request_page(
    kind: str, campaign_id: int, params: Mapping[str, Any], *, wait: float | None = None
) -> tuple[jobs.JobState, dict[str, Any] | None]:
    """The job's state and, when it has a result (fresh or not: see state.fresh), the page
    context; queues the job when needed and waits at most `wait` seconds (default
    REPORT_JOB_WAIT_SECONDS).

    A stored result whose seal does not match (written under another secret key) is never
    unpickled: it is discarded and computed again, and the page says so (a flashed warning,
    and the job's progress while it runs)."""
    state = request(kind, campaign_id, params, wait=wait)
    if state.result is None:
        return state, None
    key = current_app.extensions[EXTENSION][1]
    try:
        return state, unseal(state.result, key)
    except ValueError:
        current_app.logger.warning(
            "report job %s (%s, campaign %s): the stored result's seal does not match; "
            "recomputing it",
            state.id,
            kind,
            campaign_id,
        )
    jobs.discard_result(get_store(), state.id)
    if not wants_json():
        flash(RESEALED, "warning")
    state = request(kind, campaign_id, params, wait=wait)
    if state.result is None:
        return dataclasses.replace(state, progress=f"{RESEALED} {state.progress}"), None
    return state, unseal(state.result, key)
