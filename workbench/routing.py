"""Assignment policies: who judges which documents of a pool (pure: no Flask, no SQL).

A policy is `Policy(name, Params, help)` in the registry POLICIES; its parameters are a frozen
dataclass whose fields carry their help and bounds in `field(metadata=...)`, from which the
CLI options (`workbench assign`), the web form (Assignments page) and the API's validation
are generated, as for the pooling strategies.

- topics: whole topics to J judges; topics largest first, each to the J least-loaded
  assessors (greedy longest-processing-time, Graham 1969).
- primary: one primary judge per topic judges all of it; a secondary judge also judges a
  seeded random sample of ceil(share x n) of its n documents (TREC's practice for
  agreement studies, Voorhees 2000).
- overlap: every document is judged by k assessors; each topic's documents, in a seeded
  random order, are cut into chunks of `chunk` documents, and each chunk goes to the k
  least-loaded assessors (the same greedy rule over chunks, so workloads stay within about
  one chunk of each other).
- adaptive: as overlap with k = 2; a document gets another judge while the grades given so
  far differ by more than `distance` and it has fewer than `max_judges` judges
  (`needs_another_judge`); the extra judges are taken by the assessors who ask for work.

Planning is incremental: `plan` sees what each document already has (`Situation`) and routes
only what is missing, so applying a policy again after a pool was extended routes only the
new documents. Assessors are named by strings (usernames); ties go to the name.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, Field, asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol

ROLES = ("judge", "primary", "secondary", "overlap", "extra", "kept")
"""What a place on a document is: a whole-topic judge, a primary or secondary judge, one of
the k judges of a document, an extra judge after a disagreement, or a document an assessor
judged before their unjudged remainder went to others (`services.remainder`: their queue then
holds only what they judged, gold documents included)."""
KEPT = "kept"


class RoutingError(ValueError):
    """A policy or its parameters cannot be used (the message says why)."""


def draw(seed: int, *keys: str | int) -> float:
    """A number in [0, 1) determined by the seed and the keys alone (blake2b)."""
    text = "\x1f".join(map(str, (seed, *keys))).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") / 2.0**64


# ---------------------------------------------------------------- parameters


def _option(help: str, **bounds: float) -> dict[str, Any]:
    return {"help": help, **bounds}


class PolicyParams(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def describe(self) -> str: ...


@dataclass(frozen=True)
class TopicsParams:
    judges_per_topic: int = field(default=2, metadata=_option("judges per topic", minimum=1))

    def describe(self) -> str:
        return f"{self.judges_per_topic} judges per topic"


@dataclass(frozen=True)
class PrimaryParams:
    secondary_share: float = field(
        default=0.1,
        metadata=_option(
            "share of each topic's documents that a secondary judge also judges",
            minimum=0.0,
            maximum=1.0,
        ),
    )

    def describe(self) -> str:
        return f"one primary judge per topic, a secondary on {self.secondary_share:.0%}"


@dataclass(frozen=True)
class OverlapParams:
    judges_per_document: int = field(default=2, metadata=_option("judges per document", minimum=1))
    chunk: int = field(default=25, metadata=_option("documents per share of a topic", minimum=1))

    def describe(self) -> str:
        return f"{self.judges_per_document} judges per document, topics in chunks of {self.chunk}"


@dataclass(frozen=True)
class AdaptiveParams:
    distance: int = field(
        default=0,
        metadata=_option(
            "another judge when the grades differ by more than this distance", minimum=0
        ),
    )
    max_judges: int = field(default=3, metadata=_option("most judges per document", minimum=2))
    chunk: int = field(default=25, metadata=_option("documents per share of a topic", minimum=1))

    @property
    def judges_per_document(self) -> int:
        return 2

    def describe(self) -> str:
        return (
            f"2 judges per document, another while their grades differ by more than "
            f"{self.distance} (at most {self.max_judges}), topics in chunks of {self.chunk}"
        )


@dataclass(frozen=True)
class Policy:
    """An assignment policy: its name, parameter dataclass, planner and help."""

    name: str
    Params: type
    plan: Callable[[Any, Situation, Sequence[str], int], Plan]
    help: str

    def fields(self) -> list[Field[Any]]:
        return list(fields(self.Params))

    def parse(self, values: Mapping[str, Any]) -> Any:
        """Parameters from loose values (form text, CLI options, JSON or the pool's record);
        only this policy's fields are read, None or '' means the default. RoutingError says
        what is wrong."""
        chosen: dict[str, Any] = {}
        for f in self.fields():
            value = values.get(f.name)
            if value is None or value == "":
                continue
            chosen[f.name] = _typed(f, value)
        return self.Params(**chosen)

    def record(self, params: Any, seed: int) -> dict[str, Any]:
        """What the pool records: the policy, its parameters and the seed."""
        return {"policy": self.name, **asdict(params), "seed": seed}


def _kind(f: Field[Any]) -> type:
    return {"int": int, "float": float}[str(f.type)]


def _typed(f: Field[Any], value: Any) -> int | float:
    """`value` as the field's type (int or float), within its bounds."""
    kind = _kind(f)
    if isinstance(value, bool):
        raise RoutingError(f"{f.name} must be a number; got {value!r}")
    try:
        typed = kind(str(value).strip()) if isinstance(value, str) else kind(value)
    except (TypeError, ValueError, OverflowError):
        raise RoutingError(
            f"{f.name} must be {'an integer' if kind is int else 'a number'}; got {value!r}"
        ) from None
    if kind is int and isinstance(value, float) and value != typed:
        raise RoutingError(f"{f.name} must be an integer; got {value!r}")
    if not math.isfinite(typed):
        raise RoutingError(f"{f.name} must be a finite number; got {value!r}")
    low, high = f.metadata.get("minimum"), f.metadata.get("maximum", 1_000_000)
    if (low is not None and typed < low) or typed > high:
        raise RoutingError(f"{f.name} must be between {low} and {high}; got {typed}")
    return typed


# ---------------------------------------------------------------- plans


@dataclass(frozen=True)
class Situation:
    """What a pool already has, as a planner sees it.

    documents: qid -> the docnos to judge; holders: (qid, docno) -> assessors with a place on
    it (a whole-topic assignment counts for every document of the topic); barred: (qid,
    docno) -> assessors who may not get it (they judged it already); roles: (qid, assessor)
    -> the role of their places on the topic; load: documents each assessor holds now.
    """

    documents: Mapping[str, Sequence[str]]
    holders: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    barred: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    roles: Mapping[tuple[str, str], str] = field(default_factory=dict)
    load: Mapping[str, int] = field(default_factory=dict)

    def held(self, qid: str, docno: str) -> frozenset[str]:
        return self.holders.get((qid, docno), frozenset())

    def taken(self, qid: str, docno: str) -> frozenset[str]:
        """Assessors who hold the document or may not get it."""
        return self.held(qid, docno) | self.barred.get((qid, docno), frozenset())

    def by_size(self) -> list[str]:
        """Topics largest first, ties by qid."""
        return sorted(self.documents, key=lambda q: (-len(self.documents[q]), q))


@dataclass(frozen=True)
class Route:
    """Give `assessor` the documents `docnos` of topic `qid` (whole: the whole topic, with no
    list of documents) in the role `role`."""

    qid: str
    assessor: str
    docnos: tuple[str, ...]
    role: str
    whole: bool = False


@dataclass(frozen=True)
class Plan:
    """The routes to add, and the documents left with fewer judges than the policy wants
    ((qid, docno) -> judges missing) because too few assessors may take them."""

    routes: tuple[Route, ...]
    short: Mapping[tuple[str, str], int]

    def load(self) -> dict[str, int]:
        """Documents each assessor receives."""
        out: dict[str, int] = defaultdict(int)
        for r in self.routes:
            out[r.assessor] += len(r.docnos)
        return dict(out)


class _Loads:
    """Loads that grow as a plan gives documents; `pick` chooses the least loaded."""

    def __init__(self, assessors: Sequence[str], load: Mapping[str, int]) -> None:
        self.assessors = list(dict.fromkeys(assessors))
        self.load = {a: int(load.get(a, 0)) for a in self.assessors}

    def pick(self, k: int, exclude: Iterable[str] = ()) -> list[str]:
        barred = set(exclude)
        free = [a for a in self.assessors if a not in barred]
        return sorted(free, key=lambda a: (self.load[a], a))[: max(k, 0)]

    def give(self, assessor: str, documents: int) -> None:
        self.load[assessor] += documents


def _require(assessors: Sequence[str], k: int, what: str) -> None:
    if len(set(assessors)) < k:
        raise RoutingError(f"{what} need at least {k} assessors; got {len(set(assessors))}")


def spread_topics(
    sizes: Mapping[str, int],
    assessors: Sequence[str],
    judges: int,
    *,
    load: Mapping[str, int],
    judging: Mapping[str, Iterable[str]],
) -> list[tuple[str, str]]:
    """(qid, assessor) pairs that give each topic `judges` judges: topics largest first (ties
    by qid), each to the least-loaded assessors not yet judging it (`judging`), a topic's
    size added to its judges' loads (Graham's longest-processing-time rule)."""
    loads = _Loads(assessors, load)
    pairs = []
    for qid in sorted(sizes, key=lambda q: (-sizes[q], q)):
        already = set(judging.get(qid, ()))
        for assessor in loads.pick(judges - len(already), already):
            pairs.append((qid, assessor))
            loads.give(assessor, sizes[qid])
    return pairs


def _topics_plan(p: TopicsParams, s: Situation, assessors: Sequence[str], seed: int) -> Plan:
    """Each topic to J judges (`spread_topics`)."""
    _require(assessors, p.judges_per_topic, f"{p.judges_per_topic} judges per topic")
    judging = {
        qid: set().union(*(s.held(qid, d) for d in docs)) if docs else set()
        for qid, docs in s.documents.items()
    }
    sizes = {qid: len(docs) for qid, docs in s.documents.items()}
    pairs = spread_topics(sizes, assessors, p.judges_per_topic, load=s.load, judging=judging)
    routes = [Route(q, a, tuple(s.documents[q]), "judge", whole=True) for q, a in pairs]
    return Plan(tuple(routes), {})


def topic_sample(seed: int, qid: str, docnos: Sequence[str], share: float) -> list[str]:
    """The seeded sample of ceil(share x n) documents of a topic: those of smallest
    `draw(seed, 'secondary', qid, docno)`, so that adding documents moves few of them."""
    if share <= 0 or not docnos:
        return []
    size = min(len(docnos), math.ceil(share * len(docnos) - 1e-9))
    return sorted(docnos, key=lambda d: (draw(seed, "secondary", qid, d), d))[:size]


def _holder_in_role(s: Situation, qid: str, role: str) -> str | None:
    found = sorted(a for (q, a), r in s.roles.items() if q == qid and r == role)
    return found[0] if found else None


def _primary_plan(p: PrimaryParams, s: Situation, assessors: Sequence[str], seed: int) -> Plan:
    """One primary judge per topic (least loaded, largest topics first) for every document
    without a judge; a secondary judge (another assessor) on the topic's seeded sample."""
    _require(assessors, 2 if p.secondary_share > 0 else 1, "a primary and a secondary judge")
    loads = _Loads(assessors, s.load)
    routes: list[Route] = []
    short: dict[tuple[str, str], int] = {}
    for qid in s.by_size():
        docs = s.documents[qid]
        primary = _holder_in_role(s, qid, "primary")
        todo = [d for d in docs if not s.held(qid, d)]
        if primary is None and todo:
            barred = set().union(*(s.taken(qid, d) for d in todo))
            chosen = loads.pick(1, barred)
            primary = chosen[0] if chosen else None
        if primary is not None:
            mine = tuple(d for d in todo if primary not in s.taken(qid, d))
            short.update({(qid, d): 1 for d in todo if d not in mine})
            if mine:
                routes.append(Route(qid, primary, mine, "primary"))
                loads.give(primary, len(mine))
        else:
            short.update({(qid, d): 1 for d in todo})
        sample = [
            d for d in topic_sample(seed, qid, docs, p.secondary_share) if len(s.held(qid, d)) < 2
        ]
        if not sample:
            continue
        secondary = _holder_in_role(s, qid, "secondary")
        if secondary is None:
            barred = set().union(*(s.taken(qid, d) for d in sample))
            chosen = loads.pick(1, barred | ({primary} if primary else set()))
            secondary = chosen[0] if chosen else None
        wanted = tuple(
            d
            for d in sample
            if secondary not in (None, primary) and secondary not in s.taken(qid, d)
        )
        for d in sample:
            if d not in wanted:
                short[qid, d] = short.get((qid, d), 0) + 1
        if wanted and secondary is not None:
            routes.append(Route(qid, secondary, wanted, "secondary"))
            loads.give(secondary, len(wanted))
    return Plan(tuple(routes), short)


def _chunks(seed: int, qid: str, docnos: Sequence[str], size: int) -> list[list[str]]:
    ordered = sorted(docnos, key=lambda d: (draw(seed, "chunk", qid, d), d))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def _overlap(
    k: int, chunk: int, role: str, s: Situation, assessors: Sequence[str], seed: int
) -> Plan:
    """Every document to k assessors: per topic, the documents short of judges (grouped by
    how many they lack) cut into seeded chunks; chunks, largest first, each to the least-
    loaded assessors who may take every document of it."""
    _require(assessors, k, f"{k} judges per document")
    units: list[tuple[str, int, list[str]]] = []  # (qid, judges missing, documents)
    for qid in sorted(s.documents):
        lacking: dict[int, list[str]] = defaultdict(list)
        for d in s.documents[qid]:
            missing = k - len(s.held(qid, d))
            if missing > 0:
                lacking[missing].append(d)
        for missing, docs in sorted(lacking.items()):
            units += [(qid, missing, c) for c in _chunks(seed, qid, docs, chunk)]
    units.sort(key=lambda u: (-len(u[2]), u[0], u[2][0]))
    loads = _Loads(assessors, s.load)
    given: dict[tuple[str, str], list[str]] = defaultdict(list)  # (qid, assessor) -> docs
    short: dict[tuple[str, str], int] = {}
    for qid, missing, docs in units:
        barred = set().union(*(s.taken(qid, d) for d in docs))
        chosen = loads.pick(missing, barred)
        for assessor in chosen:
            given[qid, assessor].extend(docs)
            loads.give(assessor, len(docs))
        if len(chosen) < missing:  # too few may take all of it: place document by document
            for d in docs:
                extra = loads.pick(missing - len(chosen), s.taken(qid, d) | set(chosen))
                for assessor in extra:
                    given[qid, assessor].append(d)
                    loads.give(assessor, 1)
                if len(chosen) + len(extra) < missing:
                    short[qid, d] = missing - len(chosen) - len(extra)
    routes = tuple(
        Route(qid, assessor, tuple(sorted(docs)), role)
        for (qid, assessor), docs in sorted(given.items())
    )
    return Plan(routes, short)


def _overlap_plan(p: OverlapParams, s: Situation, assessors: Sequence[str], seed: int) -> Plan:
    return _overlap(p.judges_per_document, p.chunk, "overlap", s, assessors, seed)


def _adaptive_plan(p: AdaptiveParams, s: Situation, assessors: Sequence[str], seed: int) -> Plan:
    if p.max_judges < 2:
        raise RoutingError("max_judges must be at least 2")
    return _overlap(2, p.chunk, "overlap", s, assessors, seed)


def needs_another_judge(grades: Sequence[int], judges: int, p: AdaptiveParams) -> bool:
    """Adaptive redundancy: a document whose `judges` judges have all given a grade (or
    'cannot judge'; `grades` holds the grades only) gets another judge while
    max(grades) - min(grades) > distance and judges < max_judges."""
    if judges >= p.max_judges or len(grades) < 2:
        return False
    return max(grades) - min(grades) > p.distance


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("topics", TopicsParams, _topics_plan, "whole topics to J judges"),
        Policy(
            "primary",
            PrimaryParams,
            _primary_plan,
            "one primary judge per topic, a secondary judge on a seeded share of it",
        ),
        Policy(
            "overlap",
            OverlapParams,
            _overlap_plan,
            "each document judged by k assessors, topics split into chunks, loads balanced",
        ),
        Policy(
            "adaptive",
            AdaptiveParams,
            _adaptive_plan,
            "two judges per document, more while they disagree, up to a maximum",
        ),
    )
}
DEFAULT_POLICY = "topics"


def get_policy(name: str) -> Policy:
    """The registered policy of that name; RoutingError names the known ones."""
    if name not in POLICIES:
        raise RoutingError(
            f"unknown assignment policy {name!r}; expected one of {', '.join(POLICIES)}"
        )
    return POLICIES[name]


def plan(
    policy: str,
    values: Mapping[str, Any],
    situation: Situation,
    assessors: Sequence[str],
    *,
    seed: int = 0,
) -> Plan:
    """The routes that give `situation` what `policy` (with parameters from `values`) wants."""
    chosen = get_policy(policy)
    return chosen.plan(chosen.parse(values), situation, assessors, seed)


def describe(recorded: Mapping[str, Any]) -> str:
    """A pool's recorded policy as people read it: 'overlap: 2 judges per document, ...'."""
    chosen = get_policy(str(recorded.get("policy", DEFAULT_POLICY)))
    return f"{chosen.name}: {chosen.parse(recorded).describe()}"


@dataclass(frozen=True)
class OptionField:
    """One parameter as the CLI and the web form show it (a name means the same thing in
    every policy that uses it)."""

    name: str
    kind: type
    help: str
    default: Any
    minimum: float | None
    maximum: float | None
    policies: tuple[str, ...]


def option_fields() -> list[OptionField]:
    """Every policy parameter once, in declaration order, with the policies using it."""
    found: dict[str, OptionField] = {}
    for chosen in POLICIES.values():
        for f in chosen.fields():
            known = found.get(f.name)
            if known is not None:
                found[f.name] = replace(known, policies=(*known.policies, chosen.name))
                continue
            found[f.name] = OptionField(
                f.name,
                _kind(f),
                f.metadata["help"],
                None if f.default is MISSING else f.default,
                f.metadata.get("minimum"),
                f.metadata.get("maximum"),
                (chosen.name,),
            )
    return list(found.values())


# ---------------------------------------------------------------- gold in a queue


def gold_count(own: int, share: float) -> int:
    """Gold documents mixed into a queue of `own` documents so that they are `share` of it:
    round(share x own / (1 - share)), half up."""
    if share <= 0 or own <= 0:
        return 0
    return math.floor(share * own / (1.0 - share) + 0.5)


def gold_for_queue(
    own: Sequence[str], candidates: Iterable[str], share: float, seed: int, *keys: str | int
) -> list[str]:
    """The gold documents of one queue: of the candidates not among its own documents, the
    `gold_count` of smallest draw(seed, 'gold', *keys, docno)."""
    mine = set(own)
    free = sorted(
        (d for d in set(candidates) if d not in mine),
        key=lambda d: (draw(seed, "gold", *keys, d), d),
    )
    return free[: gold_count(len(own), share)]


def mix_in(ordered: Sequence[str], gold: Sequence[str], seed: int, *keys: str | int) -> list[str]:
    """`ordered` with each gold document inserted at a seeded position: floor(u x (n + 1))
    of the own documents, u = draw(seed, 'gold-position', *keys, docno)."""
    at: dict[int, list[str]] = defaultdict(list)
    n = len(ordered)
    for d in sorted(gold):
        at[min(n, math.floor(draw(seed, "gold-position", *keys, d) * (n + 1)))].append(d)
    mixed: list[str] = []
    for i in range(n + 1):
        mixed += at.get(i, [])
        if i < n:
            mixed.append(ordered[i])
    return mixed
