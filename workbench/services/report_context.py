"""The shared context the report's sections are built from: one campaign, one request, and
what several sections read (the runs, the qrels, the topics in scope, the evaluation table,
the pairwise tests, the leave-one-out sections' contributions), each computed once, on first
use.

A part that cannot be made (qrels refused as incomplete, no final labels, an unknown measure)
is remembered with its reason: every section that needs it is then unavailable with that
reason, and the others are built. What a section needs is named (`NEEDS`) so that the
pipeline can say why a section is absent before trying to build it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.services import adaptive_provenance
from workbench.services import evaluation as service
from workbench.services import evaluation_stability as stability
from workbench.services.current_judgements import CurrentGrades
from workbench.services.errors import ServiceError
from workbench.services.evaluation_inputs import (
    LoadedRun,
    NamedQrels,
    Scope,
    TopicScope,
    assessors,
    load_runs,
)
from workbench.services.evaluation_report import ReportRequest
from workbench.services.qrels import has_final_labels
from workbench.services.scope import PoolScope
from workbench.store.models import Campaign, QueryLog, User

T = TypeVar("T")


class ReportContext:
    """A campaign, a request, and the report's shared parts (each made once, on first use;
    a part that cannot be made raises its ServiceError again wherever it is asked for)."""

    def __init__(self, session: Session, campaign: Campaign, request: ReportRequest) -> None:
        self.session = session
        self.campaign = campaign
        self.request = request
        self._made: dict[str, Any] = {}
        self._refused: dict[str, ServiceError] = {}

    def _once(self, key: str, make: Callable[[], T]) -> T:
        if key in self._refused:
            raise self._refused[key]
        if key not in self._made:
            try:
                self._made[key] = make()
            except ServiceError as error:
                self._refused[key] = error
                raise
        return self._made[key]

    # ------------------------------------------------------------------ the shared parts

    @property
    def relevance_level(self) -> int:
        level = self.request.level
        return self.campaign.relevance_level if level is None else level

    @property
    def runs(self) -> Sequence[LoadedRun]:
        return self._once("runs", lambda: load_runs(self.session, self.campaign))

    @property
    def scope(self) -> Scope:
        """The request's scope with the runs loaded once and the campaign's current grades read
        once for every qrels and the assessors (`CurrentGrades`)."""
        return self._once(
            "scope",
            lambda: Scope(
                runs=self.runs,
                topic_set=self.request.topic_set,
                allow_incomplete=self.request.allow_incomplete,
                pools=self.request.pools,
                outside_topics=self.request.outside_topics,
                grades=CurrentGrades(self.session, self.campaign.id),
            ),
        )

    @property
    def pools(self) -> PoolScope:
        return self._once("pools", lambda: self.request.scope().pool_scope(
            self.session, self.campaign))  # fmt: skip

    @property
    def qrels(self) -> NamedQrels:
        return self._once(
            "qrels",
            lambda: self.scope.qrels(
                self.session, self.campaign, self.request.qrels,
                allow_files=self.request.allow_files,
            ),
        )  # fmt: skip

    @property
    def topics(self) -> TopicScope:
        return self._once(
            "topics", lambda: self.scope.topics(self.session, self.campaign, self.runs, self.qrels)
        )

    @property
    def table(self) -> service.EvaluationTable:
        return self._once(
            "table",
            lambda: service.evaluate_runs(
                self.runs,
                self.qrels,
                self.request.chosen_measures,
                campaign=self.campaign.name,
                relevance_level=self.relevance_level,
                topics=self.topics,
            ),
        )

    @property
    def comparisons(self) -> service.Comparisons:
        return self._once(
            "comparisons",
            lambda: service.compare_runs(
                self.table,
                test=self.request.test,
                correction=self.request.correction,
                alpha=self.request.alpha,
            ),
        )

    @property
    def assessors(self) -> list[User]:
        """The users with a current grade in the campaign (`evaluation_inputs.assessors`)."""
        return self._once(
            "assessors", lambda: assessors(self.session, self.campaign, self.scope.grades)
        )

    @property
    def leave_out_inputs(self) -> stability.LeaveOutInputs:
        """What both leave-one-out sections read (the runs' contributions, Judged@10)."""
        return self._once(
            "leave out",
            lambda: stability.leave_out_inputs(
                self.session, self.campaign, self.table, self.qrels, self.scope
            ),
        )

    def option(self, name: str, default: Any = None) -> Any:
        """A section option's value (`ReportRequest.option`)."""
        return self.request.option(name, default)

    def warning(self) -> str | None:
        """What the whole report must say first (an adaptively judged pool)."""
        return adaptive_provenance.evaluation_warning(self.session, self.campaign)

    # ------------------------------------------------------------------ what sections need

    def require(self, need: str) -> None:
        """Raise ServiceError (the reason) unless the context has `need` (a name of NEEDS)."""
        NEEDS[need](self)


def _two_runs(context: ReportContext) -> None:
    if len(context.runs) < 2:
        raise ServiceError("this section compares runs: the campaign has fewer than two")


def _final_labels(context: ReportContext) -> None:
    if not has_final_labels(context.session, context.campaign):
        raise ServiceError(
            f"campaign {context.campaign.name!r} has no final labels yet: adjudicate first "
            "(apply a merge rule, or decide in the adjudication queue)"
        )


def _assessors(context: ReportContext) -> None:
    if not context.assessors:
        raise ServiceError("no assessor has judged yet")


def _pools(context: ReportContext) -> None:
    if not context.pools.ids:
        raise ServiceError(f"no pool in scope ({context.pools.describe()}): nothing was pooled")


def _query_log(context: ReportContext) -> None:
    found = context.session.scalar(
        select(QueryLog.id).where(QueryLog.campaign_id == context.campaign.id).limit(1)
    )
    if found is None:
        raise ServiceError(
            f"campaign {context.campaign.name!r} has no query log: import one (Query logs, or "
            "`workbench querylog import`)"
        )


NEEDS: dict[str, Callable[[ReportContext], Any]] = {
    "runs": lambda c: c.runs,
    "qrels": lambda c: c.qrels,
    "table": lambda c: c.table,
    "per-topic measure": lambda c: c.table.measure(),
    "two runs": _two_runs,
    "final labels": _final_labels,
    "assessors": _assessors,
    "pools": _pools,
    "query log": _query_log,
}
"""What a section may need, each a check that raises the reason it is missing."""
