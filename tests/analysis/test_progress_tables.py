"""Per-topic tables list numeric topic ids numerically (1, 2, 10), as the pools, qrels and
reports do (`pools.qid_key`), not as strings (1, 10, 2)."""

from __future__ import annotations

from sqlalchemy import select

from tests.analysis.conftest import build_campaign
from workbench.services import pools, progress, run_imports
from workbench.services.agreement import agreement_report
from workbench.services.assignments import assign
from workbench.store.models import Topic, User

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
