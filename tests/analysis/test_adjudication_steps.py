"""A merge rule applied in steps (`adjudication_steps`): the same labels as the one-transaction
rule over campaigns of many shapes, one counted write transaction per batch, and what a
batch does when judgements or decisions arrive between the read and its write."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, select

from tests.analysis.conftest import GRADES, build_campaign
from workbench.services import adjudication_steps, changes
from workbench.services.adjudication import MergeSpec, apply_rule, record_decision
from workbench.services.adjudication_queue import queue_figures
from workbench.services.adjudication_steps import apply_rule_in_steps
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError
from workbench.services.qrels import qrels_labels
from workbench.store import Store
from workbench.store.models import Campaign, FinalLabel, Grade, Judgement, User

RULES = [
    MergeSpec("majority"),
    MergeSpec("majority", tie="higher"),
    MergeSpec("majority", tie="lower"),
    MergeSpec("mean"),
    MergeSpec("any"),
    MergeSpec("all"),
    MergeSpec("primary", primary="j0"),
]
JUDGES = 3


def _labels(store: Store, campaign_id: int) -> dict[tuple[str, str], tuple]:
    """Every final label of the campaign as it is compared: all but its row id and time."""
    with store.read_session() as s:
        rows = s.scalars(select(FinalLabel).where(FinalLabel.campaign_id == campaign_id))
        return {
            (f.qid, f.docno): (f.grade, f.rule, f.judges, f.adjudicator_id, f.reason) for f in rows
        }


# a campaign's shape: per topic, per document, each judge's grade (None: not judged)
document = st.tuples(*[st.one_of(st.none(), st.integers(0, 2))] * JUDGES)
shape = st.lists(st.lists(document, min_size=1, max_size=6), min_size=1, max_size=5)


def _build(store: Store, name: str, topics: list[list[tuple]], labelled: set, decided: set) -> int:
    """A campaign of that shape judged by j0..j2 (made once per store); earlier rule-made
    labels (grade 0) on the `labelled` documents and an adjudicator's (grade 2) on `decided`."""
    with store.session() as s:
        judges = {u.username: u.id for u in s.scalars(select(User))}
        for k in range(JUDGES):
            if f"j{k}" not in judges:
                user = User(username=f"j{k}", password_hash="x")
                s.add(user)
                s.flush()
                judges[user.username] = user.id
        campaign = Campaign(name=name, relevance_level=1)
        campaign.grades = [Grade(value=v, label=str(v), key=str(v)) for v in (0, 1, 2)]
        s.add(campaign)
        s.flush()
        for t, documents in enumerate(topics):
            for d, grades in enumerate(documents):
                for k, grade in enumerate(grades):
                    if grade is not None:
                        s.add(
                            Judgement(
                                campaign_id=campaign.id,
                                qid=f"q{t}",
                                docno=f"d{d}",
                                user_id=judges[f"j{k}"],
                                grade=grade,
                            )
                        )
                key = (t, d)
                if key in labelled or key in decided:
                    s.add(
                        FinalLabel(
                            campaign_id=campaign.id,
                            qid=f"q{t}",
                            docno=f"d{d}",
                            grade=2 if key in decided else 0,
                            rule="adjudicated" if key in decided else "mean",
                            adjudicator_id=judges["j1"] if key in decided else None,
                            reason="read it" if key in decided else "",
                        )
                    )
        return campaign.id


_names = itertools.count()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    topics=shape,
    rule=st.sampled_from(RULES),
    batch=st.integers(1, 8),
    marked=st.sets(st.tuples(st.integers(0, 4), st.integers(0, 5)), max_size=6),
    chosen=st.one_of(st.none(), st.sets(st.integers(0, 4), min_size=1, max_size=2)),
)
def test_the_labels_equal_the_one_transaction_rules(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    topics: list[list[tuple]],
    rule: MergeSpec,
    batch: int,
    marked: set[tuple[int, int]],
    chosen: set[int] | None,
) -> None:
    """Over campaigns of many shapes (topics, documents, missing grades, earlier rule-made and
    adjudicated labels, some on documents nobody grades, a batch of topics), with batches of
    1-8 documents: the stepped rule sets the labels the one-transaction rule sets, says the
    same, and counts one change per write transaction."""
    monkeypatch.setattr(adjudication_steps, "BATCH_DOCUMENTS", batch)
    labelled = {key for key in marked if key[0] % 2 == 0}
    decided = marked - labelled
    n = next(_names)
    one = _build(store, f"one-{n}", topics, labelled, decided)
    steps = _build(store, f"steps-{n}", topics, labelled, decided)
    picked = None if chosen is None else [f"q{t}" for t in sorted(chosen)]
    outcomes = []
    with store.session() as s:
        try:
            outcomes.append(apply_rule(s, s.get_one(Campaign, one), rule, topics=picked))
        except ServiceError as refused:
            outcomes.append(str(refused))
    with store.read_session() as s:
        before = changes.version(s, steps)
    try:
        outcomes.append(apply_rule_in_steps(store, steps, rule, topics=picked))
    except ServiceError as refused:
        outcomes.append(str(refused))
    assert _labels(store, one) == _labels(store, steps)
    if isinstance(outcomes[0], str):
        assert outcomes[1] == outcomes[0].replace("'one-", "'steps-")  # the same refusal
        return
    first, second = outcomes
    assert not isinstance(second, str)
    assert (first.rule, first.labelled, first.kept, first.queued, first.unlabelled,
            first.dropped) == (second.rule, second.labelled, second.kept, second.queued,
                               second.unlabelled, second.dropped)  # fmt: skip
    stored = {(t, d) for t, d in labelled if t < len(topics) and d < len(topics[t])}
    ungraded = {(t, d) for t, d in stored if all(g is None for g in topics[t][d])}
    assert first.dropped == len({(t, d) for t, d in ungraded if chosen is None or t in chosen})
    wanted = {
        t
        for t, documents in enumerate(topics)
        if any(any(g is not None for g in d) for d in documents)
    } | {t for t, _ in stored}  # a topic with a rule-made label: its batch may remove it
    if chosen is not None:
        wanted &= chosen
    sizes = [sum(any(g is not None for g in d) for d in topics[t]) for t in sorted(wanted)]
    expected_batches = 0
    filled = pending = 0  # documents and topics in the batch being filled
    for size in sizes:
        filled, pending = filled + size, pending + 1
        if filled >= batch:
            expected_batches, filled, pending = expected_batches + 1, 0, 0
    expected_batches += pending > 0  # a last batch, even of topics with labels to remove only
    assert second.transactions == expected_batches
    assert second.redecided == 0
    with store.read_session() as s:
        assert changes.version(s, steps) - before == expected_batches


@contextmanager
def _between_batches(store: Store, monkeypatch: pytest.MonkeyPatch, step) -> Iterator[list[int]]:
    """Run `step(number)` before each write batch of a stepped rule begins (outside it)."""
    begun: list[int] = []
    original = store.batch_connection

    @contextmanager
    def batch() -> Iterator[Connection]:
        step(len(begun))
        begun.append(len(begun))
        with original() as connection:
            yield connection

    monkeypatch.setattr(store, "batch_connection", batch)
    yield begun


def _user(store: Store, name: str) -> User:
    with store.read_session() as s:
        return s.scalars(select(User).where(User.username == name)).one()


def test_a_topic_judged_meanwhile_is_decided_again_and_a_decision_made_meanwhile_kept(
    judged: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of one topic (q1, q2, q3). Before q2's batch, carol revises q2/d6 (the tie
    2, 0, 1 becomes 2, 0, 2: a majority of 2) and an adjudicator decides q3/d9 (a rule-made 0
    by majority): q2's batch finds q2 changed, decides it again from the new grades and
    writes at its second attempt, q3/d9 keeps the adjudicator's label, and the labels are
    those the one-transaction rule sets afterwards."""
    monkeypatch.setattr(adjudication_steps, "BATCH_DOCUMENTS", 1)
    carol, boss = _user(judged, "carol"), _user(judged, "boss")

    def meanwhile(number: int) -> None:
        if number != 1:
            return
        with judged.session() as s:
            campaign = get_campaign(s, "demo")
            s.add(
                Judgement(campaign_id=campaign.id, qid="q2", docno="d6", user_id=carol.id, grade=2)
            )
        with judged.session() as s:
            record_decision(
                s,
                get_campaign(s, "demo"),
                qid="q3",
                docno="d9",
                grade=2,
                reason="read it",
                adjudicator=s.get_one(User, boss.id),
            )

    with judged.read_session() as s:
        campaign_id = get_campaign(s, "demo").id
    with _between_batches(judged, monkeypatch, meanwhile) as begun:
        summary = apply_rule_in_steps(judged, "demo", MergeSpec("majority"))
    assert begun == [0, 1, 2, 3]  # q2's batch found q2 changed, decided it again, wrote
    assert (summary.transactions, summary.redecided) == (3, 1)
    assert "1 topic(s) decided again" in summary.message()
    # q2/d7 (1, 0) is the only tie left; q3/d9 counted as kept, not labelled
    assert (summary.labelled, summary.kept, summary.queued) == (len(GRADES) - 2, 1, 1)
    labels = _labels(judged, campaign_id)
    assert labels[("q2", "d6")][:2] == (2, "majority/tie=adjudicate")
    assert labels[("q3", "d9")][:2] == (2, "adjudicated")
    with judged.session() as s:
        again = apply_rule(s, get_campaign(s, "demo"), MergeSpec("majority"))
    assert (again.labelled, again.kept, again.queued) == (summary.labelled, 1, 1)
    assert _labels(judged, campaign_id) == labels


def test_a_label_decided_after_its_batch_read_the_labels_is_kept(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write statements themselves keep an adjudicator's label (on PostgreSQL a decision
    can commit between a batch's read of the labels and its write): an update or a delete of
    a rule-made label skips it once an adjudicator decided it, an insert skips a document
    that has a label."""
    with store.session() as s:
        campaign = build_campaign(s)
        campaign_id = campaign.id
        boss = s.scalars(select(User).where(User.username == "boss")).one().id
    with store.session() as s:
        apply_rule(s, s.get_one(Campaign, campaign_id), MergeSpec("majority", tie="higher"))
    stale = adjudication_steps.final_labels

    def then_decided(session, campaign, *, qids=None):  # type: ignore[no-untyped-def]
        labels = stale(session, campaign, qids=qids)
        for label in session.scalars(select(FinalLabel).where(FinalLabel.docno.in_(["d6", "d1"]))):
            label.adjudicator_id, label.rule, label.grade = boss, "adjudicated", 1
        session.flush()
        return labels

    monkeypatch.setattr(adjudication_steps, "final_labels", then_decided)
    # tie=adjudicate: q2/d6 and q2/d7 would be deleted (ties), q1/d1 and q2/d1 updated
    apply_rule_in_steps(store, campaign_id, MergeSpec("majority"))
    labels = _labels(store, campaign_id)
    assert labels[("q2", "d6")][:2] == (1, "adjudicated")
    assert labels[("q1", "d1")][:2] == (1, "adjudicated")
    assert labels[("q2", "d1")][:2] == (1, "adjudicated")
    assert ("q2", "d7") not in labels  # a rule-made label of a tie: deleted


def test_a_rule_removes_its_label_of_a_document_no_longer_graded_in_the_topics_it_decides(
    store: Store,
) -> None:
    """q1/d4 (alice 0, bob 0, carol 'cannot judge') gets the majority's 0; once alice and bob
    revise it to 'cannot judge', applying a rule to q2 keeps that label (not its topic), and
    applying it to every topic removes it, and says so (the one-transaction rule does the
    same: `test_the_labels_equal_the_one_transaction_rules`); the document is then in the
    queue for an adjudicator."""
    from workbench.services.adjudication import disagreement_queue
    from workbench.services.current_judgements import ungraded_keys

    rule = MergeSpec("majority", tie="higher")
    with store.session() as s:
        campaign = build_campaign(s)
        apply_rule(s, campaign, rule)
        for user in s.scalars(select(User).where(User.username.in_(["alice", "bob"]))):
            s.add(Judgement(campaign_id=campaign.id, qid="q1", docno="d4", user_id=user.id,
                            cannot_judge="wrong language"))  # fmt: skip
        s.flush()
        stale = qrels_labels(s, campaign, final=True)[0]  # the stale label labels nothing
        figures = queue_figures(s, campaign.id, rule)
        other_topic = apply_rule(s, campaign, rule, topics=["q2"])
        campaign_id = campaign.id
    assert ("q1", "d4") not in stale and ("q1", "d1") in stale
    assert ("q1", "d4", "undecided") in figures.keys
    assert other_topic.dropped == 0 and ("q1", "d4") in _labels(store, campaign_id)
    every = apply_rule_in_steps(store, campaign_id, rule)
    assert every.dropped == 1
    assert (every.queued, other_topic.queued) == (1, 0)  # counted as the queue counts it
    assert "; 1 earlier rule-made label(s) removed, as their documents no longer have a grade" in (
        every.message()
    )
    assert ("q1", "d4") not in _labels(store, campaign_id)
    with store.read_session() as s:
        campaign = get_campaign(s, campaign_id)
        assert ungraded_keys(s, campaign) == {("q1", "d4")}
        [item] = [q for q in disagreement_queue(s, campaign, MergeSpec("majority")) if not q.grades]
    assert (item.qid, item.docno, item.proposal) == ("q1", "d4", None)
    assert item.cannot_judge == dict.fromkeys(("Judge 1", "Judge 2"), "wrong language") | {
        "Judge 3": "foreign language"
    }


def test_a_topic_whose_documents_were_all_revised_to_cannot_judge_can_be_decided_again(
    store: Store,
) -> None:
    """q9/d1 gets the majority's 1; both judges revise it to 'cannot judge': the rule applied
    to q9 alone (no graded document left there) removes the label instead of refusing the
    topic; an adjudicator's grade then counts as kept."""
    rule = MergeSpec("majority")
    with store.session() as s:
        campaign = build_campaign(s, {("q9", "d1"): (1, 1, None)})
        apply_rule(s, campaign, rule)
        users = list(s.scalars(select(User).where(User.username.in_(["alice", "bob"]))))
        for user in users:
            s.add(Judgement(campaign_id=campaign.id, qid="q9", docno="d1", user_id=user.id,
                            cannot_judge="blank page"))  # fmt: skip
        s.flush()
        again = apply_rule(s, campaign, rule, topics=["q9"])
        record_decision(s, campaign, qid="q9", docno="d1", grade=0, reason="read it",
                        adjudicator=users[0])  # fmt: skip
        decided = apply_rule(s, campaign, rule, topics=["q9"])
        with pytest.raises(ServiceError, match="no judged document in topic"):
            apply_rule(s, campaign, rule, topics=["q8"])
    assert (again.dropped, again.queued, again.kept) == (1, 1, 0)
    assert (decided.dropped, decided.queued, decided.kept) == (0, 0, 1)
