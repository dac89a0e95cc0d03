"""Judging progress: judged / total and time spent, per assignment, topic and assessor.

judged = documents of the assignment (as its judging page shows them,
`assignments.documents_to_judge`: its routing slots, if any, and its gold documents included)
whose current judgement by its assessor (a grade or 'cannot judge') exists; total = the
documents it will have (an adaptive pool's primary judge: the topic's budget; another judge of
the topic: the seeded sample of what is revealed); in a pairwise campaign, pairs with the
assessor's current preference of the assignment's pairs;
time = sum of time_spent_ms over every logged judgement event of that assessor on that topic
(revisions included, idle excluded by the browser). A campaign's progress is over the active
assignments of the pools in scope (`services.scope`: by default the pools with assignments,
never archived ones), so it reaches 100 % exactly when every assigned document is judged; a
document in two assignments of one judge and topic (two pools in scope) counts once there
(`unit_progress`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence, Set
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.services import preferences
from workbench.services.assignments import assignments_for_user, documents_to_judge
from workbench.services.campaigns import get_campaign
from workbench.services.current_judgements import (
    judged_documents,
    judged_keys,
    withdrawn_topics,
)
from workbench.services.pools import qid_key
from workbench.services.scope import pool_scope
from workbench.store.models import (
    Assignment,
    Campaign,
    Judgement,
    PreferenceJudgement,
    Topic,
    User,
)


@dataclass
class Progress:
    judged: int = 0
    total: int = 0
    time_ms: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.judged / self.total if self.total else 0.0

    def add(self, other: Progress) -> None:
        self.judged += other.judged
        self.total += other.total
        self.time_ms += other.time_ms


def user_progress(session: Session, user_id: int) -> list[tuple[Assignment, Progress]]:
    """An assessor's active assignments, by campaign then topic, each with its progress."""
    mine = assignments_for_user(session, user_id)
    result: list[tuple[Assignment, Progress]] = []
    for campaign_id in dict.fromkeys(a.campaign_id for a in mine):
        group = [a for a in mine if a.campaign_id == campaign_id]
        done = assignment_progress(session, group)
        result += [(a, done[a.id]) for a in group]
    return result


def assignment_progress(session: Session, assignments: list[Assignment]) -> dict[int, Progress]:
    """Progress of each assignment (by assignment id); all must belong to one campaign."""
    return _progress(session, assignments, timed=True)


def unfinished(session: Session, assignments: list[Assignment]) -> set[int]:
    """The ids of the assignments with documents (or pairs) left to judge (judged < total of
    `assignment_progress`), found without reading the time spent: what the judging page's
    next topic needs (the time was a fifth of its reads at TREC size)."""
    by_campaign: dict[int, list[Assignment]] = defaultdict(list)
    for a in assignments:
        by_campaign[a.campaign_id].append(a)
    return {
        assignment_id
        for group in by_campaign.values()
        for assignment_id, done in _progress(session, group, timed=False).items()
        if done.judged < done.total
    }


Unit = tuple[str, int]  # (qid, user id): one judge's work on one topic, over their assignments


def _units(assignments: Sequence[Assignment]) -> dict[Unit, list[Assignment]]:
    units: dict[Unit, list[Assignment]] = defaultdict(list)
    for a in assignments:
        units[a.qid, a.user_id].append(a)
    return units


def _progress(
    session: Session, assignments: list[Assignment], *, timed: bool
) -> dict[int, Progress]:
    """`assignment_progress`; without the time spent (time_ms 0) unless `timed`."""
    found = _grouped_progress(session, [[a] for a in assignments], timed=timed)
    return {group[0].id: done for group, done in found}


def unit_progress(session: Session, assignments: list[Assignment]) -> dict[Unit, Progress]:
    """Progress of each judge on each topic over their assignments together (one campaign):
    a document (or pair) in two of their assignments (two pools in scope) counts once, as
    their judgement of it answers both, and their time on the topic once."""
    found = _grouped_progress(session, list(_units(assignments).values()), timed=True)
    return {(group[0].qid, group[0].user_id): done for group, done in found}


def _grouped_progress(
    session: Session, groups: list[list[Assignment]], *, timed: bool
) -> list[tuple[list[Assignment], Progress]]:
    """Each group's progress (a group: assignments of one judge and topic, one campaign):
    judged = the union of their documents (`documents_to_judge`'s shown) with a current
    judgement of the judge, total = that union plus what is not revealed yet; the time on
    the topic."""
    assignments = [a for group in groups for a in group]
    if not assignments:
        return []
    campaign_id = assignments[0].campaign_id
    # one assessor's own page reads their judgements, not the campaign's (2 million keys at
    # TREC size: 5.6 s of CPU per judging page before)
    users = {a.user_id for a in assignments}
    one_user = next(iter(users)) if len(users) == 1 else None
    if session.get_one(Campaign, campaign_id).judging_mode == "pairwise":
        return _pairwise_progress(session, groups, one_user)  # timed: few preferences
    qids = None if one_user is None else {a.qid for a in assignments}
    to_judge = documents_to_judge(session, assignments)
    judged: dict[Unit, Set[str]]
    if one_user is not None and qids is not None:  # one assessor's own: kept, checked
        found = judged_documents(session, campaign_id, one_user, qids)
        judged = {(qid, one_user): docnos for qid, docnos in found.items()}
    else:
        every: dict[Unit, set[str]] = defaultdict(set)
        for qid, docno, user_id in judged_keys(session, campaign_id):
            every[qid, user_id].add(docno)
        judged = dict(every)
    times = _time_spent(session, campaign_id, one_user, qids) if timed else {}
    result = []
    for group in groups:
        unit = (group[0].qid, group[0].user_id)
        shown = frozenset().union(*(to_judge[a.id].shown for a in group))
        unrevealed = sum(to_judge[a.id].total - len(to_judge[a.id].shown) for a in group)
        done = Progress(
            judged=len(shown & judged.get(unit, frozenset())),
            total=len(shown) + unrevealed,
            time_ms=int(times.get(unit) or 0),
        )
        result.append((group, done))
    return result


def _time_spent(
    session: Session, campaign_id: int, one_user: int | None, qids: set[str] | None
) -> dict[tuple[str, int], int]:
    """(qid, user id) -> the time spent over every judgement event (of `one_user`'s topics
    `qids` only, when given)."""
    spent = select(Judgement.qid, Judgement.user_id, func.sum(Judgement.time_spent_ms)).where(
        Judgement.campaign_id == campaign_id
    )
    if qids is not None:
        spent = spent.where(Judgement.user_id == one_user, Judgement.qid.in_(sorted(qids)))
    time_rows = session.execute(spent.group_by(Judgement.qid, Judgement.user_id))
    return {(qid, user_id): total for qid, user_id, total in time_rows}


def _pairwise_progress(
    session: Session, groups: list[list[Assignment]], one_user: int | None
) -> list[tuple[list[Assignment], Progress]]:
    """`_grouped_progress` of pairwise assignments: the union of the group's pairs with the
    judge's current preference / that union; time over every preference event of that
    assessor and topic (the preferences of `one_user` only, when every assignment is
    theirs)."""
    campaign_id = groups[0][0].campaign_id
    answered: dict[Unit, set[tuple[str, str]]] = defaultdict(set)
    for row in preferences.current_preferences(session, campaign_id, user_id=one_user):
        answered[row.qid, row.user_id].add((row.first, row.second))
    spent = select(
        PreferenceJudgement.qid,
        PreferenceJudgement.user_id,
        func.sum(PreferenceJudgement.time_spent_ms),
    ).where(PreferenceJudgement.campaign_id == campaign_id)
    if one_user is not None:
        spent = spent.where(PreferenceJudgement.user_id == one_user)
    time_rows = session.execute(
        spent.group_by(PreferenceJudgement.qid, PreferenceJudgement.user_id)
    )
    times = {(qid, user_id): total for qid, user_id, total in time_rows}
    result = []
    for group in groups:
        unit = (group[0].qid, group[0].user_id)
        shown = {
            (p.first, p.second) for a in group for p in preferences.assignment_pairs(session, a)
        }
        done = Progress(
            judged=len(shown & answered[unit]), total=len(shown), time_ms=int(times.get(unit) or 0)
        )
        result.append((group, done))
    return result


def campaign_progress(
    session: Session, campaign_id: int, pools: Sequence[int] | None = None
) -> dict:
    """{'topics': [...], 'assessors': [...], 'overall': Progress} over the active assignments
    of the pools numbered `pools` (default: `scope.pool_scope`'s), each judge's topic counted
    once (`unit_progress`), 'scope' (that PoolScope), and 'withdrawn': the withdrawn
    assignments with what was judged under them."""
    scope = pool_scope(session, get_campaign(session, campaign_id), pools)
    assignments = list(
        session.scalars(
            select(Assignment).where(
                Assignment.campaign_id == campaign_id,
                Assignment.active.is_(True),
                Assignment.pool_id.in_(scope.ids),
            )
        )
    )
    per_unit = unit_progress(session, assignments)
    titles = dict(
        session.execute(
            select(Topic.qid, Topic.title).where(Topic.campaign_id == campaign_id)
        ).all()
    )
    names = dict(session.execute(select(User.id, User.username)).all())
    topics: dict[str, Progress] = defaultdict(Progress)
    topic_judges: dict[str, list[str]] = defaultdict(list)
    assessors: dict[int, Progress] = defaultdict(Progress)
    overall = Progress()
    for (qid, user_id), progress in per_unit.items():
        topics[qid].add(progress)
        topic_judges[qid].append(names.get(user_id, str(user_id)))
        assessors[user_id].add(progress)
        overall.add(progress)
    return {
        "topics": [
            {
                "qid": qid,
                "title": titles.get(qid, ""),
                "assessors": sorted(topic_judges[qid]),
                "progress": topics[qid],
            }
            for qid in sorted(topics, key=qid_key)
        ],
        "assessors": [
            {
                "user_id": user_id,
                "username": names.get(user_id, str(user_id)),
                "progress": assessors[user_id],
            }
            for user_id in sorted(assessors, key=lambda u: names.get(u, ""))
        ],
        "overall": overall,
        "scope": scope,
        "withdrawn": _withdrawn(session, campaign_id, titles, names),
    }


def _withdrawn(
    session: Session, campaign_id: int, titles: dict[str, str], names: dict[int, str]
) -> list[dict]:
    """Withdrawn assignments (no active one for the same topic and assessor) with the
    judgements made under them: these count only when the campaign says so."""
    pairs = withdrawn_topics(session, campaign_id)
    rows = [
        a
        for a in session.scalars(
            select(Assignment).where(
                Assignment.campaign_id == campaign_id, Assignment.active.is_(False)
            )
        )
        if (a.qid, a.user_id) in pairs
    ]
    done = assignment_progress(session, rows)
    return [
        {
            "qid": a.qid,
            "title": titles.get(a.qid, ""),
            "username": names.get(a.user_id, str(a.user_id)),
            "progress": done[a.id],
        }
        for a in sorted(rows, key=lambda a: (qid_key(a.qid), names.get(a.user_id, "")))
    ]


def progress_json(p: Progress) -> dict[str, int | float]:
    return {"judged": p.judged, "total": p.total, "time_ms": p.time_ms, "percent": p.percent}


def progress_document(campaign: str, report: dict) -> dict:
    """`campaign_progress`'s report as JSON-ready data (the API's and the CLI's)."""
    return {
        "campaign": campaign,
        "pools": list(report["scope"].numbers),
        "scope": report["scope"].describe(),
        "overall": progress_json(report["overall"]),
        "topics": [
            {"qid": t["qid"], "assessors": t["assessors"], **progress_json(t["progress"])}
            for t in report["topics"]
        ],
        "assessors": [
            {"username": a["username"], **progress_json(a["progress"])} for a in report["assessors"]
        ],
    }
