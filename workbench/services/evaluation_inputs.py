"""What an evaluation of a campaign reads: its qrels (named by a spec), its runs, and its scope.

Qrels are named by a spec: "final" (the adjudicated FinalLabel rows), an assessor's username
(that assessor's current grades), the name of an imported QrelsSet, or, from the command line
only, the path of a qrels file. Final and assessor qrels are `services.qrels.campaign_qrels`,
as the export writes them, so a report scores exactly the exported files, and like the export
they are refused while documents of the pools in scope lack a label unless allow_incomplete
(then the report says so).

Runs (`load_runs`) are the store's run blobs decoded into one `trec.Run` each (`LoadedRun`),
the shape the metric module evaluates directly: no other form of a run's lines is made on
the way to a score.

Topics (`topic_scope`): the judged topics of the qrels, a topic being judged when some label is
0 or more (a topic holding only -1, pooled but never judged, tells nothing and trec_eval cannot
evaluate it when it comes first). Topics the campaign lacks are out of scope unless asked
(`outside_topics`): a collection's official qrels judge many more topics than a campaign's,
and under trec_eval's -c each would score 0 for every run. With the "all" topic set
(`TOPIC_SETS`) every run is evaluated over every judged topic in scope, a topic it lacks
scoring 0 (trec_eval's -c); "common" keeps the topics every run has. Every topic left out is
named (`TopicScope.notes`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench import pooling
from workbench.services.current_judgements import CurrentGrades, graders
from workbench.services.errors import ServiceError
from workbench.services.qrels import (
    IncompleteQrels,
    QrelsDict,
    assessors_qrels,
    campaign_qrels,
    has_final_labels,
)
from workbench.services.scope import PoolScope, pool_scope
from workbench.store.models import Campaign, QrelsEntry, QrelsSet, Run, Topic, User
from workbench.store.runs import load_run
from workbench.trec import Qrels, TrecFormatError, read_qrels
from workbench.trec import Run as TrecRun
from workbench.trec.order import trec_order_blocks

DEFAULT_MEASURES = ("map", "P.10", "ndcg_cut.10")

TOPIC_SETS = {
    "all": "every judged topic; a topic a run lacks scores 0 (trec_eval -c)",
    "common": "only the judged topics every run has (names the topics it drops)",
}


# ---------------------------------------------------------------------------------- qrels


@dataclass(frozen=True)
class NamedQrels:
    label: str  # what the report calls them: "final", "assessor alice", "qrels set X", a path
    qrels: QrelsDict
    notes: tuple[str, ...] = ()  # e.g. that they are incomplete and were asked for anyway
    trec: Qrels | None = field(default=None, compare=False, repr=False)
    """The same qrels as one `trec.Qrels`, when the caller has them (else made from `qrels`)."""

    def of_topics(self, topics: Iterable[str]) -> Qrels:
        """The qrels of `topics` (topics of these qrels) as one `trec.Qrels`, the shape the
        metric module takes: made once per evaluation and shared by its runs, sliced from
        `as_trec` (all topics, built once)."""
        return self.as_trec.select(topics)

    @cached_property
    def as_trec(self) -> Qrels:
        """All these qrels as one `trec.Qrels` (`trec`, or made from the dict, which is never
        changed after creation), derived from themselves (`Qrels.as_derived`): every
        evaluation of a run against them or qrels made from them (`of_topics`, `without`,
        `part_of`) probes the run once."""
        trec = self.trec if self.trec is not None else Qrels.from_dict(self.qrels)
        return trec if trec.lineage is not None else trec.as_derived()


def assessors(
    session: Session, campaign: Campaign, grades: CurrentGrades | None = None
) -> list[User]:
    """The users with at least one current grade in the campaign, by username (from
    `grades`, the campaign's `CurrentGrades`, when the caller has them)."""
    ids = graders(session, campaign.id, grades=grades)
    users = session.scalars(select(User).where(User.id.in_(ids)).order_by(User.username))
    return list(users)


def qrels_choices(session: Session, campaign: Campaign) -> list[str]:
    """The qrels specs a campaign offers: 'final', its assessors, its imported qrels sets."""
    sets = session.scalars(
        select(QrelsSet.name).where(QrelsSet.campaign_id == campaign.id).order_by(QrelsSet.name)
    )
    return ["final", *(u.username for u in assessors(session, campaign)), *sets]


def resolve_qrels(
    session: Session,
    campaign: Campaign,
    spec: str = "final",
    *,
    allow_files: bool = False,
    allow_incomplete: bool = False,
    pools: PoolScope | None = None,
    grades: CurrentGrades | None = None,
) -> NamedQrels:
    """Qrels named by `spec`: 'final', an assessor's username, a QrelsSet name, or (only with
    allow_files, i.e. from the command line, never from the web) a qrels file. Final and
    assessor qrels that lack labels of the pools in scope (`pools`, default the campaign's
    default scope) are refused unless allow_incomplete. `grades`: the campaign's
    `CurrentGrades`, when the caller has them (the same qrels)."""
    numbers = pools.numbers if pools is not None and pools.chosen else None
    if spec == "final":
        if not has_final_labels(session, campaign):
            raise ServiceError(
                f"campaign {campaign.name!r} has no final labels yet: adjudicate first (apply a "
                "merge rule, or decide in the adjudication queue)"
            )
        final = campaign_qrels(
            session, campaign, final=True, allow_incomplete=allow_incomplete, pools=numbers,
            grades=grades,
        )  # fmt: skip
        return NamedQrels("final", final.qrels, final.notes())
    judge = session.scalar(select(User.id).where(User.username == spec))
    if judge is not None and graders(session, campaign.id, user_id=judge, grades=grades):
        graded = campaign_qrels(
            session, campaign, assessor=spec, allow_incomplete=allow_incomplete, pools=numbers,
            grades=grades,
        )  # fmt: skip
        return NamedQrels(f"assessor {spec}", graded.qrels, graded.notes())
    qrels_set = session.scalar(
        select(QrelsSet).where(QrelsSet.campaign_id == campaign.id, QrelsSet.name == spec)
    )
    if qrels_set is not None:
        entries = session.scalars(select(QrelsEntry).where(QrelsEntry.qrels_set_id == qrels_set.id))
        imported: QrelsDict = defaultdict(dict)
        for entry in entries:
            imported[entry.qid][entry.docno] = entry.rel
        made = (f"The qrels set {spec!r} was made from {qrels_set.source}.",)
        return NamedQrels(f"qrels set {spec}", dict(imported), made if qrels_set.source else ())
    if allow_files and Path(spec).is_file():
        try:
            return NamedQrels(spec, read_qrels(spec).to_dict())
        except TrecFormatError as error:
            raise ServiceError(str(error)) from None
    raise ServiceError(
        f"qrels {spec!r}: not 'final', an assessor with judgements, or a qrels set of "
        f"{campaign.name!r}" + (", nor a file" if allow_files else "")
    )


def resolve_assessors_qrels(
    session: Session,
    campaign: Campaign,
    names: Sequence[str],
    *,
    allow_incomplete: bool = False,
    pools: PoolScope | None = None,
    grades: CurrentGrades | None = None,
) -> dict[str, NamedQrels | IncompleteQrels]:
    """`resolve_qrels` of each assessor named (users with a current grade: `assessors`), read
    in one pass (`services.qrels.assessors_qrels`; `grades` as there): their qrels, or the
    IncompleteQrels refusal that `resolve_qrels` would raise."""
    numbers = pools.numbers if pools is not None and pools.chosen else None
    every = assessors_qrels(session, campaign, names, pools=numbers, grades=grades)
    return {
        name: IncompleteQrels(graded.completeness)
        if not graded.completeness.complete and not allow_incomplete
        else NamedQrels(f"assessor {name}", graded.qrels, graded.notes())
        for name, graded in every.items()
    }


# ---------------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class LoadedRun:
    """A run of the campaign: its lines as stored, one `trec.Run` (per topic, file order),
    which the metric module evaluates as it is; `ranked_lists` is the pooling view of the same
    lines (each topic in trec_eval order), made on first use."""

    tag: str
    group: str
    contributes: bool
    trec_run: TrecRun = field(repr=False, compare=False)

    @cached_property
    def ranked_lists(self) -> dict[str, pooling.RankedList]:
        """qid -> the topic's documents in trec_eval order (`pooling.topic_ranked_lists`)."""
        return pooling.topic_ranked_lists(self.trec_run)

    def ranked_list(self, qid: str, limit: int) -> pooling.RankedList:
        """The topic's first `limit` documents in trec_eval order (`ranked_lists[qid]`'s
        first `limit`), ordering and decoding only the lines that can be among them
        (`pooling.ranked_list` with a limit): all of them when a score is NaN, which has no
        place in that order."""
        lines = self.trec_run.topic_slice(qid)
        scores = self.trec_run.scores[lines]
        if np.isnan(scores).any():
            return self.ranked_lists[qid]
        return pooling.ranked_list(self.trec_run.docnos[lines], scores, limit=limit)

    def tops(self, limit: int) -> dict[str, list[str]]:
        """qid -> the topic's first `limit` documents in trec_eval order (the docnos of
        `ranked_list(qid, limit)`), every topic at once: the run's lines put in trec order a
        block of topics at a time (`trec.order.trec_order_blocks`), only the first `limit`
        of each decoded. Topic by topic when a score is NaN (as `ranked_list`)."""
        run = self.trec_run
        if np.isnan(run.scores).any():
            return {q: list(self.ranked_list(q, limit).docnos) for q in run.topics()}
        order = np.arange(len(run.scores))
        for first, _, block in trec_order_blocks(run.docnos, run.scores, run.offsets):
            if block is not None:
                lo = int(run.offsets[first])
                order[lo : lo + len(block)] = lo + block
        lengths = np.diff(run.offsets)
        position = np.arange(len(order)) - np.repeat(run.offsets[:-1], lengths)
        chosen = order[position < max(limit, 0)]
        names = [d.decode("utf-8", "surrogateescape") for d in run.docnos[chosen].tolist()]
        ends = np.cumsum(np.minimum(lengths, max(limit, 0))).tolist()
        starts = [0, *ends[:-1]]
        return {q: names[a:b] for q, a, b in zip(run.topics(), starts, ends, strict=True)}


def load_runs(session: Session, campaign: Campaign) -> list[LoadedRun]:
    """Every run of the campaign, contributing or not, by tag."""
    runs = session.scalars(select(Run).where(Run.campaign_id == campaign.id).order_by(Run.tag))
    loaded = [
        LoadedRun(run.tag, run.group, run.contributes, load_run(session, run)) for run in runs
    ]
    if not loaded:
        raise ServiceError(f"campaign {campaign.name!r} has no runs")
    return loaded


def campaign_topics(session: Session, campaign: Campaign) -> frozenset[str]:
    """The qids of the campaign's topics."""
    return frozenset(session.scalars(select(Topic.qid).where(Topic.campaign_id == campaign.id)))


# ---------------------------------------------------------------------------------- scope


@dataclass(frozen=True)
class Scope:
    """What an evaluation of a campaign covers: its `runs` (from `load_runs`, given when one
    report needs several analyses; None: loaded), the judged topics of `topic_set`
    (`TOPIC_SETS`), whether qrels topics the campaign lacks are evaluated too
    (`outside_topics`), the pools whose documents the qrels must label (`pools`, numbers;
    None: `scope.pool_scope`'s default) and whether qrels that lack labels may be used
    (`allow_incomplete`). `grades`: the campaign's `CurrentGrades`, given when one report
    reads several qrels and the assessors (None: each read in SQL; the same results)."""

    runs: Sequence[LoadedRun] | None = None
    topic_set: str = "all"
    allow_incomplete: bool = False
    pools: tuple[int, ...] | None = None
    outside_topics: bool = False
    grades: CurrentGrades | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.topic_set not in TOPIC_SETS:
            raise ServiceError(
                f"unknown topic set {self.topic_set!r}; expected one of {', '.join(TOPIC_SETS)}"
            )

    def loaded_runs(self, session: Session, campaign: Campaign) -> Sequence[LoadedRun]:
        return self.runs if self.runs is not None else load_runs(session, campaign)

    def pool_scope(self, session: Session, campaign: Campaign) -> PoolScope:
        return pool_scope(session, campaign, self.pools)

    def qrels(
        self, session: Session, campaign: Campaign, spec: str, *, allow_files: bool = False
    ) -> NamedQrels:
        """`resolve_qrels` of `spec` within this scope."""
        return resolve_qrels(
            session,
            campaign,
            spec,
            allow_files=allow_files,
            allow_incomplete=self.allow_incomplete,
            pools=self.pool_scope(session, campaign),
            grades=self.grades,
        )

    def assessors_qrels(
        self, session: Session, campaign: Campaign, names: Sequence[str]
    ) -> dict[str, NamedQrels | IncompleteQrels]:
        """`resolve_assessors_qrels` of these assessors within this scope."""
        return resolve_assessors_qrels(
            session,
            campaign,
            names,
            allow_incomplete=self.allow_incomplete,
            pools=self.pool_scope(session, campaign),
            grades=self.grades,
        )

    def topics(
        self, session: Session, campaign: Campaign, runs: Sequence[LoadedRun], qrels: NamedQrels
    ) -> TopicScope:
        """`topic_scope` of these runs and qrels within the campaign's topics."""
        return topic_scope(
            runs,
            qrels,
            self.topic_set,
            campaign_topics(session, campaign),
            include_outside=self.outside_topics,
        )


@dataclass(frozen=True)
class TopicScope:
    """The topics an evaluation covers (`evaluated`, in qid order) and each one left out:
    `outside` (qrels topics the campaign lacks; evaluated when `outside_included`), `unjudged`
    (qrels topics without a label of 0 or more, and campaign topics the qrels lack),
    `dropped` (the "common" set: topic -> the runs that lack it)."""

    qrels: str
    topic_set: str
    evaluated: tuple[str, ...]
    judged: int  # judged topics in scope, before the "common" set drops any
    outside: tuple[str, ...] = ()
    outside_included: bool = False
    unjudged: tuple[str, ...] = ()
    dropped: dict[str, list[str]] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """What every rendering says about the topics."""
        n = len(self.evaluated)
        if self.topic_set == "common":
            dropped = "; ".join(
                f"{qid} (lacked by {', '.join(tags)})" for qid, tags in self.dropped.items()
            )
            notes = [
                f"Common-topic set: only the {n} of the {self.judged} judged topics that "
                "every run has are evaluated"
                + (f"; dropped: {dropped}." if dropped else "; none dropped.")
            ]
        else:
            notes = [
                f"Every run is evaluated over the {n} judged topics of the {self.qrels} qrels; "
                "a topic a run lacks scores 0 (trec_eval -c)."
            ]
        if self.outside:
            listed = ", ".join(self.outside)
            notes.append(
                f"{len(self.outside)} qrels topic(s) outside the campaign "
                + (f"evaluated as asked: {listed}." if self.outside_included else
                   f"left out (the campaign's topics are in scope): {listed}.")
            )  # fmt: skip
        if self.unjudged:
            notes.append(
                f"{len(self.unjudged)} topic(s) without a judgement in the {self.qrels} qrels "
                f"(none, or only documents pooled but not judged, -1) left out: "
                f"{', '.join(self.unjudged)}."
            )
        return notes


def _nothing_judged(label: str, outside: Sequence[str], included: bool) -> str:
    """Why no topic can be evaluated. Our choice, not trec_eval's: trec_eval refuses a run
    and qrels without a common topic ("No queries with both results and relevance info", exit
    4 in 10.0, 7 in 9.0.8), except 10.0 under -c, which prints 0 for every measure."""
    if outside and not included:
        listed = ", ".join(outside[:10]) + (", ..." if len(outside) > 10 else "")
        return (
            f"these qrels ({label}) judge none of the campaign's topics: their {len(outside)} "
            f"topic(s) ({listed}) are outside the campaign. Evaluate them anyway with "
            "--outside-topics (on the web: 'outside topics'), or "
            "choose the qrels of this campaign"
        )
    return (
        f"these qrels ({label}) judge no topic (no label of 0 or more): nothing to evaluate; "
        "judge some documents first, or choose other qrels"
    )


def topic_scope(
    runs: Sequence[LoadedRun],
    qrels: NamedQrels,
    topic_set: str = "all",
    campaign: Iterable[str] | None = None,
    *,
    include_outside: bool = False,
) -> TopicScope:
    """The judged topics of `qrels` (some label >= 0) of the `topic_set`, within the
    `campaign`'s topics unless `include_outside` (None: no campaign to compare with); a
    ServiceError when there is none (`_nothing_judged`)."""
    if topic_set not in TOPIC_SETS:
        raise ServiceError(
            f"unknown topic set {topic_set!r}; expected one of {', '.join(TOPIC_SETS)}"
        )
    inside = None if campaign is None else set(campaign)
    outside = sorted(q for q in qrels.qrels if inside is not None and q not in inside)
    kept = [q for q in qrels.qrels if include_outside or q not in set(outside)]
    negative = {q for q in kept if max(qrels.qrels[q].values(), default=-1) < 0}
    absent = set() if inside is None else inside - set(qrels.qrels)
    unjudged = sorted(negative | absent)
    judged = sorted(set(kept) - negative)
    if not judged:
        raise ServiceError(_nothing_judged(qrels.label, outside, include_outside))
    evaluated, dropped = judged, {}
    if topic_set == "common":
        lacking = {q: [r.tag for r in runs if q not in r.trec_run] for q in judged}
        evaluated = [q for q in judged if not lacking[q]]
        if not evaluated:
            raise ServiceError(
                "no judged topic is common to every run; evaluate over all judged topics "
                "instead (missing topics score 0)"
            )
        dropped = {q: tags for q, tags in lacking.items() if tags}
    return TopicScope(
        qrels=qrels.label,
        topic_set=topic_set,
        evaluated=tuple(evaluated),
        judged=len(judged),
        outside=tuple(outside),
        outside_included=include_outside,
        unjudged=tuple(unjudged),
        dropped=dropped,
    )
