"""Merge rules applied to the store, the disagreement queue, and adjudicators' decisions."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.analysis.conftest import ASSESSORS, GRADES
from workbench.services.adjudication import (
    MergeSpec,
    apply_rule,
    disagreement_queue,
    record_decision,
)
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError
from workbench.store.models import FinalLabel, User


def _ids(session) -> list[str]:
    """The judge ids of alice, bob and carol, as FinalLabel.judges keys."""
    users = {u.username: u.id for u in session.scalars(select(User))}
    return [str(users[name]) for name in ASSESSORS]


def _labels(session) -> dict[tuple[str, str], FinalLabel]:
    return {(f.qid, f.docno): f for f in session.scalars(select(FinalLabel))}


def test_majority_labels_clear_cases_and_queues_ties(judged):
    with judged.session() as s:
        summary = apply_rule(s, get_campaign(s, "demo"), MergeSpec("majority"))
        labels = _labels(s)
        alice, bob, carol = _ids(s)
    # the only ties: q2/d6 (2, 0, 1) and q2/d7 (1, 0)
    assert summary.queued == 2
    assert set(labels) == set(GRADES) - {("q2", "d6"), ("q2", "d7")}
    assert labels[("q1", "d1")].grade == 2  # alice's revised 2 counts, not her first 0
    assert labels[("q3", "d2")].grade == 2
    assert labels[("q1", "d1")].judges == {alice: 2, bob: 2, carol: 1}
    assert labels[("q1", "d1")].rule == "majority/tie=adjudicate"
    assert labels[("q1", "d1")].adjudicator_id is None


def test_a_rule_applied_again_updates_removes_and_keeps_labels_in_one_session(judged):
    """A second rule in the same session: the labels it decides are updated in place (the
    same rows), the ones it cannot decide lose their earlier rule-made label, an
    adjudicator's label is kept; objects read before it are seen as they are now."""
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        first = apply_rule(s, campaign, MergeSpec("majority", tie="higher"))
        assert first.queued == 0 and first.labelled == len(GRADES)
        before = _labels(s)
        assert before[("q2", "d6")].grade == 2 and before[("q2", "d7")].grade == 1
        adjudicator = s.scalar(select(User).where(User.username == "alice"))
        record_decision(
            s, campaign, qid="q1", docno="d1", grade=0, reason="read it", adjudicator=adjudicator
        )
        second = apply_rule(s, campaign, MergeSpec("majority", tie="lower"))
        assert (second.labelled, second.kept, second.queued) == (len(GRADES) - 1, 1, 0)
        assert before[("q2", "d6")].grade == 0  # read before, updated in place
        assert before[("q2", "d6")].rule == "majority/tie=lower"
        third = apply_rule(s, campaign, MergeSpec("majority"))
        assert (third.kept, third.queued) == (1, 2)
        after = _labels(s)
    assert set(after) == set(GRADES) - {("q2", "d6"), ("q2", "d7")}
    assert {key: label.id for key, label in after.items()} == {
        key: label.id for key, label in before.items() if key in after
    }
    assert after[("q1", "d1")].grade == 0 and after[("q1", "d1")].rule == "adjudicated"
    assert after[("q3", "d2")].rule == "majority/tie=adjudicate"


@pytest.mark.parametrize(
    ("rule", "tie", "key", "grade"),
    [
        ("majority", "higher", ("q2", "d6"), 2),
        ("majority", "lower", ("q2", "d6"), 0),
        ("mean", "adjudicate", ("q2", "d1"), 2),  # (1 + 2 + 2)/3 = 1.67 -> 2
        ("mean", "adjudicate", ("q2", "d7"), 1),  # 0.5 rounds half up
        ("any", "adjudicate", ("q3", "d9"), 1),
        ("all", "adjudicate", ("q3", "d9"), 0),
    ],
)
def test_rules_on_hand_made_cases(judged, rule, tie, key, grade):
    with judged.session() as s:
        apply_rule(s, get_campaign(s, "demo"), MergeSpec(rule, tie=tie))
        assert _labels(s)[key].grade == grade


def test_primary_rule_takes_the_named_judge_and_queues_what_they_skipped(judged):
    with judged.session() as s:
        summary = apply_rule(s, get_campaign(s, "demo"), MergeSpec("primary", primary="carol"))
        labels = _labels(s)
        carol = _ids(s)[2]
    assert summary.queued == 2  # carol did not judge q1/d4 nor q2/d7
    assert labels[("q3", "d9")].grade == 1
    assert labels[("q3", "d9")].rule == f"primary:{carol}"


def test_queue_lists_disagreements_with_the_rule_proposal(judged):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        queue = disagreement_queue(s, campaign, MergeSpec("majority"))
        binary_queue = disagreement_queue(s, campaign, MergeSpec("any"))
    disagreeing = {k for k, row in GRADES.items() if len({g for g in row if g is not None}) > 1}
    assert {(q.qid, q.docno) for q in queue} == disagreeing
    proposals = {(q.qid, q.docno): q.proposal for q in queue}
    assert proposals[("q2", "d6")] is None
    assert proposals[("q3", "d2")] == 2
    # under a binary rule q1/d1 (2, 2, 1) is agreement: all relevant
    assert ("q1", "d1") not in {(q.qid, q.docno) for q in binary_queue}
    assert all(set(q.grades) <= {"Judge 1", "Judge 2", "Judge 3"} for q in queue)


def test_decision_records_provenance_and_survives_reapplying_a_rule(judged):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        boss = s.scalar(select(User).where(User.username == "boss"))
        apply_rule(s, campaign, MergeSpec("majority"))
        record_decision(
            s, campaign, qid="q2", docno="d6", grade=1, reason="partly on topic", adjudicator=boss
        )
        summary = apply_rule(s, campaign, MergeSpec("majority", tie="lower"))
        label = _labels(s)[("q2", "d6")]
        queue = disagreement_queue(s, campaign, MergeSpec("majority"))
        alice, bob, carol = _ids(s)
    assert (label.grade, label.rule, label.reason) == (1, "adjudicated", "partly on topic")
    assert label.adjudicator_id == boss.id
    assert label.judges == {alice: 2, bob: 0, carol: 1}
    assert summary.kept == 1
    assert ("q2", "d6") not in {(q.qid, q.docno) for q in queue}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"reason": "  "}, "needs a reason"),
        ({"grade": 7}, "not on the scale"),
        ({"docno": "nope"}, "no judgement"),
    ],
)
def test_bad_decisions_are_refused_and_change_nothing(judged, changes, message):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        boss = s.scalar(select(User).where(User.username == "boss"))
        decision = {"qid": "q2", "docno": "d6", "grade": 1, "reason": "ok"} | changes
        with pytest.raises(ServiceError, match=message):
            record_decision(s, campaign, adjudicator=boss, **decision)
        assert _labels(s) == {}


def test_bad_rule_arguments_are_refused(judged):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        with pytest.raises(ServiceError, match="unknown merge rule"):
            apply_rule(s, campaign, MergeSpec("vote"))
        with pytest.raises(ServiceError, match="needs the primary"):
            apply_rule(s, campaign, MergeSpec("primary"))
        with pytest.raises(ServiceError, match="no judgements"):
            apply_rule(s, campaign, MergeSpec("primary", primary="boss"))


def test_a_batch_applies_a_rule_to_chosen_topics_with_one_reason(judged):
    with judged.session() as s:
        campaign = get_campaign(s, "demo")
        summary = apply_rule(s, campaign, MergeSpec("any"), topics=["q2"], reason="lenient on q2")
        labels = _labels(s)
        assert {qid for qid, _ in labels} == {"q2"}
        assert {label.reason for label in labels.values()} == {"lenient on q2"}
        assert summary.message().startswith("any on topic(s) q2: ")
        assert summary.labelled == len([key for key in GRADES if key[0] == "q2"])
        with pytest.raises(ServiceError, match="no judged document in topic"):
            apply_rule(s, campaign, MergeSpec("any"), topics=["q2", "nope"])
        with pytest.raises(ServiceError, match="the reason is limited"):
            apply_rule(s, campaign, MergeSpec("any"), topics=["q2"], reason="x" * 10_001)
