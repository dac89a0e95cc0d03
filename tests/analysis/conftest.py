"""A small judged campaign: 3 assessors, 3 topics, 4 documents each, grades 0-2."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from workbench.store.models import Campaign, Grade, Judgement, User

# (qid, docno) -> grades of alice, bob, carol (None: not judged)
GRADES: dict[tuple[str, str], tuple[int | None, int | None, int | None]] = {
    ("q1", "d1"): (2, 2, 1),
    ("q1", "d2"): (0, 1, 0),
    ("q1", "d3"): (1, 1, 1),
    ("q1", "d4"): (0, 0, None),
    ("q2", "d1"): (1, 2, 2),
    ("q2", "d5"): (0, 0, 0),
    ("q2", "d6"): (2, 0, 1),
    ("q2", "d7"): (1, 0, None),
    ("q3", "d2"): (0, 2, 2),
    ("q3", "d8"): (1, 1, 0),
    ("q3", "d9"): (0, 0, 1),
    ("q3", "d10"): (2, 2, 2),
}
ASSESSORS = ("alice", "bob", "carol")


def build_campaign(session, grades=GRADES, name: str = "demo") -> Campaign:
    """The campaign, its users, and the judgements (alice first judges q1/d1 as 0, then 2)."""
    campaign = Campaign(name=name, relevance_level=1)
    campaign.grades = [
        Grade(value=0, label="Not relevant", key="0"),
        Grade(value=1, label="Relevant", key="1"),
        Grade(value=2, label="Highly relevant", key="2"),
    ]
    users = [User(username=u, password_hash="x") for u in ASSESSORS]
    admin = User(username="boss", password_hash="x", role="admin")
    session.add_all([campaign, *users, admin])
    session.flush()
    session.add(
        Judgement(campaign_id=campaign.id, qid="q1", docno="d1", user_id=users[0].id, grade=0)
    )
    for (qid, docno), row in grades.items():
        for user, grade in zip(users, row, strict=True):
            if grade is not None:
                session.add(
                    Judgement(
                        campaign_id=campaign.id, qid=qid, docno=docno, user_id=user.id, grade=grade
                    )
                )
    session.add(
        Judgement(
            campaign_id=campaign.id,
            qid="q1",
            docno="d4",
            user_id=users[2].id,
            cannot_judge="foreign language",
        )
    )
    session.flush()
    return campaign


@pytest.fixture
def judged(store):
    """The store with the judged campaign; yields the campaign name."""
    with store.session() as session:
        build_campaign(session)
    return store


# run tag -> group -> topic -> documents best first (depth-3 pool of runA, runB, runC)
RUNS: dict[str, tuple[str, bool, dict[str, list[str]]]] = {
    "runA": ("g1", True, {"q1": ["d1", "d3", "d2", "d4"], "q2": ["d1", "d6", "d5"],
                          "q3": ["d10", "d2", "d8", "d9"]}),
    "runB": ("g1", True, {"q1": ["d3", "d1", "d11"], "q2": ["d6", "d1", "d5"],
                          "q3": ["d2", "d10", "d12"]}),
    "runC": ("g2", True, {"q1": ["d2", "d4", "d1"], "q2": ["d5", "d7", "d1"],
                          "q3": ["d9", "d8", "d10"]}),
    "runD": ("g3", False, {"q1": ["d1", "d2"], "q2": ["d1"], "q3": ["d10", "d13"]}),
}  # fmt: skip


def add_runs_and_pool(session, campaign, folder) -> None:
    """Topics, the four runs (runD does not contribute) and a depth-3 pool."""
    from workbench.services import pools, run_imports
    from workbench.store.models import Topic

    session.add_all([Topic(campaign_id=campaign.id, qid=q) for q in ("q1", "q2", "q3")])
    session.flush()
    for tag, (group, contributes, topics) in RUNS.items():
        path = folder / f"{tag}.txt"
        path.write_text(
            "".join(
                f"{qid} Q0 {docno} {rank} {10 - rank} {tag}\n"
                for qid, docnos in topics.items()
                for rank, docno in enumerate(docnos, start=1)
            )
        )
        run_imports.import_runs(session, campaign, [path], group=group, contributes=contributes)
    pools.build_pool(session, campaign, strategy="depth", depth=3, seed=1)


def judge_the_rest_of_the_pool(session, campaign) -> None:
    """alice judges the two pooled documents nobody judged (q1/d11, q3/d12) as 0, so that
    every pooled document gets a final label."""
    alice = session.scalar(select(User.id).where(User.username == "alice"))
    for qid, docno in (("q1", "d11"), ("q3", "d12")):
        session.add(
            Judgement(campaign_id=campaign.id, qid=qid, docno=docno, user_id=alice, grade=0)
        )
    session.flush()


@pytest.fixture
def evaluated(judged, tmp_path):
    """The judged campaign with runs, a pool, and final labels by majority (ties higher) for
    every pooled document."""
    from workbench.services.adjudication import MergeSpec, apply_rule
    from workbench.services.campaigns import get_campaign

    with judged.session() as session:
        campaign = get_campaign(session, "demo")
        add_runs_and_pool(session, campaign, tmp_path)
        judge_the_rest_of_the_pool(session, campaign)
        apply_rule(session, campaign, MergeSpec("majority", tie="higher"))
    return judged
