"""What an assessor's pages show: 'My topics' with progress, and the judging page of one
assignment (one document, a list of passages or pairs, by the campaign's judging mode), read
in one session as frozen dataclasses (rendered after the session closed)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import highlight
from workbench.services import adaptive_pools, guidelines, judging, preferences, progress, routing
from workbench.services.assignments import (
    assignment_topic,
    assignments_for_user,
    own_assignment,
)
from workbench.services.campaigns import CampaignInfo, campaign_info, get_campaign, scale_of
from workbench.services.progress import Progress
from workbench.store.models import Judgement


@dataclass(frozen=True)
class MyTopic:
    """A line of 'My topics': the assignment `id`, its campaign's name, the topic and the
    progress."""

    id: int
    campaign: str
    qid: str
    title: str
    progress: Progress


def my_topics(session: Session, user_id: int) -> list[MyTopic]:
    """The assessor's active assignments, by campaign then topic (`progress.user_progress`)."""
    names: dict[int, str] = {}
    rows = []
    for a, done in progress.user_progress(session, user_id):
        if a.campaign_id not in names:
            names[a.campaign_id] = get_campaign(session, a.campaign_id).name
        topic = assignment_topic(session, a)
        rows.append(MyTopic(a.id, names[a.campaign_id], a.qid, topic.title if topic else "", done))
    return rows


@dataclass(frozen=True)
class TopicText:
    qid: str
    title: str
    description: str
    narrative: str


@dataclass(frozen=True)
class AssignedTopic:
    id: int  # the assignment
    qid: str
    title: str


@dataclass(frozen=True)
class JudgingPage:
    """The judging page of one assignment: the assignment, its campaign, topic (None if the
    campaign no longer has it), grades, number of documents, the guidelines as HTML and
    whether to show them first (no judgement yet in the campaign). total counts documents,
    or pairs where the campaign judges pairwise. The next topic is not part of it: the page
    asks for it (`next_topic`) once its topic is done."""

    assignment: AssignedTopic
    campaign: CampaignInfo
    topic: TopicText | None
    grades: list[dict[str, int | str]]
    total: int
    adaptive: bool
    title_stems: dict[str, str]
    guidelines_html: str
    first_document: bool


def next_topic(session: Session, user_id: int, assignment_id: int) -> AssignedTopic | None:
    """The assessor's next assignment (in 'My topics' order, after this one, wrapping) that
    still has documents to judge: what the judging page offers once this topic is done, and
    asks for then (at TREC size, read with the page, it was 60 % of a judge's first page's
    CPU, for an offer made once per topic). The one right after is looked at first, the
    others only when it is done (each topic's judgements are read: 2,650 of them at TREC
    size), and only judged and total are counted."""
    mine = assignments_for_user(session, user_id)  # 'My topics' order
    ids = [a.id for a in mine]
    start = ids.index(assignment_id) + 1 if assignment_id in ids else 0
    others = [a for a in mine[start:] + mine[:start] if a.id != assignment_id]
    for candidates in (others[:1], others[1:]):
        left = progress.unfinished(session, candidates)
        for a in candidates:
            if a.id in left:
                topic = assignment_topic(session, a)
                return AssignedTopic(a.id, a.qid, topic.title if topic else "")
    return None


def judging_page(session: Session, assignment_id: int, user_id: int) -> JudgingPage:
    """The judging page of the user's active assignment; NotFound for anyone else's."""
    assignment = own_assignment(session, assignment_id, user_id)
    campaign = get_campaign(session, assignment.campaign_id)
    topic = assignment_topic(session, assignment)
    if campaign.judging_mode == "pairwise":
        total = len(preferences.assignment_pairs(session, assignment))
    else:
        total = len(judging.document_sequence(session, assignment))
    judged_before = session.scalar(
        select(Judgement.id)
        .where(Judgement.campaign_id == campaign.id, Judgement.user_id == user_id)
        .limit(1)
    )
    return JudgingPage(
        assignment=AssignedTopic(assignment.id, assignment.qid, topic.title if topic else ""),
        campaign=campaign_info(campaign),
        topic=(
            TopicText(topic.qid, topic.title, topic.description, topic.narrative)
            if topic is not None
            else None
        ),
        grades=scale_of(campaign),
        total=total,
        adaptive=adaptive_pools.is_adaptive(session, assignment.pool_id)
        or routing.grows(session, assignment.pool_id),
        title_stems=highlight.stems(topic.title if topic else ""),
        guidelines_html=guidelines.render(campaign.guidelines),
        first_document=not judged_before,
    )
