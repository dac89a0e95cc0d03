"""Machine-judge pages: admin only, judges and templates, a judging job from the web (inline
and in its own process) with its progress page, the hybrid forms, the report, escaping."""

from __future__ import annotations

import html
import json
import time

import pytest

from workbench.llm_test_server import Behaviour, StubServer
from workbench.services import campaigns, machine_jobs, machine_judges
from workbench.store.models import Judgement, PoolEntry

from .conftest import get_store_of

pytestmark = pytest.mark.slow


@pytest.fixture
def stub():
    with StubServer(Behaviour("obey")) as server:
        yield server


def judge_everything(app, world):
    """alice grades every pooled document: 2 for D1-D3, else 0."""
    from sqlalchemy import select

    with get_store_of(app).session() as session:
        for qid, docno in session.execute(select(PoolEntry.qid, PoolEntry.docno)):
            grade = 2 if docno in ("D1", "D2", "D3") else 0
            session.add(
                Judgement(
                    campaign_id=world.campaign_id,
                    qid=qid,
                    docno=docno,
                    user_id=world.users["alice"],
                    grade=grade,
                )
            )


def add_judge(admin, world, stub, **fields):
    data = {"model": "stub", "base_url": stub.url, "backoff_s": "0.01", **fields}
    return admin.post(f"/machine/{world.campaign_id}/judges", data=data)


def test_only_admins_reach_the_machine_pages(as_user, world):
    for path in ("", "/report", "/jobs/1", "/jobs/1.json"):
        assert as_user("alice").get(f"/machine/{world.campaign_id}{path}").status_code == 403
        assert as_user(None).get(f"/machine/{world.campaign_id}{path}").status_code == 302
    for path in ("/judges", "/template", "/jobs", "/sample", "/review", "/qrels"):
        assert as_user("alice").post(f"/machine/{world.campaign_id}{path}").status_code == 403


def test_a_judge_and_a_template_from_the_web(app, as_user, world, stub):
    admin = as_user("admin")
    page = admin.get(f"/machine/{world.campaign_id}")
    assert page.status_code == 200 and "No machine judge yet" in page.text
    assert "{{document}}" in html.unescape(page.text)  # the default template is shown
    bad = admin.post(
        f"/machine/{world.campaign_id}/template",
        data={"template": "{{title}}"},
        follow_redirects=True,
    )
    assert "the template must place the document" in html.unescape(bad.text)
    good = '[user]\nTopic: {{title}}\n{{document}}\nAnswer {"grade": N}.'
    saved = admin.post(
        f"/machine/{world.campaign_id}/template", data={"template": good}, follow_redirects=True
    )
    assert "Template saved" in saved.text
    added = add_judge(
        admin, world, stub, name="machine:<b>x</b>", api_key="sk-hidden-9", temperature="0.3"
    )
    assert added.status_code == 303
    page = admin.get(f"/machine/{world.campaign_id}").text
    assert "machine:&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert "stored in the campaign" in page and "sk-hidden-9" not in page
    with get_store_of(app).read_session() as session:
        campaign = campaigns.get_campaign(session, world.campaign_id)
        judge = machine_judges.get_judge(session, campaign, "machine:<b>x</b>")
        assert judge.template == good and judge.params["temperature"] == 0.3
    refused = add_judge(admin, world, stub, name="machine:<b>x</b>")
    assert refused.status_code == 303
    assert "already has a judge" in html.unescape(admin.get(f"/machine/{world.campaign_id}").text)
    bad_setting = add_judge(admin, world, stub, name="machine:y", temperature="hot")
    assert bad_setting.status_code == 303
    assert "temperature: expected a number" in admin.get(f"/machine/{world.campaign_id}").text


def test_a_job_started_on_the_web_runs_in_its_own_process(app, as_user, world, stub):
    admin = as_user("admin")
    add_judge(admin, world, stub)
    started = admin.post(
        f"/machine/{world.campaign_id}/jobs", data={"judge": "machine:stub", "concurrency": "2"}
    )
    assert started.status_code == 303 and "/jobs/1" in started.location
    page = admin.get(started.location)
    assert page.status_code == 200 and 'id="job-progress"' in page.text
    assert "machine.js" in page.text
    deadline = time.monotonic() + 60
    while True:
        state = admin.get(f"/machine/{world.campaign_id}/jobs/1.json").get_json()
        if state["status"] not in ("queued", "running") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert state["status"] == "done" and state["done"] == state["total"] == 12
    assert state["calls"] == stub.record.graded and state["percent"] == 100.0


def test_stop_resume_and_the_report(app, as_user, world, stub):
    app.config["MACHINE_JOB_RUNNER"] = lambda store, job_id: machine_jobs.run_job(store, job_id)
    admin = as_user("admin")
    add_judge(admin, world, stub)
    started = admin.post(
        f"/machine/{world.campaign_id}/jobs", data={"judge": "machine:stub", "budget_calls": "5"}
    )
    state = admin.get(f"/machine/{world.campaign_id}/jobs/1.json").get_json()
    assert state["status"] == "budget" and state["calls"] == 5 and started.status_code == 303
    stopped = admin.post(f"/machine/{world.campaign_id}/jobs/1/stop", follow_redirects=True)
    assert stopped.status_code == 200
    with get_store_of(app).session() as session:  # raise the budget, then resume on the web
        from sqlalchemy import update

        from workbench.store.models import MachineJob

        session.execute(update(MachineJob).values(budget_calls=None))
    admin.post(f"/machine/{world.campaign_id}/jobs/1/resume")
    state = admin.get(f"/machine/{world.campaign_id}/jobs/1.json").get_json()
    assert state["status"] == "done" and state["done"] == 12
    again = admin.post(f"/machine/{world.campaign_id}/jobs/1/resume", follow_redirects=True)
    assert "nothing to resume" in again.text
    # no human label yet: the report says so
    refused = admin.get(f"/machine/{world.campaign_id}/report")
    assert refused.status_code == 200 and "no human label yet" in refused.text
    judge_everything(app, world)
    app.config["MACHINE_REPORT_RESAMPLES"] = 50
    report = admin.get(f"/machine/{world.campaign_id}/report?top_k=2")
    assert report.status_code == 200, report.text
    assert "Confusion matrix" in report.text and "Kendall" in report.text
    assert "What the machine judges cost" in report.text
    bad = admin.get(f"/machine/{world.campaign_id}/report?top_k=x")
    assert bad.status_code == 400


def test_hybrid_forms(app, as_user, world, stub):
    app.config["MACHINE_JOB_RUNNER"] = lambda store, job_id: machine_jobs.run_job(store, job_id)
    admin = as_user("admin")
    add_judge(admin, world, stub)
    admin.post(f"/machine/{world.campaign_id}/jobs", data={"judge": "machine:stub"})
    made = admin.post(
        f"/machine/{world.campaign_id}/sample",
        data={"judge": "machine:stub", "design": "uniform", "share": "0.5"},
        follow_redirects=True,
    )
    assert "Pool 2 holds the human sample" in made.text
    bad = admin.post(
        f"/machine/{world.campaign_id}/sample",
        data={"judge": "machine:stub", "design": "uncertain", "share": "2"},
        follow_redirects=True,
    )
    assert "share: expected a number in (0, 1]" in bad.text
    review = admin.post(
        f"/machine/{world.campaign_id}/review",
        data={"judge": "machine:stub"},
        follow_redirects=True,
    )
    assert "agree everywhere" in review.text  # no human judgement yet: nothing to review
    saved = admin.post(
        f"/machine/{world.campaign_id}/qrels",
        data={"judge": "machine:stub", "combination": "machine", "name": "m1"},
        follow_redirects=True,
    )
    assert "Qrels set &#39;m1&#39; saved" in saved.text or "Qrels set 'm1' saved" in saved.text
    download = admin.get(
        f"/admin/campaigns/{world.campaign_id}/download/machine-qrels"
        "?judge=machine:stub&combination=machine"
    )
    assert download.status_code == 200
    lines = download.data.decode().splitlines()  # plain TREC qrels: the sources are in messages
    assert len(lines) == 12 and all(len(line.split()) == 4 for line in lines)
    assert lines[0] == "T1 0 D1 2" and lines[-1] == "T2 0 D8 0"
    log = admin.get(f"/admin/campaigns/{world.campaign_id}/download/log?format=json")
    rows = json.loads(log.data)
    assert {r["source"] for r in rows} == {"machine"} and len(rows) == 12


def test_assessors_never_see_machine_labels(app, as_user, world, stub):
    app.config["MACHINE_JOB_RUNNER"] = lambda store, job_id: machine_jobs.run_job(store, job_id)
    admin = as_user("admin")
    add_judge(admin, world, stub, name="machine:visible-marker")
    admin.post(f"/machine/{world.campaign_id}/jobs", data={"judge": "machine:visible-marker"})
    alice = as_user("alice")
    assignment = world.assignment["alice", "T1"]
    for path in ("/", "/assess", f"/assess/{assignment}", f"/api/v1/assignments/{assignment}"):
        response = alice.get(path, follow_redirects=True)
        assert "visible-marker" not in response.text and "machine:" not in response.text
