"""Exports: pool lists, qrels from judgements (assessor, final, single-judge, -1), the log."""

from __future__ import annotations

import csv
import io
import json

import pytest

from workbench.services import campaigns, exports, pools, qrels, run_imports, topic_imports
from workbench.services.errors import NotFound, ServiceError
from workbench.store.models import FinalLabel, Judgement, User


@pytest.fixture
def campaign_id(store, files) -> int:
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        topic_imports.import_topics(session, campaign, files["topics"])
        run_imports.import_runs(session, campaign, [files["A"], files["B"], files["C"]])
        pools.build_pool(session, campaign, depth=1, seed=0)  # 1: a1 c1 d1; 2: x1 x2
        for name in ("ann", "bob"):
            session.add(User(username=name, password_hash="x"))
        return campaign.id


def judge(session, campaign_id, username, qid, docno, grade, **fields) -> None:
    user = session.query(User).filter_by(username=username).one()
    session.add(
        Judgement(
            campaign_id=campaign_id, qid=qid, docno=docno, user_id=user.id, grade=grade, **fields
        )
    )
    session.flush()


def qrels_text(session, campaign_id, **options) -> str:
    out = io.StringIO()
    exports.export_qrels(session, campaigns.get_campaign(session, campaign_id), out, **options)
    return out.getvalue()


def test_export_pool_lists_documents_per_topic(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        out = io.StringIO()
        count = exports.export_pool(session, pools.latest_pool(session, campaign), out)
    assert count == 5
    assert out.getvalue() == "1 a1\n1 c1\n1 d1\n2 x1\n2 x2\n"


def test_qrels_of_single_judges_skip_cannot_judge_and_keep_latest(store, campaign_id):
    with store.session() as session:
        judge(session, campaign_id, "ann", "1", "d1", 1)
        judge(session, campaign_id, "ann", "1", "d1", 2, time_spent_ms=900)  # revised
        judge(session, campaign_id, "bob", "1", "a1", 0)
        judge(session, campaign_id, "bob", "2", "x2", None, cannot_judge="broken page")
        with pytest.raises(qrels.IncompleteQrels, match="3 of the 5 pooled or judged") as e:
            qrels_text(session, campaign_id)
        assert e.value.completeness.missing == (("1", "c1"), ("2", "x1"), ("2", "x2"))
        # plain qrels: what is missing is said beside the file (the export's warnings)
        assert qrels_text(session, campaign_id, allow_incomplete=True) == "1 0 a1 0\n1 0 d1 2\n"
        campaign = campaigns.get_campaign(session, campaign_id)
        written = exports.EXPORTS["qrels"].write(
            session, campaign, io.StringIO(), {"assessor": None, "final": False,
                                               "binary_level": None, "allow_incomplete": True}
        )  # fmt: skip
        assert written.filename.endswith(".graded.incomplete.qrels")
        assert written.warnings[0].startswith(
            "INCOMPLETE qrels: 3 of the 5 pooled or judged documents lack a label (e.g. topic 1 "
            "document c1)"
        )
        assert qrels_text(session, campaign_id, assessor="ann") == "1 0 d1 2\n"
        assert qrels_text(session, campaign_id, binary_level=2, allow_incomplete=True) == (
            "1 0 a1 0\n1 0 d1 1\n"
        )
        with pytest.raises(NotFound, match="no assessor"):
            qrels_text(session, campaign_id, assessor="carl")


def test_two_judges_need_adjudication_or_an_assessor(store, campaign_id):
    with store.session() as session:
        judge(session, campaign_id, "ann", "1", "d1", 1)
        judge(session, campaign_id, "bob", "1", "d1", 0)
        with pytest.raises(ServiceError, match="adjudicate"):
            qrels_text(session, campaign_id)
        assert qrels_text(session, campaign_id, assessor="bob") == "1 0 d1 0\n"
        session.add(
            FinalLabel(campaign_id=campaign_id, qid="1", docno="d1", grade=1, rule="manual")
        )
        session.flush()
        with pytest.raises(ServiceError, match="4 of the 5 pooled or judged documents lack a fi"):
            qrels_text(session, campaign_id, final=True)
        partial = qrels_text(session, campaign_id, allow_incomplete=True)
        assert partial == "1 0 d1 1\n"
        assert qrels_text(session, campaign_id, final=True, allow_incomplete=True) == partial
        with pytest.raises(ServiceError, match="not both"):
            qrels_text(session, campaign_id, final=True, assessor="ann")


def test_stratified_pools_export_unsampled_documents_as_minus_one(store, campaign_id):
    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        pool = pools.build_pool(
            session, campaign, strategy="stratified", strata="1:1.0,5:0.2", runs=["A"], seed=4
        )
        entries = pools.pool_documents(session, pool, "1")
        # topic 1: a1 in stratum 1 (sampled); a2 a3 d1 d2 in stratum 2: ceil(0.8) = 1 sampled.
        # d1 is also in the depth-1 pool of the fixture (sampled there), so never -1.
        unsampled = sorted(e.docno for e in entries if not e.sampled and e.docno != "d1")
        judge(session, campaign_id, "ann", "1", "a1", 1)
        lines = qrels_text(session, campaign_id, allow_incomplete=True).splitlines()
    assert "1 0 a1 1" in lines
    assert sorted(line.split()[2] for line in lines if line.endswith(" -1")) == unsampled
    assert len(unsampled) >= 2


def test_judgement_log_csv_and_json(store, campaign_id):
    with store.session() as session:
        judge(session, campaign_id, "ann", "1", "d1", 1, position=3, comment="hmm")
        judge(session, campaign_id, "bob", "1", "d1", 0)
        judge(session, campaign_id, "ann", "1", "d1", 2, time_spent_ms=1200)
        campaign = campaigns.get_campaign(session, campaign_id)
        text, data = io.StringIO(), io.StringIO()
        assert exports.export_judgement_log(session, campaign, text) == 3
        exports.export_judgement_log(session, campaign, data, fmt="json")
        with pytest.raises(ServiceError, match="csv or json"):
            exports.export_judgement_log(session, campaign, io.StringIO(), fmt="xml")
    rows = list(csv.DictReader(io.StringIO(text.getvalue())))
    assert [(r["assessor"], r["grade"], r["revision"]) for r in rows] == [
        ("ann", "1", "1"),
        ("bob", "0", "1"),
        ("ann", "2", "2"),
    ]
    assert rows[0]["position"] == "3" and rows[0]["comment"] == "hmm"
    records = json.loads(data.getvalue())
    assert records[2]["time_spent_ms"] == 1200 and records[2]["revision"] == 2
    assert set(records[0]) == set(exports.LOG_FIELDS)


def test_qrels_of_an_unfinished_assessor_are_refused_unless_asked(store, campaign_id):
    from workbench.services import assignments

    with store.session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        ann = session.query(User).filter_by(username="ann").one()
        assignments.assign(session, pools.latest_pool(session, campaign), "1", ann)
        judge(session, campaign_id, "ann", "1", "d1", 2)
        judge(session, campaign_id, "ann", "1", "c1", None, cannot_judge="blank page")
        with pytest.raises(qrels.IncompleteQrels, match="2 of the 3 pooled or judged docu"):
            qrels_text(session, campaign_id, assessor="ann")
        text = qrels_text(session, campaign_id, assessor="ann", allow_incomplete=True)
        assert text.splitlines() == ["1 0 d1 2"]
        completeness = qrels.qrels_completeness(session, campaign, assessor="ann")
        assert completeness.describe() == (
            "2 of the 3 pooled or judged documents lack a grade by ann (e.g. topic 1 document a1)"
        )
        judge(session, campaign_id, "ann", "1", "a1", 0)
        judge(session, campaign_id, "ann", "1", "c1", 1)
        assert qrels_text(session, campaign_id, assessor="ann") == "1 0 a1 0\n1 0 c1 1\n1 0 d1 2\n"
