"""The evaluation use case: one call builds a campaign's whole evaluation report.

`evaluation_report(session, campaign, request)` loads the runs once and chains evaluate ->
compare (paired tests) -> Tukey HSD -> precision-recall curves -> ranking stability ->
reusability (leave-one-out) -> the course notes' sections, as the request asks. The CLI and
the web only render the returned `EvaluationReport`. A section the campaign cannot have (no
final labels for the stability, no pool for the reusability) is never silently missing: it is
None and `unavailable` says why, where the section would be.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sqlalchemy.orm import Session

from workbench import interleaving, stats
from workbench.services import adaptive_pools
from workbench.services import evaluation as service
from workbench.services.errors import ServiceError
from workbench.services.extended_evaluation import ExtendedSections, extended_sections
from workbench.store.models import Campaign

REUSABILITY_UNITS = {"run": "leave one run out", "group": "leave one group out"}


@dataclass(frozen=True)
class NotesOptions:
    """Options of the course notes' sections: collection size N, the minimum difference for
    the power analysis, a parameter-sweep tag pattern, the interleaving method."""

    num_docs: int | None = None
    delta: float | None = None
    sweep: str = ""
    interleaving: str = "team-draft"


@dataclass(frozen=True)
class EvaluationRequest:
    """What to evaluate and which sections to build (the defaults are the CLI's)."""

    qrels: str = "final"
    measures: tuple[str, ...] = ()
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    relevance_level: int | None = None  # None: the campaign's
    topic_set: str = "all"
    allow_incomplete: bool = False
    allow_files: bool = False  # qrels may name a file (the command line only)
    tukey: bool = False
    curves: bool = False
    stability: bool = False
    reusability: tuple[str, ...] = ()  # units of REUSABILITY_UNITS
    notes: NotesOptions | None = None  # None: no course notes' sections

    def __post_init__(self) -> None:
        if self.test not in stats.PAIRED_TESTS:
            raise ServiceError(
                f"unknown test {self.test!r}; expected one of {', '.join(stats.PAIRED_TESTS)}"
            )
        if self.correction not in stats.CORRECTIONS:
            raise ServiceError(
                f"unknown correction {self.correction!r}; expected one of "
                f"{', '.join(stats.CORRECTIONS)}"
            )
        if self.topic_set not in service.TOPIC_SETS:
            raise ServiceError(
                f"unknown topic set {self.topic_set!r}; expected one of "
                f"{', '.join(service.TOPIC_SETS)}"
            )
        if not 0 < self.alpha < 1:
            raise ServiceError(f"alpha must be between 0 and 1; got {self.alpha}")
        for unit in self.reusability:
            if unit not in REUSABILITY_UNITS:
                raise ServiceError(
                    f"unknown reusability unit {unit!r}; expected one of "
                    f"{', '.join(REUSABILITY_UNITS)}"
                )
        if self.notes is not None and self.notes.interleaving not in interleaving.METHODS:
            raise ServiceError(
                f"unknown interleaving method {self.notes.interleaving!r}; expected one of "
                f"{', '.join(interleaving.METHODS)}"
            )

    @property
    def chosen_measures(self) -> list[str]:
        return list(self.measures) or list(service.DEFAULT_MEASURES)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (a report job's parameters); `from_dict` reads it back."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> EvaluationRequest:
        known = {f.name for f in fields(cls)}
        args = {k: v for k, v in values.items() if k in known}
        args["measures"] = tuple(args.get("measures", ()))
        args["reusability"] = tuple(args.get("reusability", ()))
        if isinstance(args.get("notes"), Mapping):
            args["notes"] = NotesOptions(**args["notes"])
        return cls(**args)


@dataclass(frozen=True)
class EvaluationReport:
    """Every part of a campaign's evaluation report; renderers choose what to show."""

    request: EvaluationRequest
    runs: list[service.LoadedRun]
    table: service.EvaluationTable
    comparisons: service.Comparisons
    warning: str | None  # e.g. measures over an adaptively judged pool
    tukey: stats.TukeyResult | None = None
    curves: dict[str, list[float]] | None = None
    stability: service.RankingStability | None = None
    reusability: dict[str, service.Reusability] = field(default_factory=dict)
    notes_sections: ExtendedSections | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # section -> why it is absent

    @property
    def measure(self) -> str:
        """The first measure: the one of Tukey's test, the stability and the reusability."""
        return self.table.measures[0]

    def notes(self) -> list[str]:
        """What every rendering says beside the scores (topics, NaN, tests, missing parts)."""
        absent = [f"No {section}: {why}" for section, why in self.unavailable.items()]
        return [*self.table.notes(), *self.comparisons.notes, *absent]

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "evaluation": self.table.to_dict(),
            "comparisons": self.comparisons.to_dict(),
        }
        if self.warning:
            document["warning"] = self.warning
        if self.stability is not None:
            document["ranking_stability"] = self.stability.to_dict()
        if self.reusability:
            document["reusability"] = {u: r.to_dict() for u, r in self.reusability.items()}
        if self.notes_sections is not None:
            document["notes"] = self.notes_sections.to_dict()
        if self.unavailable:
            document["unavailable"] = dict(self.unavailable)
        return document


def _quiet(_step: str) -> None:
    """The default progress callback: says nothing."""


def evaluation_report(
    session: Session,
    campaign: Campaign,
    request: EvaluationRequest,
    progress: Callable[[str], None] = _quiet,
) -> EvaluationReport:
    """Build the report `request` asks for; progress(step) is called before each long step.

    Raises ServiceError when the evaluation itself cannot be made (unknown qrels, measures,
    incomplete qrels not allowed); an optional section that cannot be built is listed in
    `unavailable` with the reason instead.
    """
    progress("evaluating the runs")
    runs = service.load_runs(session, campaign)
    scope = service.Scope(runs, request.topic_set, request.allow_incomplete)
    table = service.evaluate_campaign(
        session,
        campaign,
        request.qrels,
        request.chosen_measures,
        relevance_level=request.relevance_level,
        scope=scope,
        allow_files=request.allow_files,
    )
    comparisons = service.compare_runs(
        table, test=request.test, correction=request.correction, alpha=request.alpha
    )
    measure = table.measures[0]
    unavailable: dict[str, str] = {}
    parts: dict[str, Any] = {}
    if request.tukey:
        parts["tukey"] = service.tukey_hsd(table, measure)
    if request.curves:
        progress("precision-recall curves")
        parts["curves"] = service.precision_recall(session, campaign, request.qrels, scope)
    if request.stability:
        progress("ranking stability")
        try:
            parts["stability"] = service.ranking_stability(session, campaign, measure, scope)
        except ServiceError as error:
            unavailable["ranking stability"] = str(error)
    reusability = {}
    for unit in request.reusability:
        progress(f"reusability ({REUSABILITY_UNITS[unit]})")
        try:
            reusability[unit] = service.leave_out(
                session,
                campaign,
                qrels=request.qrels,
                measure=measure,
                by=unit,
                scope=scope,
                allow_files=request.allow_files,
            )
        except ServiceError as error:
            unavailable[f"reusability ({REUSABILITY_UNITS[unit]})"] = str(error)
    if request.notes is not None:
        progress("the course notes' sections")
        options = request.notes
        parts["notes_sections"] = extended_sections(
            session,
            campaign,
            table,
            runs,
            request.qrels,
            test=request.test,
            alpha=comparisons.alpha,
            num_docs=options.num_docs,
            min_difference=options.delta,
            sweep_pattern=options.sweep or None,
            interleaving_method=options.interleaving,
            allow_files=request.allow_files,
            allow_incomplete=request.allow_incomplete,
        )
    return EvaluationReport(
        request=request,
        runs=runs,
        table=table,
        comparisons=comparisons,
        warning=adaptive_pools.evaluation_warning(session, campaign),
        reusability=reusability,
        unavailable=unavailable,
        **parts,
    )
