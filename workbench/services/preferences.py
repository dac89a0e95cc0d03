"""Pairwise preference judging: the pairs of an assignment, recording, undo, the current
preferences, and their trec_eval prefs file.

In a campaign whose judging mode is ``pairwise`` (`workbench.judging_modes`), an assignment
judges the pairs that the campaign's design (`workbench.pairs`) draws from the topic's pooled
documents, in the assessor's seeded order and sides. Each answer is appended to the
preference log (`PreferenceJudgement`, like the judgement log: revisions kept, a retried
client_id stored once, an undo a new event). Aggregated over assessors, the current
preferences become `clicks.Preference`s, written as a trec_eval ``-R prefs`` file and
evaluated like click preferences (`querylogs.evaluate_preference_lines`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, fields

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench import clicks, limits, pairs
from workbench.services import changes
from workbench.services.assignments import own_assignment
from workbench.services.current_judgements import undo_step
from workbench.services.errors import NotFound, ServiceError
from workbench.services.judging import MAX_TIME_SPENT_MS
from workbench.services.querylogs import (
    ClickEvaluation,
    PreferenceSource,
    evaluate_preference_lines,
)
from workbench.services.undo import refuse_if_read_only
from workbench.store.models import (
    Assignment,
    Campaign,
    Document,
    Pool,
    PoolEntry,
    PreferenceJudgement,
    User,
)

CHOICES = ("left", "right", "equal")
"""What an assessor answers for a pair as shown."""


@dataclass(frozen=True, slots=True)
class PreferenceRow:
    """A row of the preference log as read."""

    id: int
    qid: str
    first: str
    second: str
    user_id: int
    shown_left: str
    outcome: str | None  # 'first', 'second', 'equal'; None: taken back
    comment: str
    time_spent_ms: int
    position: int | None
    undoes_id: int | None
    created_at: dt.datetime

    def choice(self) -> str | None:
        """The outcome as the assessor saw the pair: 'left', 'right' or 'equal'."""
        if self.outcome in (None, "equal"):
            return self.outcome
        preferred = self.first if self.outcome == "first" else self.second
        return "left" if preferred == self.shown_left else "right"


_ROW = select(*(getattr(PreferenceJudgement, f.name) for f in fields(PreferenceRow)))


@dataclass(frozen=True)
class PreferenceInput:
    """What an assessor submits for a pair shown as (left, right)."""

    left: str
    right: str
    choice: str
    comment: str = ""
    time_spent_ms: int = 0
    client_id: str | None = None


def pairwise_options(campaign: Campaign) -> tuple[str, int]:
    """The campaign's pair design and its k; ServiceError unless it judges pairwise."""
    if campaign.judging_mode != "pairwise":
        raise ServiceError(f"campaign {campaign.name!r} does not judge pairwise preferences")
    options = campaign.judging_options or {}
    return str(options.get("design", "top")), int(options.get("top", pairs.DEFAULT_TOP))


def assignment_pairs(session: Session, assignment: Assignment) -> list[pairs.Pair]:
    """The assignment's pairs in the assessor's order and sides (`pairs.presentation`)."""
    campaign = session.get_one(Campaign, assignment.campaign_id)
    design, top = pairwise_options(campaign)
    pool = session.get_one(Pool, assignment.pool_id)
    rows = session.execute(
        select(PoolEntry.docno, PoolEntry.best_rank).where(
            PoolEntry.pool_id == pool.id,
            PoolEntry.qid == assignment.qid,
            PoolEntry.sampled.is_(True),
        )
    ).all()
    chosen = pairs.design_pairs(
        [r.docno for r in rows], [r.best_rank for r in rows], design=design, top=top
    )
    return pairs.presentation(
        chosen, seed=pool.seed, pool_id=pool.id, qid=assignment.qid, assessor_id=assignment.user_id
    )


def current_preferences(
    session: Session, campaign_id: int, *, qid: str | None = None, user_id: int | None = None
) -> list[PreferenceRow]:
    """The latest preference of every (topic, pair, assessor), those taken back left out."""
    latest = select(func.max(PreferenceJudgement.id)).where(
        PreferenceJudgement.campaign_id == campaign_id
    )
    if qid is not None:
        latest = latest.where(PreferenceJudgement.qid == qid)
    if user_id is not None:
        latest = latest.where(PreferenceJudgement.user_id == user_id)
    latest = latest.group_by(
        PreferenceJudgement.qid,
        PreferenceJudgement.first,
        PreferenceJudgement.second,
        PreferenceJudgement.user_id,
    )
    query = _ROW.where(
        PreferenceJudgement.id.in_(latest.scalar_subquery()),
        PreferenceJudgement.outcome.is_not(None),
    ).order_by(PreferenceJudgement.qid, PreferenceJudgement.first, PreferenceJudgement.second)
    return [PreferenceRow(*row) for row in session.execute(query)]


@dataclass(frozen=True)
class ShownPair:
    """A pair at `position` of an assignment with the assessor's current choice."""

    position: int
    left: str
    right: str
    choice: str | None


def pairwise_state(session: Session, assignment: Assignment) -> list[ShownPair]:
    """Every pair of the assignment as the assessor sees it, with their current choice."""
    mine = {
        (row.first, row.second): row
        for row in current_preferences(
            session, assignment.campaign_id, qid=assignment.qid, user_id=assignment.user_id
        )
    }
    shown = []
    for position, pair in enumerate(assignment_pairs(session, assignment)):
        row = mine.get((pair.first, pair.second))
        choice = None
        if row is not None:
            # the sides as shown now (the choice was stored against the docnos)
            choice = row.choice() if row.shown_left == pair.left else _mirrored(row.choice())
        shown.append(ShownPair(position, pair.left, pair.right, choice))
    return shown


def pair_at(session: Session, assignment: Assignment, position: int) -> dict:
    """The pair at `position` of the assignment as the assessor sees it: both documents
    (docno, title, text, missing) and the assessor's current choice."""
    shown = pairwise_state(session, assignment)
    if not 0 <= position < len(shown):
        raise NotFound(f"position {position} is outside 0..{len(shown) - 1}")
    pair = shown[position]
    texts = {
        docno: (title, text)
        for docno, title, text in session.execute(
            select(Document.docno, Document.title, Document.text).where(
                Document.campaign_id == assignment.campaign_id,
                Document.docno.in_([pair.left, pair.right]),
            )
        )
    }

    def side(docno: str) -> dict:
        title, text = texts.get(docno, ("", ""))
        return {"docno": docno, "title": title, "text": text, "missing": docno not in texts}

    return {
        "position": position,
        "total": len(shown),
        "left": side(pair.left),
        "right": side(pair.right),
        "choice": pair.choice,
    }


def _mirrored(choice: str | None) -> str | None:
    return {"left": "right", "right": "left"}.get(choice or "", choice)


def _outcome(pair: pairs.Pair, choice: str) -> str:
    if choice == "equal":
        return "equal"
    preferred = pair.left if choice == "left" else pair.right
    return "first" if preferred == pair.first else "second"


def record_preference(
    session: Session, assignment_id: int, user_id: int, data: PreferenceInput
) -> tuple[PreferenceRow, bool]:
    """Append the user's preference for a pair of their assignment; (row, created).

    A client_id already stored for this assessor in this campaign returns that row with
    created=False. NotFound: not the user's active assignment, or not one of its pairs;
    Conflict while archived; ServiceError: not a pairwise campaign, an unknown choice, a
    comment too long or with a NUL character.
    """
    if data.choice not in CHOICES:
        raise ServiceError(f"choice must be one of {', '.join(CHOICES)}; got {data.choice!r}")
    if len(data.comment) > limits.COMMENT or "\x00" in data.comment:
        raise ServiceError(f"a comment has at most {limits.COMMENT} characters and no NUL")
    if data.client_id is not None and not 0 < len(data.client_id) <= limits.CLIENT_ID:
        raise ServiceError(f"client_id must be 1 to {limits.CLIENT_ID} characters")
    assignment = own_assignment(session, assignment_id, user_id)
    stored = _by_client_id(session, assignment.campaign_id, user_id, data.client_id)
    if stored is not None:
        if {stored.first, stored.second} != {data.left, data.right}:
            raise ServiceError("client_id was already used for another pair")
        return stored, False
    refuse_if_read_only(session, assignment.campaign_id, assignment.pool_id)
    shown = assignment_pairs(session, assignment)
    position = next(
        (i for i, p in enumerate(shown) if {p.left, p.right} == {data.left, data.right}), None
    )
    if position is None or data.left == data.right:
        raise NotFound(f"{data.left!r} and {data.right!r} are not a pair of this assignment")
    pair = pairs.Pair(data.left, data.right)
    event = PreferenceJudgement(
        campaign_id=assignment.campaign_id,
        qid=assignment.qid,
        first=pair.first,
        second=pair.second,
        user_id=user_id,
        shown_left=data.left,
        outcome=_outcome(pair, data.choice),
        comment=data.comment.strip(),
        time_spent_ms=min(max(int(data.time_spent_ms), 0), MAX_TIME_SPENT_MS),
        position=position,
        client_id=data.client_id,
    )
    session.add(event)
    changes.changed(session, assignment.campaign_id)
    session.flush()
    return _row(session, event.id), True


def _row(session: Session, event_id: int) -> PreferenceRow:
    return PreferenceRow(*session.execute(_ROW.where(PreferenceJudgement.id == event_id)).one())


def _by_client_id(
    session: Session, campaign_id: int, user_id: int, client_id: str | None
) -> PreferenceRow | None:
    if client_id is None:
        return None
    found = session.execute(
        _ROW.where(
            PreferenceJudgement.campaign_id == campaign_id,
            PreferenceJudgement.user_id == user_id,
            PreferenceJudgement.client_id == client_id,
        )
    ).first()
    return None if found is None else PreferenceRow(*found)


def undo_last_preference(
    session: Session, assignment_id: int, user_id: int, client_id: str | None = None
) -> tuple[ShownPair, bool]:
    """Take back the user's last preference in this assignment as a new event (the pair's
    earlier outcome, or none); (the pair as shown now, created)."""
    if client_id is not None and not 0 < len(client_id) <= limits.CLIENT_ID:
        raise ServiceError(f"client_id must be 1 to {limits.CLIENT_ID} characters")
    assignment = own_assignment(session, assignment_id, user_id)
    stored = _by_client_id(session, assignment.campaign_id, user_id, client_id)
    if stored is not None:
        if stored.undoes_id is None:
            raise ServiceError("client_id was already used for a preference")
        return _shown(session, assignment, stored.first, stored.second), False
    refuse_if_read_only(session, assignment.campaign_id, assignment.pool_id)
    events = [
        PreferenceRow(*row)
        for row in session.execute(
            _ROW.where(
                PreferenceJudgement.campaign_id == assignment.campaign_id,
                PreferenceJudgement.qid == assignment.qid,
                PreferenceJudgement.user_id == user_id,
            )
        )
    ]
    step = undo_step(events, key=lambda e: (e.first, e.second))
    if step is None:
        raise ServiceError("nothing to undo: no preference of this topic is left to take back")
    target, restored = step
    session.add(
        PreferenceJudgement(
            campaign_id=assignment.campaign_id,
            qid=assignment.qid,
            first=target.first,
            second=target.second,
            user_id=user_id,
            shown_left=restored.shown_left if restored else target.shown_left,
            outcome=restored.outcome if restored else None,
            comment=restored.comment if restored else "",
            time_spent_ms=0,
            position=target.position,
            client_id=client_id,
            undoes_id=target.id,
        )
    )
    changes.changed(session, assignment.campaign_id)
    session.flush()
    return _shown(session, assignment, target.first, target.second), True


def _shown(session: Session, assignment: Assignment, first: str, second: str) -> ShownPair:
    for pair in pairwise_state(session, assignment):
        if {pair.left, pair.right} == {first, second}:
            return pair
    raise NotFound(f"{first!r} and {second!r} are no longer a pair of this assignment")


# ------------------------------------------------------------------- aggregation and export


def majority_preferences(rows: Iterable[PreferenceRow]) -> list[clicks.Preference]:
    """The current preferences over assessors, per topic and pair: a > b when more assessors
    preferred a than b ('equal' answers are abstentions); support and against count them.
    A pair without a majority gives none. Sorted by topic, preferred and other docno."""
    votes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        votes[row.qid, row.first, row.second][row.outcome or ""] += 1
    kept = []
    for (qid, first, second), counted in votes.items():
        a, b = counted["first"], counted["second"]
        if a != b:
            preferred, other = (first, second) if a > b else (second, first)
            kept.append(clicks.Preference(qid, preferred, other, max(a, b), min(a, b)))
    return sorted(kept, key=lambda p: (p.query, p.preferred, p.other))


def campaign_preferences(
    session: Session, campaign: Campaign, *, assessor: str | None = None
) -> list[clicks.Preference]:
    """The campaign's preferences by majority over its assessors (or one `assessor`'s)."""
    user_id = None
    if assessor is not None:
        user_id = session.scalar(select(User.id).where(User.username == assessor))
        if user_id is None:
            raise NotFound(f"no user {assessor!r}")
    rows = current_preferences(session, campaign.id, user_id=user_id)
    if not rows:
        who = f" by {assessor!r}" if assessor else ""
        raise ServiceError(f"campaign {campaign.name!r} has no preference judgements{who} yet")
    return majority_preferences(rows)


def prefs_text(session: Session, campaign: Campaign, *, assessor: str | None = None) -> str:
    """trec_eval's prefs file (``-R prefs``): each preference its own judgment group, the
    preferred document rel 1 and the other 0 (`clicks.prefs_lines`)."""
    lines = clicks.prefs_lines(campaign_preferences(session, campaign, assessor=assessor))
    return clicks.prefs_text(lines)


def preference_evaluation(
    session: Session,
    campaign: Campaign,
    qrels: str = "final",
    *,
    measure: str = "map",
    assessor: str | None = None,
    allow_files: bool = False,
) -> ClickEvaluation:
    """Every run scored on the pairwise preferences (trec_eval ``-R prefs``, ``prefs_simp``)
    and with `measure` on the `qrels`, as click preferences are
    (`querylogs.evaluate_preference_lines`): the two system rankings and Kendall's tau."""
    lines = clicks.prefs_lines(campaign_preferences(session, campaign, assessor=assessor))
    drawn = f"assessor {assessor}" if assessor else "majority over the assessors"
    return evaluate_preference_lines(
        session,
        campaign,
        lines,
        PreferenceSource(campaign.name, drawn, "preferences"),
        qrels,
        measure=measure,
        allow_files=allow_files,
    )
