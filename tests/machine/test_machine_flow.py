"""A campaign judged by a machine through the CLI against the local test server, end to end:
labels with provenance, the judgement log and exports, the hybrid designs, the report."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from tests.machine.conftest import judge_as_humans
from workbench.store.models import Judgement, MachineJudgement

pytestmark = pytest.mark.slow


def add_and_run(cli, stub, *extra):
    added = cli(
        "machine",
        "add",
        "--campaign",
        "mc",
        "--model",
        "stub",
        "--base-url",
        stub.url,
        "--backoff-s",
        "0.01",
        "--price-input",
        "2",
        "--price-output",
        "4",
        *extra,
    )
    assert added.exit_code == 0, added.output
    ran = cli("machine", "run", "--campaign", "mc", "--judge", "machine:stub", "--quiet")
    assert ran.exit_code == 0, ran.output
    return ran


def test_a_machine_judges_a_pool_with_provenance(cli, stub, machine_campaign, store):
    truth = machine_campaign
    ran = add_and_run(cli, stub)
    n = len(truth)
    assert f"done, {n} of {n} judged" in ran.output
    # 4 duplicates are answered once; one malformed answer
    assert "(4 from the cache, 1 cannot judge)" in ran.output
    assert stub.record.graded == n - 4
    with store.read_session() as session:
        rows = {(r.qid, r.docno): r for r in session.scalars(select(MachineJudgement))}
        assert session.scalar(select(Judgement.id)) is None  # no human judgement was written
    assert rows[("1", "D1-00")].grade == 2 and rows[("1", "D1-07")].grade == 0
    assert rows[("1", "D1-05")].grade == 1  # one title word of three: the server over-rates
    bad = rows[("1", "D1-bad")]
    assert bad.grade is None and bad.cannot_judge.startswith("malformed answer")
    dup = rows[("1", "D1-dup")]
    assert dup.cached and dup.grade == 2 and dup.prompt_tokens == 0 and dup.cost == 0
    first = rows[("1", "D1-00")]
    assert first.raw_answer.startswith('{"grade": 2') and "3 of 3" in first.reason
    assert first.prompt_tokens > 100 and first.completion_tokens > 0 and first.latency_ms > 0
    price = first.prompt_tokens * 2 + first.completion_tokens * 4
    assert first.cost == pytest.approx(price / 1e6)
    assert first.certainty == pytest.approx(first.probabilities["2"]) and first.certainty > 0.5
    assert rows[("1", "D1-inj")].flags == ["instructions"]
    assert rows[("1", "D1-stuff")].flags == ["stuffing"]
    assert "markers-neutralised" in rows[("1", "D1-forge")].flags
    # the naive server obeys the injected instruction; the forged marker was neutralised
    assert rows[("1", "D1-inj")].grade == 2
    # the exports: machine qrels, labels with provenance, the judgement log (marked)
    qrels = cli(
        "export",
        "machine-qrels",
        "--campaign",
        "mc",
        "--judge",
        "machine:stub",
        "--combination",
        "machine",
        "--allow-incomplete",
        "-o",
        "-",
    )
    assert qrels.exit_code == 0
    # plain TREC qrels: what they hold and that they are incomplete go to standard error
    assert "#" not in qrels.stdout and "1 D1-00 2" not in qrels.stdout
    assert "machine qrels: 64 label(s) by machine:stub" in qrels.stderr
    assert "incomplete qrels" in qrels.stderr
    assert "1 0 D1-00 2\n" in qrels.stdout and " D1-bad " not in qrels.stdout
    refused = cli(
        "export",
        "machine-qrels",
        "--campaign",
        "mc",
        "--judge",
        "machine:stub",
        "--combination",
        "machine",
        "-o",
        "-",
    )
    assert refused.exit_code == 1 and "1 of the 65 pooled or judged documents" in refused.output
    labels = json.loads(
        cli(
            "export", "machine-labels", "--campaign", "mc", "--format", "json", "-o", "-"
        ).stdout.split("\n65 label")[0]
    )
    assert len(labels) == 65 and {"raw_answer", "template_hash", "cost"} <= set(labels[0])
    assert json.loads(labels[0]["parameters"])["temperature"] == 0.0
    log = cli("export", "log", "--campaign", "mc", "--format", "csv", "-o", "-").stdout
    lines = log.splitlines()
    assert lines[0].endswith(",source") and len(lines) == 1 + 65
    assert all(line.endswith(",machine") for line in lines[1:66])
    assert all(",machine:stub," in line for line in lines[1:66])


def test_the_progress_bar(cli, stub, machine_campaign):
    cli("machine", "add", "--campaign", "mc", "--model", "stub", "--base-url", stub.url)
    ran = cli("machine", "run", "--campaign", "mc", "--judge", "machine:stub", "--topics", "1,2")
    assert ran.exit_code == 0 and "job 1: done, 33 of 33 judged" in ran.stdout
    assert "machine:stub job 1" in ran.stderr  # the bar's label (drawn in full on a terminal)
    again = cli("machine", "run", "--job", "1")
    assert again.exit_code == 0 and "job 1: done, 33 of 33 judged" in again.stdout
    busy = cli("machine", "run", "--campaign", "mc", "--judge", "machine:nobody")
    assert busy.exit_code == 1 and "no machine judge 'machine:nobody'" in busy.output


def test_the_key_is_never_shown_or_exported(cli, stub, machine_campaign):
    stub.behaviour.api_key = "sk-secret-123"
    added = cli(
        "machine",
        "add",
        "--campaign",
        "mc",
        "--model",
        "stub",
        "--base-url",
        stub.url,
        "--api-key-stdin",
        input="sk-secret-123\n",
    )
    assert added.exit_code == 0
    ran = cli("machine", "run", "--campaign", "mc", "--judge", "machine:stub", "--quiet")
    assert ran.exit_code == 0 and "done" in ran.output
    outputs = [
        cli("machine", "judges", "--campaign", "mc", "--format", "json").output,
        cli("export", "machine-labels", "--campaign", "mc", "-o", "-").output,
        cli("export", "log", "--campaign", "mc", "--format", "json", "-o", "-").output,
        cli("machine", "jobs", "--campaign", "mc", "--format", "json").output,
    ]
    assert "stored in the campaign" in outputs[0]
    assert not any("sk-secret" in text for text in outputs)


def test_a_wrong_key_fails_the_job_at_once(cli, stub, machine_campaign):
    stub.behaviour.api_key = "right"
    cli("machine", "add", "--campaign", "mc", "--model", "stub", "--base-url", stub.url)
    ran = cli("machine", "run", "--campaign", "mc", "--judge", "machine:stub", "--quiet")
    assert ran.exit_code == 1 and "failed" in ran.output and "HTTP 401" in ran.output
    assert stub.record.requests <= 4  # the questions in flight, no more


def test_hybrid_designs_end_to_end(cli, stub, machine_campaign, store):
    truth = machine_campaign
    add_and_run(cli, stub)
    sampled = cli(
        "machine",
        "sample",
        "--campaign",
        "mc",
        "--judge",
        "machine:stub",
        "--design",
        "stratified",
        "--share",
        "0.25",
        "--seed",
        "3",
    )
    assert sampled.exit_code == 0, sampled.output
    assert sampled.output.startswith("pool 2: ")
    stats = cli("pool", "stats", "--campaign", "mc", "--pool", "2", "--format", "json")
    assert (
        "human sample of pool 1 for machine:stub (stratified, share 0.25, seed 3)"
        in (json.loads(stats.stdout)["parameters"])
    )
    extended = cli("pool", "extend", "--campaign", "mc", "--pool", "2", "--runs", "run0")
    assert extended.exit_code == 1 and "extend its source pool" in extended.output
    # humans judge the sample (the truth), then the machine-first hybrid and the estimate
    from workbench.services.campaigns import get_campaign
    from workbench.services.pools import get_pool
    from workbench.store.models import PoolEntry

    with store.read_session() as session:
        pool = get_pool(session, get_campaign(session, "mc"), 2)
        entries = list(session.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id)))
    chosen = [(e.qid, e.docno) for e in entries if e.sampled]
    assert len(entries) == len(truth)
    # the flagged and the unlabelled documents are always in the sample
    for key in [("1", "D1-inj"), ("2", "D2-stuff"), ("1", "D1-bad")]:
        assert key in chosen
    judge_as_humans(store, truth, chosen)
    report = cli("machine", "report", "--campaign", "mc", "--resamples", "50", "--format", "json")
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    judge = data["judges"][0]
    assert judge["agreement"]["n"] == len(chosen) - 1  # the malformed one has no machine label
    assert [r["qrels"] for r in judge["rankings"]] == ["machine", "hybrid"]
    (check,) = judge["samples"]
    assert check["design"] == "stratified" and check["unjudged"] == 0
    estimate = check["estimate"]
    assert estimate["pooled"] + estimate["uncovered"] == len(truth)
    assert 0 < estimate["error_rate"] < 0.5 and estimate["low"] <= estimate["error_rate"]
    text = cli("machine", "report", "--campaign", "mc", "--resamples", "50").stdout
    assert "Kendall's tau" in text and "Confusion matrix" in text and "Machine error" in text
    saved = cli(
        "machine",
        "save-qrels",
        "--campaign",
        "mc",
        "--judge",
        "machine:stub",
        "--name",
        "hybrid-stub",
    )
    assert saved.exit_code == 0 and f"{len(truth)} labels" in saved.output
    evaluated = cli("evaluate", "--campaign", "mc", "--qrels", "hybrid-stub", "-m", "map")
    assert evaluated.exit_code == 0 and "run0" in evaluated.output
    # the report says what the saved set holds, as the export does
    machines = len(truth) - len(chosen)
    assert (
        f"The qrels set 'hybrid-stub' was made from hybrid qrels: {machines} label(s) by "
        f"machine:stub and {len(chosen)} human label(s)"
    ) in " ".join(evaluated.output.split())
    # humans first, machine fills the holes: the hybrid prefers the human labels
    exported = cli(
        "export",
        "machine-qrels",
        "--campaign",
        "mc",
        "--judge",
        "machine:stub",
        "--allow-incomplete",
        "-o",
        "-",
    )
    hybrid = exported.stdout
    assert "#" not in hybrid
    assert "hybrid qrels:" in exported.stderr
    assert f"and {len(chosen)} human label(s)" in exported.stderr
    assert "1 0 D1-inj 0\n" in hybrid  # the human's 0, not the injected 2


def test_disagreement_review(cli, stub, machine_campaign, store):
    truth = machine_campaign
    add_and_run(cli, stub)
    judge_as_humans(store, truth)
    reviewed = cli("machine", "review", "--campaign", "mc", "--judge", "machine:stub")
    assert reviewed.exit_code == 0, reviewed.output
    # one-title-word documents (2 a topic), injected, stuffed and forged ones disagree
    with store.read_session() as session:
        from workbench.services.campaigns import get_campaign
        from workbench.services.machine_hybrid import first_human_labels

        first = first_human_labels(session, get_campaign(session, "mc"))
    assert first[("1", "D1-00")] == (2, "alice")
    machine = {}
    with store.read_session() as session:
        for r in session.scalars(select(MachineJudgement)):
            if r.grade is not None:
                machine[(r.qid, r.docno)] = r.grade
    expected = sorted(k for k in machine if (machine[k] >= 1) != (truth[k] >= 1))
    assert f"pool 2: {len(expected)} document(s) to review" in reviewed.output
    assert ("1", "D1-05") in expected and ("1", "D1-inj") in expected
