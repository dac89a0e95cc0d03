"""Pooling strategies: pure functions from ranked runs to the documents of one topic's pool.

A topic's input is `RankedLists`: run tag -> `RankedList`, each list already in the trec_eval run
order (score descending, ties by docno descending: `ranked_list` applies the metric module's
`trec_order`, the one home of that ordering). Rank 1 is the first element.

Strategies (docs/methods.md section 1):
  depth       P = union over runs of {d : rank_r(d) <= k}                       (TREC depth-k)
  take        Take@N: for depth j = 1, 2, ...: for each run in a fixed order, take its rank-j
              document if not pooled; stop at N documents (fair=True reshuffles the run order
              at every depth: FairTake@N)
  fusion      the N documents of highest fused score s(d), ties by docno descending:
              rrf      s(d) = sum_r 1 / (k + rank_r(d)), k = 60
              combsum  s(d) = sum_r (score_r(d) - min_r) / (max_r - min_r)  (missing = 0;
                       a run whose scores are all equal gives 1 to each document it retrieved)
              borda    c candidates: rank j gives c - j + 1 points; a run's unretrieved
                       documents share its remaining points: (c - |r| + 1) / 2 each
  stratified  the depth-D universe (D = the last stratum bound), each document placed in the
              first stratum whose bound >= its best rank, and ceil(p_s * N_s) of the N_s
              documents of stratum s sampled uniformly without replacement; a document's
              inclusion probability is n_s / N_s; unsampled ones are exported as -1 (infAP).
  prior       a Poisson sample of the depth-D universe, pi ~ AP prior (`estimators.prior_pool`)

Every pooled document records its best rank, the number of runs retrieving it (within the
considered depth) and the NTCIR priority n_runs + 1 / (1 + sum of its ranks): more runs
first, then higher ranks.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar, cast

import numpy as np

from workbench.estimators import prior_pool
from workbench.trec.order import trec_order

if TYPE_CHECKING:
    from workbench.trec import Run

FUSION_METHODS = ("rrf", "combsum", "borda")
RRF_K = 60
DEFAULT_STRATA = "10:1.0,30:0.2,100:0.05"


@dataclass(frozen=True)
class RankedList:
    """One run's documents for one topic in rank order, with their scores (same order)."""

    docnos: Sequence[str]
    scores: np.ndarray

    def top(self, k: int | None) -> Sequence[str]:
        return self.docnos if k is None else self.docnos[:k]


RankedLists = Mapping[str, RankedList]


class PooledDocument(NamedTuple):
    docno: str
    best_rank: int
    n_runs: int
    priority: float
    stratum: int | None = None
    sampled: bool = True
    inclusion_prob: float = 1.0


def ranked_list(
    docnos: Sequence[str] | Sequence[bytes] | np.ndarray,
    scores: np.ndarray,
    *,
    limit: int | None = None,
) -> RankedList:
    """Order a topic's run lines with `trec_order` (first `limit` kept).

    docnos may be strings or UTF-8 bytes (a list, or a bytes array as a `trec.Run` holds).
    With a limit k, only the lines scoring at least the k-th highest score can be among the
    first k, so only they are ordered.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) < 2 or bool(np.all(scores[1:] < scores[:-1])):  # already in order, no ties
        head = docnos[:limit]
        listed = head.tolist() if isinstance(head, np.ndarray) else head
        return RankedList(_texts(listed), scores[:limit])
    candidates = np.arange(len(scores))
    if limit is not None and limit < len(scores):
        kth_highest = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        candidates = np.flatnonzero(scores >= kth_highest)
    chosen = candidates.tolist() if len(candidates) < len(scores) else range(len(scores))
    if len(docnos) and isinstance(docnos[0], str):
        docnos = [_utf8(d) for d in docnos]
    names = np.array([docnos[i] for i in chosen] or [b""], dtype=bytes)[: len(chosen)]
    order = trec_order(names, scores[candidates])[:limit]
    return RankedList(_texts(names[order].tolist()), scores[candidates][order])


def lines_needed(scores: np.ndarray, limit: int | None) -> int:
    """How many leading lines of a topic hold every line that `ranked_list` with this limit
    can keep (those scoring at least the limit-th highest score): `ranked_list` of just these
    lines is the same list, so the rest of a stored topic need not be decoded. All of them
    when a score is NaN (NaN has no place in that order)."""
    if limit is None or limit >= len(scores) or np.isnan(scores).any():
        return len(scores)
    kth_highest = np.partition(scores, len(scores) - limit)[len(scores) - limit]
    return int(np.flatnonzero(scores >= kth_highest)[-1]) + 1


def topic_ranked_lists(run: Run) -> dict[str, RankedList]:
    """Each topic of `run` -> its ranked list (`ranked_list` of the topic's lines)."""
    return {
        qid: ranked_list(run.docnos[lines].tolist(), run.scores[lines])
        for qid in run.topics()
        for lines in [run.topic_slice(qid)]
    }


def _utf8(docno: str | bytes) -> bytes:
    return docno if isinstance(docno, bytes) else docno.encode("utf-8", "surrogateescape")


def _texts(docnos: Sequence[str] | Sequence[bytes]) -> list[str]:
    """Docnos as strings; UTF-8 bytes decoded in one call (a docno holds no newline)."""
    if not docnos or isinstance(docnos[0], str):
        return list(cast(Sequence[str], docnos))
    text = b"\n".join(cast(Sequence[bytes], docnos)).decode("utf-8", "surrogateescape")
    return text.split("\n")


def topic_rng(seed: int, *keys: str | int) -> np.random.Generator:
    """A generator determined by the seed and the keys (strategy, topic, build...) alone."""
    entropy = [seed]
    for key in keys:
        digest = hashlib.blake2b(str(key).encode(), digest_size=8).digest()
        entropy.append(int.from_bytes(digest, "little"))
    return np.random.default_rng(entropy)


def describe(
    ranked_lists: RankedLists, docnos: Iterable[str], depth: int | None
) -> list[PooledDocument]:
    """PooledDocuments for `docnos` (order kept): best rank, runs and NTCIR priority.

    Only the first `depth` ranks of each run count (None: the whole list).
    """
    stats = _rank_statistics(ranked_lists, depth)
    at = {docno: i for i, docno in enumerate(stats[0])}
    return [stats[1][at[d]] for d in docnos]


def _rank_statistics(
    ranked_lists: RankedLists, depth: int | None
) -> tuple[list[str], list[PooledDocument]]:
    """Every document the runs retrieve within `depth`, by best rank then docno, and its
    PooledDocument: best rank, number of runs, priority n_runs + 1 / (1 + sum of ranks)."""
    lines = TopLines.of(ranked_lists.values(), depth)
    if not lines.names:
        return [], []
    n_runs = np.bincount(lines.document)
    rank_sum = np.bincount(lines.document, weights=lines.rank)
    best = lines.best_ranks(int(lines.rank.max()) + 1)
    order = np.argsort(best, kind="stable")  # best rank, then docno (names are sorted)
    docnos = [lines.names[i] for i in order.tolist()]
    priority = n_runs + 1.0 / (1.0 + rank_sum)
    fields = (best[order].tolist(), n_runs[order].tolist(), priority[order].tolist())
    defaults = map(itertools.repeat, PooledDocument._field_defaults.values())
    # tuple.__new__ over the columns: no Python call per document (a pool has 100,000s);
    # the columns are of one length, the defaults repeat without end
    described = list(map(_new_pooled_document, zip(docnos, *fields, *defaults, strict=False)))
    return docnos, described


@dataclass(frozen=True)
class TopLines:
    """The lines of several runs' tops as arrays: line i is document `names[document[i]]`
    (names sorted by code point, each once) at rank `rank[i]` of run `run[i]` (the runs'
    positions in the order given)."""

    names: list[str]
    document: np.ndarray
    rank: np.ndarray
    run: np.ndarray

    @classmethod
    def of(cls, rankings: Iterable[RankedList], depth: int | None) -> TopLines:
        """The tops (first `depth` documents) of `rankings`; a dict numbers the lines'
        documents in C (`map`), and only the distinct names are sorted."""
        tops = [ranking.top(depth) for ranking in rankings]
        flat = list(itertools.chain.from_iterable(tops))
        names = sorted(set(flat))
        number = dict(zip(names, range(len(names)), strict=True))
        lengths = [len(top) for top in tops]
        return cls(
            names,
            np.fromiter(map(number.__getitem__, flat), dtype=np.int64, count=len(flat)),
            np.concatenate([np.arange(1, n + 1) for n in lengths] or [np.zeros(0, np.int64)]),
            np.repeat(np.arange(len(tops)), lengths),
        )

    def best_ranks(self, unranked: int) -> np.ndarray:
        """Each document's best rank (`unranked` for none: not reached here)."""
        best = np.full(len(self.names), unranked)
        np.minimum.at(best, self.document, self.rank)
        return best


_new_pooled_document = functools.partial(tuple.__new__, PooledDocument)


def depth_pool(ranked_lists: RankedLists, depth: int) -> list[PooledDocument]:
    """Depth-k: the union of every run's top `depth` documents, by best rank then docno."""
    _positive("depth", depth)
    return _rank_statistics(ranked_lists, depth)[1]


def take_pool(
    ranked_lists: RankedLists,
    budget: int,
    *,
    run_order: Sequence[str] | None = None,
    fair: bool = False,
    rng: np.random.Generator | None = None,
) -> list[PooledDocument]:
    """Take@N round robin over runs by rank (FairTake@N: run order reshuffled at each depth).

    The fixed order is `run_order` (default: sorted tags). Result in the order taken.
    """
    _positive("budget", budget)
    if fair and rng is None:
        raise ValueError("FairTake@N needs a random generator")
    order = [tag for tag in run_order if tag in ranked_lists] if run_order else sorted(ranked_lists)
    longest = max((len(ranked_lists[tag].docnos) for tag in order), default=0)
    taken: dict[str, None] = {}
    for j in range(longest):
        if fair and rng is not None:  # fair without rng was refused above
            order = [order[i] for i in rng.permutation(len(order))]
        for tag in order:
            docnos = ranked_lists[tag].docnos
            if j < len(docnos) and docnos[j] not in taken:
                taken[docnos[j]] = None
                if len(taken) == budget:
                    return describe(ranked_lists, taken, None)
    return describe(ranked_lists, taken, None)


def fusion_scores(
    ranked_lists: RankedLists, method: str, *, rrf_k: int = RRF_K
) -> dict[str, float]:
    """The fused score s(d) of every retrieved document (formulas in the module docstring)."""
    fused: dict[str, float] = {}
    if method == "rrf":
        for ranking in ranked_lists.values():
            for rank, docno in enumerate(ranking.docnos, start=1):
                fused[docno] = fused.get(docno, 0.0) + 1.0 / (rrf_k + rank)
    elif method == "combsum":
        for ranking in ranked_lists.values():
            scores = np.asarray(ranking.scores, dtype=np.float64)
            if not len(scores):
                continue
            low, high = float(scores.min()), float(scores.max())
            normalised = (scores - low) / (high - low) if high > low else np.ones_like(scores)
            for docno, value in zip(ranking.docnos, normalised.tolist(), strict=True):
                fused[docno] = fused.get(docno, 0.0) + value
    elif method == "borda":
        candidates = {d for ranking in ranked_lists.values() for d in ranking.docnos}
        c = len(candidates)
        for ranking in ranked_lists.values():
            n = len(ranking.docnos)
            retrieved = set(ranking.docnos)
            for rank, docno in enumerate(ranking.docnos, start=1):
                fused[docno] = fused.get(docno, 0.0) + (c - rank + 1)
            share = (c - n + 1) / 2.0
            for docno in candidates - retrieved:
                fused[docno] = fused.get(docno, 0.0) + share
    else:
        raise ValueError(f"unknown fusion method {method!r}; expected one of {FUSION_METHODS}")
    return fused


def fusion_pool(
    ranked_lists: RankedLists, budget: int, *, method: str = "rrf", rrf_k: int = RRF_K
) -> list[PooledDocument]:
    """Fusion Take@N: the `budget` documents of highest fused score (ties: docno descending)."""
    _positive("budget", budget)
    fused = fusion_scores(ranked_lists, method, rrf_k=rrf_k)
    # score descending, then docno descending: sort by docno descending, then stable by score
    ranked = sorted(sorted(fused, reverse=True), key=lambda d: -fused[d])
    return describe(ranked_lists, ranked[:budget], None)


def parse_strata(text: str) -> list[tuple[int, float]]:
    """'10:1.0,30:0.2,100:0.05' -> [(10, 1.0), (30, 0.2), (100, 0.05)] (bound, sampling rate)."""
    strata: list[tuple[int, float]] = []
    for part in text.split(","):
        bound, _, rate = part.strip().partition(":")
        try:
            strata.append((int(bound), float(rate)))
        except ValueError:
            raise ValueError(
                f"bad stratum {part.strip()!r}: expected BOUND:RATE such as 10:1.0"
            ) from None
    check_strata(strata)
    return strata


def check_strata(strata: Sequence[tuple[int, float]]) -> None:
    if not strata:
        raise ValueError("stratified pooling needs at least one stratum")
    bounds = [bound for bound, _ in strata]
    if bounds[0] < 1 or any(b <= a for a, b in itertools.pairwise(bounds)):
        raise ValueError(f"stratum bounds must be positive and increasing; got {bounds}")
    if any(not 0.0 < rate <= 1.0 for _, rate in strata):
        raise ValueError("stratum sampling rates must be in (0, 1]")


def stratified_pool(
    ranked_lists: RankedLists,
    strata: Sequence[tuple[int, float]],
    rng: np.random.Generator,
    *,
    exclude: Iterable[str] = (),
) -> list[PooledDocument]:
    """Stratified sample of the depth-D universe by best rank (xinfAP design).

    Documents in `exclude` (already pooled) are left out before sampling. Strata are numbered
    from 1. Within a stratum the candidates are sorted by docno before the draw, so the sample
    depends on the generator alone.
    """
    check_strata(strata)
    excluded = set(exclude)
    universe = [p for p in depth_pool(ranked_lists, strata[-1][0]) if p.docno not in excluded]
    pooled: list[PooledDocument] = []
    lower = 0
    for number, (bound, rate) in enumerate(strata, start=1):
        members = sorted(
            (p for p in universe if lower < p.best_rank <= bound), key=lambda p: p.docno
        )
        lower = bound
        if not members:
            continue
        n_sampled = min(len(members), math.ceil(rate * len(members) - 1e-9))
        chosen = set(rng.choice(len(members), size=n_sampled, replace=False).tolist())
        probability = n_sampled / len(members)
        pooled.extend(
            p._replace(stratum=number, sampled=i in chosen, inclusion_prob=probability)
            for i, p in enumerate(members)
        )
    return sorted(pooled, key=lambda p: (p.best_rank, p.docno))


# ---------------------------------------------------------------- the strategy registry
#
# A strategy is `Strategy(name, Params, pool, help)`: its parameters are a frozen dataclass
# whose fields carry their help, choices and minimum in `field(metadata=...)`; the CLI
# options (`workbench pool build`), the web pool form and the service's validation are all
# generated from these declarations, so adding a strategy touches this module only.


def _option(help: str, **extra: Any) -> dict[str, Any]:
    """A parameter's metadata: help text, and optionally choices or minimum."""
    return {"help": help, **extra}


class PoolParams(Protocol):
    """What every strategy's parameter dataclass offers (a frozen dataclass)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def record(self) -> dict[str, Any]:
        """The JSON recorded on the pool (enough to rebuild it bit for bit)."""
        ...

    def describe(self) -> str:
        """Readable parameters: 'depth 20', 'budget 50, fusion rrf (k = 60)'."""
        ...


@dataclass(frozen=True)
class DepthParams:
    depth: int = field(
        default=10, metadata=_option("pool depth k (every run's top k documents)", minimum=1)
    )

    def record(self) -> dict[str, Any]:
        return {"depth": self.depth}

    def describe(self) -> str:
        return f"depth {self.depth}"


@dataclass(frozen=True)
class TakeParams:
    budget: int = field(metadata=_option("documents per topic", minimum=1))
    fair: bool = field(
        default=False, metadata=_option("FairTake@N: reshuffle the run order at every depth")
    )

    def record(self) -> dict[str, Any]:
        return {"budget": self.budget, "fair": self.fair}

    def describe(self) -> str:
        return f"budget {self.budget}" + (", fair run order" if self.fair else "")


@dataclass(frozen=True)
class FusionParams:
    budget: int = field(metadata=_option("documents per topic", minimum=1))
    fusion: str = field(default="rrf", metadata=_option("fusion method", choices=FUSION_METHODS))

    def record(self) -> dict[str, Any]:
        return {"budget": self.budget, "fusion": self.fusion, "rrf_k": RRF_K}

    def describe(self) -> str:
        k = f" (k = {RRF_K})" if self.fusion == "rrf" else ""
        return f"budget {self.budget}, fusion {self.fusion}{k}"


@dataclass(frozen=True)
class StratifiedParams:
    strata: str = field(
        default=DEFAULT_STRATA,
        metadata=_option("strata BOUND:RATE,... sampled by best rank, e.g. 10:1.0,30:0.2"),
    )

    def __post_init__(self) -> None:
        parse_strata(self.strata)  # ValueError on a bad stratum

    def bounds(self) -> list[tuple[int, float]]:
        return parse_strata(self.strata)

    def record(self) -> dict[str, Any]:
        parsed = self.bounds()
        return {"strata": [list(s) for s in parsed], "depth": parsed[-1][0]}

    def describe(self) -> str:
        return "strata " + ", ".join(
            f"ranks ≤ {bound}: {rate:.0%}" for bound, rate in self.bounds()
        )


@dataclass(frozen=True)
class PriorParams:
    budget: int = field(metadata=_option("documents per topic", minimum=1))
    depth: int = field(
        default=100, metadata=_option("pool depth k (every run's top k documents)", minimum=1)
    )

    def record(self) -> dict[str, Any]:
        return {"budget": self.budget, "depth": self.depth}

    def describe(self) -> str:
        return f"{self.budget} documents expected per topic, by the AP prior of depth {self.depth}"


@dataclass(frozen=True)
class PoolingContext:
    """What a strategy may use beyond its parameters: the recorded run order, the topic's
    random generator, and documents already pooled (an extension leaves them out)."""

    run_order: Sequence[str] | None
    rng: np.random.Generator
    exclude: frozenset[str] = frozenset()


P = TypeVar("P", bound=PoolParams)


@dataclass(frozen=True)
class Strategy(Generic[P]):
    """A pooling strategy: its name, parameter dataclass, pure pooling function and help."""

    name: str
    Params: type[P]
    pool: Callable[[RankedLists, P, PoolingContext], list[PooledDocument]]
    help: str

    def fields(self) -> list[Field[Any]]:
        return list(fields(self.Params))

    def parse(self, values: Mapping[str, Any]) -> P:
        """Parameters from loose values (form text, CLI options or recorded JSON); only this
        strategy's fields are read, None or '' means the default. ValueError says what is
        wrong."""
        values = _from_record(values)
        chosen: dict[str, Any] = {}
        for f in self.fields():
            value = values.get(f.name)
            if value is None or value == "":
                if f.default is MISSING:
                    raise ValueError(
                        f"the {self.name} strategy needs a positive {f.name} ({f.metadata['help']})"
                    )
                continue
            chosen[f.name] = _typed(f, value)
        return self.Params(**chosen)

    def describe(self, recorded: Mapping[str, Any]) -> str:
        """Readable parameters of a pool recorded with this strategy."""
        return self.parse(recorded).describe()


def _from_record(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded JSON in the shape of the other values (strata back to their text)."""
    values = dict(recorded)
    if isinstance(values.get("strata"), list):
        values["strata"] = ",".join(f"{int(b)}:{float(r):g}" for b, r in values["strata"])
    return values


TRUE_TEXTS = frozenset({"1", "true", "on", "yes"})


def _kind(f: Field[Any]) -> type:
    """A parameter's type (int, bool or str; annotations are strings here)."""
    return {"int": int, "bool": bool, "str": str}[str(f.type)]


def _typed(f: Field[Any], value: Any) -> Any:
    """`value` as the field's type, within its minimum and choices."""
    kind = _kind(f)
    if kind is bool:
        typed: Any = value if isinstance(value, bool) else str(value).lower() in TRUE_TEXTS
    elif kind is int:
        try:
            typed = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{f.name} must be an integer; got {value!r}") from None
        minimum = f.metadata.get("minimum")
        if minimum is not None and typed < minimum:
            raise ValueError(f"{f.name} must be a positive integer; got {typed}")
    else:
        typed = str(value).strip()
        choices = f.metadata.get("choices")
        if choices and typed not in choices:
            raise ValueError(
                f"unknown {f.metadata['help']} {typed!r}; expected one of {', '.join(choices)}"
            )
    return typed


def _depth(
    ranked_lists: RankedLists, p: DepthParams, context: PoolingContext
) -> list[PooledDocument]:
    return depth_pool(ranked_lists, p.depth)


def _take(
    ranked_lists: RankedLists, p: TakeParams, context: PoolingContext
) -> list[PooledDocument]:
    return take_pool(
        ranked_lists, p.budget, run_order=context.run_order, fair=p.fair, rng=context.rng
    )


def _fusion(
    ranked_lists: RankedLists, p: FusionParams, context: PoolingContext
) -> list[PooledDocument]:
    return fusion_pool(ranked_lists, p.budget, method=p.fusion)


def _stratified(
    ranked_lists: RankedLists, p: StratifiedParams, context: PoolingContext
) -> list[PooledDocument]:
    return stratified_pool(ranked_lists, p.bounds(), context.rng, exclude=context.exclude)


STRATEGIES: dict[str, Strategy[Any]] = {
    s.name: s
    for s in (
        Strategy("depth", DepthParams, _depth, "TREC depth-k: every run's top k documents"),
        Strategy("take", TakeParams, _take, "Take@N: round robin over the runs, N per topic"),
        Strategy("fusion", FusionParams, _fusion, "the N documents of highest fused score"),
        Strategy(
            "stratified",
            StratifiedParams,
            _stratified,
            "a stratified sample by best rank (infAP); unsampled documents export as -1",
        ),
        Strategy(
            "prior",
            PriorParams,
            lambda lists, p, c: prior_pool(lists, p.budget, p.depth, c.rng, exclude=c.exclude),
            "a sample proportional to the AP prior (statAP); unsampled documents export as -1",
        ),
    )
}


def get_strategy(name: str) -> Strategy[Any]:
    """The registered strategy of that name; ValueError names the known ones."""
    if name not in STRATEGIES:
        raise ValueError(
            f"unknown pooling strategy {name!r}; expected one of {', '.join(STRATEGIES)}"
        )
    return STRATEGIES[name]


@dataclass(frozen=True)
class OptionField:
    """One parameter as the CLI and the web form show it: the union of the strategies'
    fields of that name (the same name means the same thing in every strategy)."""

    name: str
    kind: type
    help: str
    default: Any
    choices: tuple[str, ...] | None
    minimum: int | None
    strategies: tuple[str, ...]


def option_fields() -> list[OptionField]:
    """Every strategy parameter once, in declaration order, with the strategies using it."""
    found: dict[str, OptionField] = {}
    for strategy in STRATEGIES.values():
        for f in strategy.fields():
            kind = _kind(f)
            known = found.get(f.name)
            if known is not None:
                found[f.name] = replace(known, strategies=(*known.strategies, strategy.name))
                continue
            found[f.name] = OptionField(
                f.name,
                kind,
                f.metadata["help"],
                None if f.default is MISSING else f.default,
                f.metadata.get("choices"),
                f.metadata.get("minimum"),
                (strategy.name,),
            )
    return list(found.values())


def pool_topic(
    ranked_lists: RankedLists,
    *,
    strategy: str,
    params: Mapping[str, Any],  # the pool's parameters as recorded (JSON)
    rng: np.random.Generator,
    exclude: Iterable[str] = (),
) -> list[PooledDocument]:
    """One topic's pool by a registered strategy with the recorded parameters (run_order:
    the pool's run order); documents in `exclude` are dropped (extensions)."""
    chosen = get_strategy(strategy)
    context = PoolingContext(params.get("run_order"), rng, frozenset(exclude))
    pooled = chosen.pool(ranked_lists, chosen.parse(params), context)
    return [p for p in pooled if p.docno not in context.exclude]


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value}")
