"""A machine job is never run by two processes at once (README, Machine judges): a resume that
starts while another process is claiming the job waits for that claim and is refused, on
SQLite (whose writers take the lock first) and on PostgreSQL (where the claim reads the job's
row for update)."""

from __future__ import annotations

import threading
import time

import pytest
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.services import machine_jobs, machine_judges
from workbench.services.errors import Conflict
from workbench.store.models import Campaign, MachineJob, utcnow


def test_two_claims_of_a_job_at_once_let_one_run(app: Flask, world: World) -> None:
    store = get_store_of(app)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.add_judge(s, c, model="m", base_url="http://127.0.0.1:9/v1")
        job = MachineJob(campaign_id=c.id, judge_id=judge.id, status=machine_jobs.STOPPED,
                         scope={"pool": world.pool_id, "pool_number": 1, "topics": None,
                                "only_unjudged": False}, total=6)  # fmt: skip
        s.add(job)
        s.flush()
        job_id = job.id
    outcome: list[BaseException | None] = []

    def second_claim() -> None:
        try:
            machine_jobs._claim(store, job_id, machine_jobs.STALE_S, {})
            outcome.append(None)
        except BaseException as error:  # the test reads it
            outcome.append(error)

    with store.session() as s:  # the first process's claim, not committed yet
        first = s.get(MachineJob, job_id, with_for_update=True)
        assert first is not None
        first.status, first.heartbeat_at = machine_jobs.RUNNING, utcnow()
        s.flush()
        other = threading.Thread(target=second_claim)
        other.start()
        time.sleep(0.5)
    other.join(timeout=30)
    assert len(outcome) == 1
    if outcome[0] is None:
        pytest.fail("the second claim ran the job too")
    assert isinstance(outcome[0], Conflict), outcome[0]
