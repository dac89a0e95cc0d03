"""The evaluation report's one pipeline: a request (parsed by one parser from every entry
point's parameters) and the registry of sections (`reports.sections.SECTIONS`) give a
`Report`, which `reports.formats` renders for the CLI, the web and the API alike.

Sections that can be built apart (`Section.apart`: leave-one-out's two, the per-topic figure,
precision-recall, Tukey HSD and power) are built in a child process forked once their store
reads are made (`services.forked.compute_apart`), on the
machine's other core while this process builds the rest; the results are the same (a child
that fails is replaced by building them here).

Failure isolation: a section whose needs are missing, or whose build refuses (ServiceError) or
fails (any other exception, logged with its traceback), is in the report with its reason in
its place; the other sections are built. Only a request that cannot mean anything (an unknown
or archived pool, an unknown section, a malformed parameter) is refused as a whole.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.reports.document import Report, Section, SectionResult
from workbench.reports.sections import SECTIONS
from workbench.services.errors import ServiceError
from workbench.services.evaluation_report import (
    COMMON_OPTIONS,
    ReportOption,
    ReportRequest,
    parse_request,
)
from workbench.services.forked import Apart, compute_apart
from workbench.services.report_context import NEEDS, ReportContext
from workbench.services.store_handle import Session

log = logging.getLogger(__name__)

SECTIONS_OPTION = ReportOption(
    "sections",
    "list",
    "The sections to build (default: every one): " + ", ".join(s.name for s in SECTIONS) + ".",
    default=(),
    choices=tuple(s.name for s in SECTIONS),
    aliases=("section",),
    cli=("--section",),
)
REPORT_OPTIONS: tuple[ReportOption, ...] = (
    *COMMON_OPTIONS,
    SECTIONS_OPTION,
    *(option for section in SECTIONS for option in section.options),
)
"""Every parameter of the report: the CLI's options, the web form's fields and the API's
query parameters are generated from this list."""


def parse(given: Mapping[str, Sequence[str]], *, allow_files: bool = False) -> ReportRequest:
    """The request from the texts given per parameter (`REPORT_OPTIONS`); the sections in
    registry order, every one being the same as none (one request, one report job)."""
    request = parse_request(given, REPORT_OPTIONS, allow_files=allow_files)
    names = [s.name for s in SECTIONS]
    chosen = tuple(n for n in names if n in request.sections)
    return dataclasses.replace(request, sections=() if len(chosen) == len(names) else chosen)


def _quiet(_step: str) -> None:
    """The default progress callback: says nothing."""


def build_report(
    session: Session,
    campaign: Any,
    request: ReportRequest,
    progress: Callable[[str], None] = _quiet,
    *,
    apart: bool = True,
) -> Report:
    """The report `request` asks for, its sections in registry order (`progress(title)`
    before each; a section built apart when its result is taken). Raises ServiceError only
    for a request that cannot be answered at all (pools that are unknown or archived).
    `apart`: whether sections that can be are built in a child process (the same report)."""
    for name in request.sections:
        if name not in {s.name for s in SECTIONS}:
            raise ServiceError(f"unknown section {name!r}; expected one of "
                               + ", ".join(s.name for s in SECTIONS))  # fmt: skip
    context = ReportContext(session, campaign, request)
    pools = context.pools  # an unknown or archived pool refuses the request
    chosen = [s for s in SECTIONS if not request.sections or s.name in request.sections]
    said: list[str] = []

    def tell(title: str) -> None:  # each title once, though the first is said early
        if title not in said:
            said.append(title)
            progress(title)

    if apart and chosen:
        tell(chosen[0].title)  # the shared parts, made before the fork, are the first's
    away = _start_apart(chosen, context) if apart else None
    built: dict[str, SectionResult] = {}
    try:
        for section in chosen:
            if away is None or section.name not in away.names:
                tell(section.title)
                built[section.name] = build_section(section, context)
    except BaseException:
        if away is not None:
            away.child.stop()
        raise
    if away is not None:
        found = away.child.result()
        for section in away.sections:
            tell(section.title)
            mine = found.get(section.name) if found is not None else None
            built[section.name] = mine if mine is not None else build_section(section, context)
    results = [built[section.name] for section in chosen]
    try:
        topics = context.topics
        topic_notes = tuple(topics.notes())
        scope_topics: dict[str, Any] = {
            "topic_set": topics.topic_set,
            "topics": list(topics.evaluated),
            "outside_topics": list(topics.outside),
            "outside_included": topics.outside_included,
            "unjudged_topics": list(topics.unjudged),
        }
    except ServiceError:  # the sections say why
        topic_notes, scope_topics = (), {"topic_set": request.topic_set}
    warning = context.warning()
    return Report(
        campaign=campaign.name,
        qrels=_qrels_label(context),
        params=request.to_params(),
        scope={
            "pools": list(pools.numbers),
            "pools_rule": pools.rule,
            "description": f"{pools.describe()}; {_topics_phrase(scope_topics)}",
            **scope_topics,
        },
        warnings=(warning,) if warning else (),
        notes=topic_notes,
        sections=tuple(results),
    )


def _qrels_label(context: ReportContext) -> str:
    try:
        return context.qrels.label
    except ServiceError:
        return context.request.qrels


def _topics_phrase(scope: Mapping[str, Any]) -> str:
    if "topics" not in scope:
        return "no topics evaluated (the sections say why)"
    phrase = f"{len(scope['topics'])} topics"
    if scope["outside_topics"]:
        verb = "included" if scope["outside_included"] else "left out"
        phrase += f" ({len(scope['outside_topics'])} qrels topics outside the campaign {verb})"
    return phrase


def build_section(
    section: Section[Any], context: ReportContext, *, bugs: bool = False
) -> SectionResult:
    """The section built, or with the reason it cannot be; never raises, unless `bugs` and
    the section fails otherwise than by refusing (a ServiceError)."""
    try:
        return _built(section, context)
    except ServiceError as refused:
        return SectionResult(section.name, section.title, reason=str(refused))
    except Exception as error:  # a bug: said in its place, the rest of the report is built
        if bugs:
            raise
        log.exception("report section %s failed", section.name)
        reason = f"the section failed: {type(error).__name__}: {error}"
        return SectionResult(section.name, section.title, reason=reason)


def _built(section: Section[Any], context: ReportContext) -> SectionResult:
    """The section built; raises what its needs or its build raise."""
    for need in section.needs:
        NEEDS[need](context)
    data = section.build(context)
    return SectionResult(
        section.name,
        section.title,
        tables=tuple(section.tables(data)),
        plots=tuple(section.plots(data)),
        notes=tuple(section.notes(data)),
        data=section.to_dict(data),
    )


@dataclasses.dataclass(frozen=True)
class _Apart:
    """Sections being built in a child process, and how to take their results (None: the
    child failed; the caller builds them itself)."""

    sections: tuple[Section[Any], ...]
    child: Apart[dict[str, SectionResult]]

    @property
    def names(self) -> set[str]:
        return {s.name for s in self.sections}


class _NoStore:
    """The session in the child that builds sections apart: any use raises, so that a
    section that would read the store fails there and is built in this process instead."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"a section built apart used the store ({name})")


def _start_apart(chosen: Sequence[Section[Any]], context: ReportContext) -> _Apart | None:
    """Fork a child building the chosen sections that can be built apart, their needs met
    and their store reads made here first (a section whose needs or reads refuse stays
    here, to say why); None when there is none, or nothing else to build meanwhile."""
    ready = []
    for section in chosen:
        if section.apart is None:
            continue
        try:
            for need in section.needs:
                NEEDS[need](context)
            section.apart(context)
        except ServiceError:
            continue
        ready.append(section)
    if not ready or len(ready) == len(chosen):
        return None

    def work() -> dict[str, SectionResult]:
        context.session = _NoStore()  # type: ignore[assignment]  # the child's copy only
        return {section.name: build_section(section, context, bugs=True) for section in ready}

    # the sections on both sides compute tests and intervals (the summary's and the pairwise
    # tests here, Tukey HSD, power and leave-one-out there), which load scipy.stats on first
    # use (workbench.lazy): loaded once, here, not in each process (over a second of CPU)
    importlib.import_module("scipy.stats")
    return _Apart(tuple(ready), compute_apart(work))
