"""A campaign's evaluation report as a document: its sections, each built or unavailable
with a reason, with their tables, plots, notes and dict form; and what a section is.

`Section` is the one declaration of a report section (the registry is
`workbench.reports.sections.SECTIONS`): its name and title, what it needs from the shared
context (`services.report_context.NEEDS`), `build(context) -> data` (a ServiceError, or
`Unavailable`, says why it cannot be built), and how its data is shown: `tables(data)`,
`plots(data)`, `notes(data)` and `to_dict(data)`. The pipeline (`reports.pipeline`) builds a
`Report` of `SectionResult`s; every output (`reports.formats`, the web page) renders that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from workbench.json_output import json_safe
from workbench.reports.tables import table_json
from workbench.services.errors import ServiceError
from workbench.services.evaluation_report import ReportOption
from workbench.services.report_context import ReportContext
from workbench.tabular import Table

T = TypeVar("T")


class Unavailable(ServiceError):
    """Raised by a section's build: the section cannot be built, for this reason."""


@dataclass(frozen=True)
class Plot:
    """An SVG figure of a section: `name` is its file name's stem in a bundle."""

    name: str
    title: str
    svg: str


def _none(_data: Any) -> list[Any]:
    return []


def needs_only(_context: ReportContext) -> None:
    """`Section.apart` of a section that reads nothing from the store beyond its needs."""


@dataclass(frozen=True)
class Section(Generic[T]):
    """One section of the report (see the module's docstring). `options` are the section's
    own parameters (`services.evaluation_report.ReportOption`), offered by every entry
    point; `help` says in a line what the section shows."""

    name: str
    title: str
    help: str
    build: Callable[[ReportContext], T]
    tables: Callable[[T], Sequence[Table]]
    needs: tuple[str, ...] = ()
    plots: Callable[[T], Sequence[Plot]] = _none
    notes: Callable[[T], Sequence[str]] = _none
    to_dict: Callable[[T], Any] = json_safe
    options: tuple[ReportOption, ...] = ()
    apart: Callable[[ReportContext], Any] | None = None
    """For a section that may be built in a child process on another core while the others
    are built (`reports.pipeline`): the shared parts it reads from the store, made before
    the fork; the build then reads nothing from the store. None: built in this process."""


@dataclass(frozen=True)
class SectionResult:
    """A built section (`reason` None) or one that could not be (`reason` says why)."""

    name: str
    title: str
    reason: str | None = None
    tables: tuple[Table, ...] = ()
    plots: tuple[Plot, ...] = ()
    notes: tuple[str, ...] = ()
    data: Any = None  # the section's dict form

    @property
    def available(self) -> bool:
        return self.reason is None

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "available": self.available,
        }
        if self.reason is not None:
            document["reason"] = self.reason
        document["notes"] = list(self.notes)
        document["tables"] = [table_json(t) for t in self.tables]
        document["data"] = self.data
        return document


@dataclass(frozen=True)
class Report:
    """The whole report: the campaign, the qrels it was evaluated against, the request's
    parameters, its scope (pools, topics), warnings and notes that concern every section, and
    the sections in registry order."""

    campaign: str
    qrels: str
    params: dict[str, Any]
    scope: dict[str, Any]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    sections: tuple[SectionResult, ...] = field(default=())

    @property
    def heading(self) -> str:
        return f"Evaluation of {self.campaign} against the {self.qrels} qrels"

    def header_lines(self) -> list[str]:
        """The heading's companions, one sentence each: scope, warnings, notes."""
        lines = [f"Scope: {self.scope['description']}."]
        lines += [f"Warning: {w}" for w in self.warnings]
        return lines + list(self.notes)

    def section(self, name: str) -> SectionResult:
        return next(s for s in self.sections if s.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "campaign": self.campaign,
            "qrels": self.qrels,
            "request": self.params,
            "scope": self.scope,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "sections": [s.to_dict() for s in self.sections],
        }
