"""The evaluation report's request: what every entry point (`workbench evaluate`, the web page
and its downloads, the API) asks for, read by one parser from the same options.

An option (`ReportOption`) is a name, a kind and a help text; its value is parsed from the
texts given (the query string's values, or the CLI's), so a parameter means the same and is
refused with the same message everywhere. `COMMON_OPTIONS` are the report's own (qrels,
measures, test, scope ...); each section of the report (`workbench.reports.sections`) may
declare more (the collection size N, a sweep pattern ...), kept in `ReportRequest.options`.
The CLI's options, the web form and the API's parameters are generated from these lists.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from sqlalchemy.orm import Session

from workbench import stats
from workbench.services import adaptive_provenance, evaluation
from workbench.services.errors import ServiceError
from workbench.services.evaluation_inputs import DEFAULT_MEASURES, TOPIC_SETS, Scope, load_runs
from workbench.services.scope import parse_pools
from workbench.store.models import Campaign

Kind = Literal["text", "int", "float", "flag", "choice", "list"]
WORDS = re.compile(r"\s+")
WORDS_OR_COMMAS = re.compile(r"[\s,]+")
MAX_TEXT = 200  # characters of a text option


MAX_MAGNITUDE = 10**15
"""The largest number any report option takes, whatever its own bounds."""


@dataclass(frozen=True)
class ReportOption:
    """A parameter of the report: `name` (the query parameter; the CLI's --name with dashes,
    or `cli`), its `kind`, `help`, `default` and, for choices (and lists of choices), the
    `choices`; numbers may have bounds (`minimum` .. `maximum`, `open_bounds` excludes them).
    A list is split at white space (and commas when `commas`); `aliases` are other query
    parameter names read into it (`measure` repeated, beside `measures`); `label` is the web
    form's wording (default: the name with spaces)."""

    name: str
    kind: Kind
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    open_bounds: bool = False
    commas: bool = True
    aliases: tuple[str, ...] = ()
    cli: tuple[str, ...] = ()
    label: str = ""

    @property
    def caption(self) -> str:
        """The web form's label: `label`, or the name with spaces."""
        return self.label or self.name.replace("_", " ")

    def flags(self) -> tuple[str, ...]:
        """The CLI's spelling: `cli`, or --name with dashes."""
        return self.cli or ("--" + self.name.replace("_", "-"),)

    def parse(self, given: Sequence[str]) -> Any:
        """The option's value from the texts `given` (none: the default); ServiceError when
        a text is not a value of its kind."""
        texts = [t for t in given if t is not None]
        if self.kind == "flag":
            return any(t.strip().lower() in {"1", "true", "yes", "on"} for t in texts)
        if self.kind == "list":
            split = WORDS_OR_COMMAS if self.commas else WORDS
            words = tuple(w for t in texts for w in split.split(t.strip()) if w)
            for word in words:
                self._check_choice(word)
            return words or self.default
        text = next((t.strip() for t in reversed(texts) if t.strip()), "")
        if not text:
            return self.default
        if self.kind == "choice":
            self._check_choice(text)
            return text
        if self.kind == "text":
            return text[:MAX_TEXT]
        return self._number(text)

    def _check_choice(self, text: str) -> None:
        if self.choices and text not in self.choices:
            raise ServiceError(
                f"unknown {self.name.replace('_', ' ')} {text[:40]!r}; expected one of "
                f"{', '.join(self.choices)}"
            )

    def _number(self, text: str) -> int | float:
        label = self.name.replace("_", " ")
        try:
            value: int | float = int(text) if self.kind == "int" else float(text)
        except ValueError:
            kind = "an integer" if self.kind == "int" else "a number"
            raise ServiceError(f"{label} must be {kind}; got {text[:40]!r}") from None
        low, high = self.minimum, self.maximum
        below = low is not None and (value <= low if self.open_bounds else value < low)
        above = high is not None and (value >= high if self.open_bounds else value > high)
        if not math.isfinite(value) or below or above or abs(value) > MAX_MAGNITUDE:
            if high is not None:
                bounds = f"between {low:g} and {high:g}"
            elif value > MAX_MAGNITUDE:  # +inf too
                bounds = f"at most {MAX_MAGNITUDE:g}"
            elif low is None:
                bounds = f"between {-MAX_MAGNITUDE:g} and {MAX_MAGNITUDE:g}"
            else:
                bounds = f"{'above' if self.open_bounds else 'at least'} {low:g}"
            raise ServiceError(f"{label} must be {bounds}; got {text[:40]!r}")
        return value


COMMON_OPTIONS: tuple[ReportOption, ...] = (
    ReportOption("qrels", "text", "Qrels: 'final', an assessor's username, a qrels set's name "
                 "(or, from the command line, a qrels file).", default="final"),
    ReportOption("measures", "list", "trec_eval measure names or aliases (default map, P.10, "
                 "ndcg_cut.10).", default=(), commas=False, aliases=("measure",),
                 cli=("-m", "--measure")),
    ReportOption("test", "choice", "The paired test: " + "; ".join(
        f"{k}: {v.label}" for k, v in stats.PAIRED_TESTS.items()), default="t",
        choices=tuple(stats.PAIRED_TESTS)),
    ReportOption("correction", "choice", "Multiple-comparison correction: " + "; ".join(
        f"{k}: {v}" for k, v in stats.CORRECTIONS.items()), default="holm",
        choices=tuple(stats.CORRECTIONS)),
    ReportOption("alpha", "float", "Significance level.", default=0.05, minimum=0, maximum=1,
                 open_bounds=True),
    ReportOption("level", "int", "Relevance level: a grade at least this counts as relevant "
                 "(default: the campaign's).", minimum=0, cli=("-l", "--level")),
    ReportOption("topic_set", "choice", "; ".join(f"{k}: {v}" for k, v in TOPIC_SETS.items()),
                 default="all", choices=tuple(TOPIC_SETS)),
    ReportOption("outside_topics", "flag", "Also evaluate qrels topics the campaign lacks "
                 "(left out by default, and named)."),
    ReportOption("pools", "list", "The pools whose documents the qrels must label, e.g. 1,2 "
                 "(default: the pools with assignments; archived pools never)."),
    ReportOption("allow_incomplete", "flag", "Evaluate final or assessor qrels although "
                 "documents lack a label (the report says so).",
                 label="incomplete qrels: evaluate anyway"),
)  # fmt: skip


@dataclass(frozen=True)
class ReportRequest:
    """What to evaluate: the common options' values, the sections to build (`sections`;
    empty: every one) and the sections' own options (`options`, sorted (name, value) pairs);
    `allow_files` lets qrels name a file (the command line only)."""

    qrels: str = "final"
    measures: tuple[str, ...] = ()
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    level: int | None = None
    topic_set: str = "all"
    outside_topics: bool = False
    pools: tuple[int, ...] | None = None
    allow_incomplete: bool = False
    sections: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    allow_files: bool = field(default=False, compare=False)

    @property
    def chosen_measures(self) -> list[str]:
        return list(self.measures) or list(DEFAULT_MEASURES)

    def option(self, name: str, default: Any = None) -> Any:
        """A section option's value."""
        return dict(self.options).get(name, default)

    def scope(self) -> Scope:
        """What the evaluation covers (`evaluation_inputs.Scope`), runs loaded later."""
        return Scope(
            topic_set=self.topic_set,
            allow_incomplete=self.allow_incomplete,
            pools=self.pools,
            outside_topics=self.outside_topics,
        )

    def to_params(self) -> dict[str, Any]:
        """JSON-ready (a report job's parameters: the same request, the same job);
        `from_params` reads it back."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        values["options"] = [list(pair) for pair in self.options]
        return values

    @classmethod
    def from_params(cls, values: Mapping[str, Any]) -> ReportRequest:
        known = {f.name for f in fields(cls)}
        args = {k: v for k, v in values.items() if k in known}
        for name in ("measures", "sections"):
            args[name] = tuple(args.get(name, ()))
        if args.get("pools") is not None:
            args["pools"] = tuple(args["pools"])
        args["options"] = tuple((str(k), v) for k, v in args.get("options", ()))
        return cls(**args)


def parse_request(
    given: Mapping[str, Sequence[str]],
    options: Sequence[ReportOption],
    *,
    allow_files: bool = False,
) -> ReportRequest:
    """The request from the texts given per parameter name (a query string's lists, or the
    CLI's values as texts), read with `options` (COMMON_OPTIONS and the sections' own)."""
    common = {f.name for f in fields(ReportRequest)}
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for option in options:
        texts = [t for name in (option.name, *option.aliases) for t in given.get(name, ())]
        value = option.parse(texts)
        if option.name == "pools":
            value = parse_pools(value) if value else None
        (values if option.name in common else extra)[option.name] = value
    return ReportRequest(
        **values,
        options=tuple(sorted((k, v) for k, v in extra.items() if v is not None)),
        allow_files=allow_files,
    )


@dataclass(frozen=True)
class TrecOutput:
    """`trec_eval -c -q -l L -m ...`'s output for every run (`text`), and what must be said
    beside it (`notes`: topics left out or missing, incomplete qrels; `warning`)."""

    text: str
    notes: tuple[str, ...]
    warning: str | None


def trec_output(session: Session, campaign: Campaign, request: ReportRequest) -> TrecOutput:
    """The trec format of the report: the metric module's writer alone, each run evaluated
    once over the topics in the request's scope (`evaluation.trec_eval_output`); no other
    part of the report is built."""
    runs = load_runs(session, campaign)
    scope = Scope(
        runs,
        request.topic_set,
        request.allow_incomplete,
        request.pools,
        request.outside_topics,
    )
    qrels = scope.qrels(session, campaign, request.qrels, allow_files=request.allow_files)
    topics = scope.topics(session, campaign, runs, qrels)
    level = campaign.relevance_level if request.level is None else request.level
    text = evaluation.trec_eval_output(runs, qrels, request.chosen_measures, topics, level)
    missing = [
        f"{run.tag} lacks judged topic(s) {', '.join(gaps)}, scored 0."
        for run in runs
        if (gaps := [q for q in topics.evaluated if q not in run.trec_run])
    ]
    return TrecOutput(
        text,
        (*topics.notes(), *missing, *qrels.notes),
        adaptive_provenance.evaluation_warning(session, campaign),
    )
