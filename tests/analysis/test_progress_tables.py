"""The progress and agreement tables: numeric topic ids in numeric order (1, 2, 10), as the
pools, qrels and reports list them (`pools.qid_key`), not as strings (1, 10, 2); a judge's
topic counted once over the pools in scope."""

from __future__ import annotations

from sqlalchemy import select

from tests.analysis.conftest import build_campaign
from workbench.services import pools, progress, run_imports
from workbench.services.agreement import agreement_report
from workbench.services.assignments import assign
from workbench.store.models import Judgement, Topic, User

QIDS = ("10", "2", "1")


def test_progress_and_agreement_list_topics_in_numeric_order(store, tmp_path) -> None:
    grades = {(qid, docno): (1, 0, None) for qid in QIDS for docno in ("d1", "d2")}
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 d{r} {r} {3 - r} r\n" for q in QIDS for r in (1, 2)))
    with store.session() as s:
        campaign = build_campaign(s, grades)
        s.add_all([Topic(campaign_id=campaign.id, qid=qid) for qid in QIDS])
        s.flush()
        run_imports.import_runs(s, campaign, [run])
        pool = pools.build_pool(s, campaign, strategy="depth", depth=2, seed=1)
        alice = s.scalars(select(User).where(User.username == "alice")).one()
        for qid in QIDS:
            assign(s, pool, qid, alice)
        report = progress.campaign_progress(s, campaign.id)
        agreement = agreement_report(s, campaign, n_bootstrap=0)
    assert [topic["qid"] for topic in report["topics"]] == ["1", "2", "10"]
    # q1: build_campaign's first judgement of alice; other ids after the numeric ones
    assert [topic.name for topic in agreement.per_topic] == ["1", "2", "10", "q1"]


def test_a_judges_topic_in_two_pools_counts_each_document_once(store, tmp_path) -> None:
    """alice is assigned topic 1 in a depth-2 pool and a depth-3 pool (both in scope: they
    have assignments): its 3 distinct documents are 3 to judge, not 2 + 3, she is named once,
    and judging the 3 makes every figure 100 %."""
    run = tmp_path / "run.txt"
    run.write_text("".join(f"1 Q0 d{r} {r} {4 - r} r\n" for r in (1, 2, 3)))
    with store.session() as s:
        campaign = build_campaign(s, {})
        s.add(Topic(campaign_id=campaign.id, qid="1"))
        s.flush()
        run_imports.import_runs(s, campaign, [run])
        alice = s.scalars(select(User).where(User.username == "alice")).one()
        for depth in (2, 3):
            pool = pools.build_pool(s, campaign, strategy="depth", depth=depth, seed=1)
            assign(s, pool, "1", alice)
        s.add(Judgement(campaign_id=campaign.id, qid="1", docno="d1", user_id=alice.id, grade=1))
        s.flush()
        before = progress.campaign_progress(s, campaign.id)
        s.add_all([Judgement(campaign_id=campaign.id, qid="1", docno=d, user_id=alice.id,
                             grade=0) for d in ("d2", "d3")])  # fmt: skip
        s.flush()
        after = progress.campaign_progress(s, campaign.id)
    [topic] = before["topics"]
    assert topic["assessors"] == ["alice"]
    assert (topic["progress"].judged, topic["progress"].total) == (1, 3)
    assert (before["overall"].judged, before["overall"].total) == (1, 3)
    [alice_row] = [row for row in before["assessors"] if row["username"] == "alice"]
    assert (alice_row["progress"].judged, alice_row["progress"].total) == (1, 3)
    assert after["overall"].percent == after["topics"][0]["progress"].percent == 100.0
