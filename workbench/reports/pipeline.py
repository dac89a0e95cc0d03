"""The evaluation report's one pipeline: a request (parsed by one parser from every entry
point's parameters) and the registry of sections (`reports.sections.SECTIONS`) give a
`Report`, which `reports.formats` renders for the CLI, the web and the API alike.

Failure isolation: a section whose needs are missing, or whose build refuses (ServiceError) or
fails (any other exception, logged with its traceback), is in the report with its reason in
its place; the other sections are built. Only a request that cannot mean anything (an unknown
or archived pool, an unknown section, a malformed parameter) is refused as a whole.
"""

from __future__ import annotations

import dataclasses
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
) -> Report:
    """The report `request` asks for, its sections in registry order (`progress(title)`
    before each). Raises ServiceError only for a request that cannot be answered at all
    (pools that are unknown or archived)."""
    for name in request.sections:
        if name not in {s.name for s in SECTIONS}:
            raise ServiceError(f"unknown section {name!r}; expected one of "
                               + ", ".join(s.name for s in SECTIONS))  # fmt: skip
    context = ReportContext(session, campaign, request)
    pools = context.pools  # an unknown or archived pool refuses the request
    results = []
    for section in SECTIONS:
        if request.sections and section.name not in request.sections:
            continue
        progress(section.title)
        results.append(build_section(section, context))
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
        return "topics unknown (the qrels could not be read)"
    phrase = f"{len(scope['topics'])} topics"
    if scope["outside_topics"]:
        verb = "included" if scope["outside_included"] else "left out"
        phrase += f" ({len(scope['outside_topics'])} qrels topics outside the campaign {verb})"
    return phrase


def build_section(section: Section[Any], context: ReportContext) -> SectionResult:
    """The section built, or with the reason it cannot be; never raises."""
    try:
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
    except ServiceError as refused:
        return SectionResult(section.name, section.title, reason=str(refused))
    except Exception as error:  # a bug: said in its place, the rest of the report is built
        log.exception("report section %s failed", section.name)
        reason = f"the section failed: {type(error).__name__}: {error}"
        return SectionResult(section.name, section.title, reason=reason)
