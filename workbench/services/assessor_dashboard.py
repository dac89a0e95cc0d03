"""The assessor dashboard of a campaign: per assessor and over time, what the organiser needs
to see while judging runs (`workbench.assessor_quality` computes; this module reads the store).

Per assessor: progress, documents judged, idle-aware hours and judgements per hour, median and
mean seconds per document, grade distribution, agreement with the other judges (weighted
kappa on shared documents, gold documents left out), accuracy and weighted kappa against
gold with intervals, the practice set, the last judgement, and the outlier rules' reasons.
Over time: the same per day or per session (drift), and judgement events per clock hour.
Also the assessor's own view (`my_quality`): their progress and, when the campaign allows
it, their gold accuracy (never a document or another assessor's label).
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import assessor_quality as quality
from workbench.agreement import Weights
from workbench.json_output import json_safe
from workbench.relevance import is_relevant
from workbench.services import calibration, gold, progress
from workbench.services.campaigns import get_campaign
from workbench.services.current_judgements import JUDGEMENT_ROW, JudgementRow
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign, Judgement, User

WEIGHTS = ("linear", "quadratic")


@dataclass(frozen=True)
class AssessorRow:
    """One assessor over the whole campaign (NaN / None: not measured)."""

    assessor: str
    active: bool
    progress_judged: int
    progress_total: int
    judged: int  # documents with a current judgement
    events: int  # judgement events, revisions included
    hours: float  # idle-aware time
    per_hour: float
    median_seconds: float
    mean_seconds: float
    grades: dict[str, int]  # grade value (text) -> current judgements; "cannot judge"
    relevant_share: float
    agreement: quality.Agreement
    gold: quality.GoldAccuracy | None
    practice: calibration.PracticeResult | None
    last_judgement: dt.datetime | None
    outliers: tuple[str, ...]


@dataclass(frozen=True)
class PeriodRow:
    """One assessor in one period (day or session): drift of grades and agreement."""

    assessor: str
    period: str
    judged: int
    relevant_share: float
    agreement_pairs: int
    agreement_percent: float
    gold_n: int
    gold_accuracy: float


@dataclass(frozen=True)
class HourCount:
    assessor: str
    hour: str  # UTC, YYYY-MM-DDTHH:00
    events: int


@dataclass(frozen=True)
class AssessorDashboard:
    campaign: str
    period: str
    weights: str
    confidence: float
    relevance_level: int
    scale: tuple[tuple[int, str], ...]  # (value, label)
    rows: tuple[AssessorRow, ...]
    drift: tuple[PeriodRow, ...]
    hourly: tuple[HourCount, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN as null, times as ISO 8601 UTC."""
        return dict(json_safe(_iso_times(asdict(self))))


def _iso_times(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="seconds") + "Z"
    if isinstance(value, dict):
        return {k: _iso_times(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_iso_times(v) for v in value]
    return value


def _events(session: Session, campaign_id: int, names: Mapping[int, str]) -> list[quality.Event]:
    rows = session.execute(
        JUDGEMENT_ROW.where(Judgement.campaign_id == campaign_id).order_by(Judgement.id)
    )
    return [
        quality.Event(names[j.user_id], j.qid, j.docno, j.grade, j.time_spent_ms, j.created_at)
        for j in (JudgementRow(*row) for row in rows)
    ]


def assessor_dashboard(
    session: Session,
    campaign_ref: str | int,
    *,
    period: str = "day",
    weights: str = "linear",
    confidence: float = 0.95,
    rules: quality.OutlierRules | None = None,
) -> AssessorDashboard:
    """The dashboard of a campaign (see the module docstring)."""
    if period not in quality.PERIODS:
        raise ServiceError(
            f"unknown period {period!r}; expected one of {', '.join(quality.PERIODS)}"
        )
    if weights not in WEIGHTS:
        raise ServiceError(f"unknown weights {weights!r}; expected one of {', '.join(WEIGHTS)}")
    if not 0.5 <= confidence < 1:
        raise ServiceError(f"the confidence must be in [0.5, 1); got {confidence}")
    campaign = get_campaign(session, campaign_ref)
    users = {u.id: u for u in session.scalars(select(User))}
    names = {uid: u.username for uid, u in users.items()}
    events = _events(session, campaign.id, names)
    report = progress.campaign_progress(session, campaign.id)
    done = {a["username"]: a["progress"] for a in report["assessors"]}
    practice = {names[u]: r for u, r in calibration.results(session, campaign.id).items()}
    golden = gold.gold_grades(session, campaign.id)
    w: Weights = "quadratic" if weights == "quadratic" else "linear"
    data = _Data(campaign, events, golden, w, confidence, period)
    who = sorted(set(done) | {e.assessor for e in events} | set(practice))
    profiles = {a: data.profile(a) for a in who}
    chosen_rules = rules or quality.OutlierRules()
    rows = []
    for a in who:
        row = data.row(a, profiles[a], chosen_rules)
        p = done.get(a)
        user = next((u for u in users.values() if u.username == a), None)
        rows.append(
            AssessorRow(
                **{
                    **row,
                    "active": bool(user and user.active),
                    "progress_judged": p.judged if p else 0,
                    "progress_total": p.total if p else 0,
                    "practice": practice.get(a),
                }
            )
        )
    notes = []
    if golden:
        counted = gold.quality_config(session, campaign.id).gold_in_qrels
        rule = "count in" if counted else "stay out of"
        notes.append(
            f"{len(golden)} gold document(s): their judgements {rule} agreement and qrels; "
            "the agreement with the others here leaves them out"
        )
    periods = "UTC days" if period == "day" else "sessions (a 30-minute gap starts a new one)"
    notes.append(
        "time is idle-aware (the judging page stops its clock after a minute without input); "
        f"periods are {periods}"
    )
    return AssessorDashboard(
        campaign.name,
        period,
        weights,
        confidence,
        campaign.relevance_level,
        tuple((g.value, g.label) for g in campaign.grades),
        tuple(rows),
        tuple(data.drift(who)),
        tuple(data.hourly()),
        tuple(notes),
    )


class _Data:
    """The campaign's events and labels, indexed once for every assessor's figures."""

    def __init__(
        self,
        campaign: Campaign,
        events: Sequence[quality.Event],
        golden: Mapping[tuple[str, str], int],
        weights: Weights,
        confidence: float,
        period: str,
    ) -> None:
        self.level = campaign.relevance_level
        self.scale = [g.value for g in campaign.grades]
        self.events = events
        self.golden = golden
        self.weights = weights
        self.confidence = confidence
        self.latest = quality.current(events)
        self.seconds = quality.document_seconds(events)
        self.periods = quality.periods(events, period)
        self.graded = {k: e.grade for k, e in self.latest.items() if e.grade is not None}
        self.shared = {k: g for k, g in self.graded.items() if (k[1], k[2]) not in golden}
        self.topics: dict[str, set[str]] = defaultdict(set)
        self.owned: dict[str, list[tuple[tuple[str, str, str], quality.Event]]] = defaultdict(list)
        for key, event in self.latest.items():
            self.topics[key[0]].add(key[1])
            self.owned[key[0]].append((key, event))
        self._gold_cache: dict[str, quality.GoldAccuracy | None] = {}
        self._agreement_cache: dict[str, quality.Agreement] = {}

    def _own(self, assessor: str) -> list[tuple[tuple[str, str, str], quality.Event]]:
        return self.owned.get(assessor, [])

    def _not_relevant(self, grades: Sequence[int]) -> int:
        return sum(not is_relevant(g, self.level) for g in grades)

    def _gold(
        self, assessor: str, keys: set[tuple[str, str, str]] | None = None
    ) -> quality.GoldAccuracy | None:
        if keys is None and assessor in self._gold_cache:
            return self._gold_cache[assessor]
        found = self._gold_of(assessor, keys)
        if keys is None:
            self._gold_cache[assessor] = found
        return found

    def _gold_of(
        self, assessor: str, keys: set[tuple[str, str, str]] | None
    ) -> quality.GoldAccuracy | None:
        pairs = [
            (g, self.golden[k[1], k[2]])
            for k, g in self.graded.items()
            if k[0] == assessor and (k[1], k[2]) in self.golden and (keys is None or k in keys)
        ]
        if not pairs:
            return None
        given, expected = zip(*pairs, strict=True)
        return quality.gold_accuracy(
            given, expected, scale=self.scale, level=self.level, weights=self.weights,
            confidence=self.confidence,
        )  # fmt: skip

    def _agreement(
        self, assessor: str, keys: Sequence[tuple[str, str]] | None = None
    ) -> quality.Agreement:
        if keys is None and assessor in self._agreement_cache:
            return self._agreement_cache[assessor]
        mine, theirs = quality.pairs_with_others(assessor, self.shared, keys)
        found = quality.agreement_of(mine, theirs, scale=self.scale, weights=self.weights)
        if keys is None:
            self._agreement_cache[assessor] = found
        return found

    def profile(self, assessor: str) -> quality.Profile:
        own = self._own(assessor)
        grades = [
            e.grade for _, e in own if e.grade is not None and (e.qid, e.docno) not in self.golden
        ]
        others = [
            g for (who, qid, docno), g in self.shared.items()
            if who != assessor and qid in self.topics[assessor]
        ]  # fmt: skip
        other_seconds = [s for k, s in self.seconds.items() if k[0] != assessor]
        own_gold = self._gold(assessor)
        other_gold = [self._gold(a) for a in self.topics if a != assessor]
        successes = sum(g.accuracy.successes for g in other_gold if g)
        n = sum(g.accuracy.n for g in other_gold if g)
        first = last = None
        by_period = self._by_period(assessor)
        if by_period:
            keys = sorted(by_period)
            first, last = (
                (p, sum(is_relevant(g, self.level) for g in by_period[p]), len(by_period[p]))
                for p in (keys[0], keys[-1])
            )
        return quality.Profile(
            assessor=assessor,
            judged=len(own),
            not_relevant=self._not_relevant(grades),
            graded=len(grades),
            others_not_relevant=self._not_relevant(others),
            others_graded=len(others),
            median_seconds=quality.median(s for k, s in self.seconds.items() if k[0] == assessor),
            others_median_seconds=quality.median(other_seconds),
            kappa=self._agreement(assessor).kappa,
            others_median_kappa=quality.median(
                k
                for a in self.topics
                if a != assessor and not math.isnan(k := self._agreement(a).kappa)
            ),
            gold=own_gold.accuracy if own_gold else None,
            others_gold=quality.wilson_interval(successes, n, confidence=self.confidence)
            if n
            else None,
            first_period=first,
            last_period=last,
        )

    def _by_period(self, assessor: str) -> dict[str, list[int]]:
        found: dict[str, list[int]] = defaultdict(list)
        for k, e in self._own(assessor):
            if e.grade is not None and (e.qid, e.docno) not in self.golden:
                found[self.periods[k]].append(e.grade)
        return found

    def row(
        self, assessor: str, profile: quality.Profile, rules: quality.OutlierRules
    ) -> dict[str, Any]:
        own = self._own(assessor)
        hours = sum(e.time_ms for e in self.events if e.assessor == assessor) / 3.6e6
        spent = [s for k, s in self.seconds.items() if k[0] == assessor]
        counts: dict[str, int] = {str(v): 0 for v in self.scale}
        for _, e in own:
            label = "cannot judge" if e.grade is None else str(e.grade)
            counts[label] = counts.get(label, 0) + 1
        graded = [
            e.grade for _, e in own if e.grade is not None and (e.qid, e.docno) not in self.golden
        ]
        return {
            "assessor": assessor,
            "judged": len(own),
            "events": sum(e.assessor == assessor for e in self.events),
            "hours": hours,
            "per_hour": len(own) / hours if hours > 0 else math.nan,
            "median_seconds": quality.median(spent),
            "mean_seconds": sum(spent) / len(spent) if spent else math.nan,
            "grades": counts,
            "relevant_share": (
                sum(is_relevant(g, self.level) for g in graded) / len(graded)
                if graded
                else math.nan
            ),
            "agreement": self._agreement(assessor),
            "gold": self._gold(assessor),
            "last_judgement": max((e.at for _, e in own), default=None),
            "outliers": tuple(quality.outlier_reasons(profile, rules)),
        }

    def drift(self, who: Sequence[str]) -> list[PeriodRow]:
        rows = []
        for assessor in who:
            keys_by_period: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
            for k, _e in self._own(assessor):
                keys_by_period[self.periods[k]].append(k)
            for period in sorted(keys_by_period):
                keys = keys_by_period[period]
                grades = [
                    self.graded[k]
                    for k in keys
                    if k in self.graded and (k[1], k[2]) not in self.golden
                ]
                shared = self._agreement(assessor, [(k[1], k[2]) for k in keys])
                on_gold = self._gold(assessor, set(keys))
                rows.append(
                    PeriodRow(
                        assessor,
                        period,
                        len(keys),
                        sum(is_relevant(g, self.level) for g in grades) / len(grades)
                        if grades
                        else math.nan,
                        shared.pairs,
                        shared.percent,
                        on_gold.n if on_gold else 0,
                        on_gold.accuracy.value if on_gold else math.nan,
                    )
                )
        return rows

    def hourly(self) -> list[HourCount]:
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for e in self.events:
            counts[e.assessor, e.at.strftime("%Y-%m-%dT%H:00")] += 1
        return [HourCount(a, h, n) for (a, h), n in sorted(counts.items())]


# ---------------------------------------------------------------- the assessor's own view


@dataclass(frozen=True)
class MyQuality:
    """An assessor's view of one campaign: progress, pace, and (when the campaign shows it)
    gold accuracy."""

    campaign_id: int
    campaign: str
    judged: int
    total: int
    hours: float
    per_hour: float
    practice: calibration.PracticeResult | None
    gold_shown: bool
    gold_n: int
    gold_accuracy: quality.Proportion | None


def my_quality(session: Session, user_id: int) -> list[MyQuality]:
    """Per campaign in which the assessor has an active assignment (see the module docstring)."""
    by_campaign: dict[int, progress.Progress] = defaultdict(progress.Progress)
    for a, p in progress.user_progress(session, user_id):
        by_campaign[a.campaign_id].add(p)
    found = []
    for campaign_id, done in by_campaign.items():
        campaign = get_campaign(session, campaign_id)
        config = gold.quality_config(session, campaign_id)
        latest = {
            (j.qid, j.docno): j.grade
            for j in (
                JudgementRow(*row)
                for row in session.execute(
                    JUDGEMENT_ROW.where(
                        Judgement.campaign_id == campaign_id, Judgement.user_id == user_id
                    ).order_by(Judgement.id)
                )
            )
        }
        accuracy = None
        n = 0
        if config.show_gold_accuracy:
            golden = gold.gold_grades(session, campaign_id)
            pairs = [(g, golden[k]) for k, g in latest.items() if k in golden and g is not None]
            n = len(pairs)
            if pairs:
                accuracy = quality.wilson_interval(sum(a == b for a, b in pairs), n)
        hours = done.time_ms / 3.6e6
        found.append(
            MyQuality(
                campaign_id,
                campaign.name,
                done.judged,
                done.total,
                hours,
                done.judged / hours if hours > 0 else math.nan,
                calibration.results(session, campaign_id).get(user_id),
                config.show_gold_accuracy,
                n,
                accuracy,
            )
        )
    return sorted(found, key=lambda q: q.campaign)
