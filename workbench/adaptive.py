"""Adaptive judging: which pooled document to judge next, from the judgements made so far.

An adaptive *method* (Losada et al.'s "document adjudication methods"; the pooling
*strategies* of `workbench.pooling` are another registry, and so are the click preference
strategies of `workbench.clicks`) orders a pool's documents for judging.

One protocol for every method (docs/methods.md section 9): a topic's `TopicPool` (the
depth-k pool of the runs, and each run's ranking of it) and the judgements so far, in the
order they were made, give the next document(s) to judge. A method's state is a function of
the judgements alone, so the same judgements always give the same next document: the live
judging service rebuilds it from the stored judgements; the simulator keeps one
`MethodState` per topic and feeds it one judgement at a time (the same answers, without
the replay).

A pool may hold a reserved probability sample judged apart from the method (`free`
documents): the method never sees their labels until it picks one itself; then it reads the
label at no cost and picks again. So the documents the method chooses do not depend on the
sample, and the sample's part among the unchosen documents stays a uniform sample of them
(`workbench.estimators`).

Notation: runs r (tags sorted; "first" below means first in that order), the run's list
L_r = its documents within the pool depth, in trec order (`pooling.ranked_list`); a run's
*judged prefix* is the longest prefix of L_r whose documents are all judged, p_r its length,
and x_r / n_r the relevant / judged documents in it. Pulling a run judges the first document
of L_r that is neither judged nor already handed out. A document judged through one run
counts for every run whose judged prefix it extends (our reading, as in Losada et al.'s
bandits, where documents already judged are observations at no cost).

Methods (`METHODS`):
  depth    the depth-k pool in order of best rank, then docno (`pooling.depth_pool`): judging
           a budget b judges the first b documents of the depth-1, depth-2, ... pools.
  take     Take@N round robin (`pooling.take_pool`, runs in tag order).
  rrf, combsum, borda
           fusion Take@N: fused score descending (`pooling.fusion_pool`).
  mtf-cormack
           move-to-front as Cormack, Palmer & Clarke (SIGIR 1998) describe it: every run
           starts at priority 0 and judging takes the run at the front; a non-relevant
           document lowers the run's priority by 1, a relevant one raises it to the highest
           priority of any run and moves it to the front (among equal priorities, the run
           with the latest relevant document first; then the first run).
  mtf      move-to-front with a cumulative penalty (VisualPool's form, docs/methods.md 9.2):
           pull the run of highest priority -(non-relevant documents in its judged prefix),
           ties to the first run. A relevant document keeps the run's priority (it is not
           raised), so a run never recovers the penalties of its earlier misses.
  hedge    Hedge (Aslam, Pavlu & Savell, CIKM 2003): rank gain g(rho) = ln D - ln rho; a
           document a run does not retrieve within the depth gets the mean gain of the ranks
           |L_r|+1..D (0 when |L_r| = depth). Run weights w_r = beta^L_r / sum beta^L; judge
           argmax_d sum_r w_r g_r(d) (ties to the earlier document of the depth order); then
           L_r += g_r(d)/2 when d is non-relevant, L_r -= g_r(d)/2 when relevant. Defaults,
           not the paper's: beta = 0.8 (VisualPool's), D = depth + 1 (ours, so that the last
           rank gains ln((k+1)/k) > 0), and the unretrieved gain above (VisualPool's).
  ts       Thompson sampling / BLA (Losada, Parapar & Barreiro, SAC 2016, IP&M 2017): draw
           theta_r ~ Beta(1 + x_r, 1 + n_r - x_r), pull argmax theta_r. The generator is
           seeded by (seed, topic, number of judgements), so replays draw the same.
  mm       MaxMean (Losada et al. 2016, 2017): pull argmax (1 + x_r) / (2 + n_r), the Beta
           posterior mean (ties: first). The default of live adaptive pools.
  mm-discounted
           MaxMean on discounted counts, our variant (not the published MM-NS of Losada et
           al. 2017, whose update we have not reproduced): x_r = sum_{k<p_r} gamma^(p_r-1-k)
           rel_k, n_r = sum_{k<p_r} gamma^(p_r-1-k), gamma = 0.9 (our default), so the
           documents deepest in the judged prefix weigh most.
  al       a simplified continuous active learning, after Cormack & Grossman (SIGIR 2014):
           a logistic regression on TF-IDF of the pooled documents' texts, trained on the
           judgements, ranks the unjudged pool; retrained after batches of growing size (1,
           then each batch ceil(b/10) larger than the last); before both labels are seen, the
           depth order. Not their BMI: no seed document written from the topic and no
           presumed-non-relevant random sample in training. Needs the documents' texts and
           scikit-learn (the optional extra `al`).

Judgements of documents outside the pool are ignored. A pool whose documents are all judged
returns no next document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench import pooling
from workbench.pooling import RankedList, RankedLists

Judgement = tuple[str, bool]  # (docno, relevant)

HEDGE_BETA = 0.8  # default (VisualPool's), not the paper's
DISCOUNT_GAMMA = 0.9  # mm-discounted's default (ours)
DEFAULT_METHOD = "mm"  # live adaptive pools' default
RENAMED = {"mm-ns": "mm-discounted"}  # old name -> new name (pools record the new one)


class MethodError(ValueError):
    """A method that cannot run here (unknown name, missing texts or optional package)."""


@dataclass(frozen=True)
class TopicPool:
    """The depth-k pool of one topic: documents in depth order, and each run's list of them.

    `lists[i]` holds the pool indices of run `tags[i]`'s documents at ranks 1..len.
    """

    docnos: tuple[str, ...]
    tags: tuple[str, ...]
    lists: tuple[np.ndarray, ...]
    depth: int
    ranked_lists: RankedLists = field(repr=False, compare=False)
    at: Mapping[str, int] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def build(cls, ranked_lists: RankedLists, depth: int) -> TopicPool:
        """The pool of `ranked_lists` (run tag -> `pooling.RankedList`) cut at `depth`."""
        cut = {
            tag: RankedList(r.docnos[:depth], np.asarray(r.scores)[:depth])
            for tag, r in ranked_lists.items()
        }
        docnos = tuple(p.docno for p in pooling.depth_pool(cut, depth)) if cut else ()
        at = {d: i for i, d in enumerate(docnos)}
        tags = tuple(sorted(cut))
        lists = tuple(np.array([at[d] for d in cut[t].docnos], dtype=np.int64) for t in tags)
        return cls(docnos, tags, lists, depth, cut, at)

    def __len__(self) -> int:
        return len(self.docnos)

    def index(self, docno: str) -> int | None:
        return self.at.get(docno)


class MethodState:
    """One topic's judging under a method: `observe` judgements, `take` the next ones.

    Subclasses implement `_pick` (the next pool index, or None) and may react in `_update`.
    """

    def __init__(self, pool: TopicPool) -> None:
        self.pool = pool
        self.judged = np.zeros(len(pool), dtype=bool)  # judged or handed out
        self.labels: dict[int, bool] = {}
        self.order: list[int] = []  # judged pool indices in the order judged
        self.free_picks: list[str] = []  # reserved-sample documents picked (see `take`)
        self.picks: list[str] = []  # every document `take` picked, free ones included

    @property
    def n_judged(self) -> int:
        return len(self.labels)

    def observe(self, docno: str, relevant: bool) -> None:
        """Record a judgement (a document outside the pool, or judged again, is ignored)."""
        i = self.pool.index(docno)
        if i is None or i in self.labels:
            return
        self.judged[i] = True
        self.labels[i] = bool(relevant)
        self.order.append(i)
        self._update(i, bool(relevant))

    def take(self, n: int = 1, *, free: Mapping[str, bool] | None = None) -> list[str]:
        """The next `n` documents to judge (fewer when the pool runs out).

        Each is handed out before the next is chosen, without a label: a batch for one
        assessor, not n copies of the same document. A pick among `free` (docno -> relevant:
        a reserved sample, judged already) is observed at once, recorded in `free_picks`,
        and does not count towards n.
        """
        chosen: list[str] = []
        while len(chosen) < n:
            i = self._pick()
            if i is None:
                break
            docno = self.pool.docnos[i]
            self.picks.append(docno)
            if free is not None and docno in free:
                self.free_picks.append(docno)
                self.observe(docno, free[docno])
                continue
            self.judged[i] = True
            self._handed_out(i)
            chosen.append(docno)
        return chosen

    def _pick(self) -> int | None:
        raise NotImplementedError

    def _update(self, i: int, relevant: bool) -> None:
        """React to the judgement of pool index i (default: nothing)."""

    def _handed_out(self, i: int) -> None:
        """React to index i being handed out without a label (default: nothing)."""


class FixedOrderState(MethodState):
    """A non-adaptive method: a fixed order of the pool, judged from the top."""

    def __init__(self, pool: TopicPool, order: Sequence[int]) -> None:
        super().__init__(pool)
        self.fixed = list(order)
        self.cursor = 0

    def _pick(self) -> int | None:
        while self.cursor < len(self.fixed) and self.judged[self.fixed[self.cursor]]:
            self.cursor += 1
        return self.fixed[self.cursor] if self.cursor < len(self.fixed) else None


class PrefixState(MethodState):
    """Runs as arms: each run's judged prefix and its (discounted) counts x_r, n_r.

    gamma = 1 gives plain counts. Subclasses choose the arm from `x`, `n` and `prefix`.
    """

    gamma = 1.0

    def __init__(self, pool: TopicPool) -> None:
        super().__init__(pool)
        m = len(pool.tags)
        self.prefix = np.zeros(m, dtype=np.int64)
        self.x = np.zeros(m)
        self.n = np.zeros(m)
        self.nonrel = np.zeros(m)  # plain count of non-relevant documents in the prefix
        self.cursor = np.zeros(m, dtype=np.int64)  # first not handed-out position
        self.exhausted = np.array([len(lst) == 0 for lst in pool.lists])
        # pool document -> (run, position in the run's list), for the prefix extension
        self.holders: list[list[tuple[int, int]]] = [[] for _ in range(len(pool))]
        for r, lst in enumerate(pool.lists):
            for k, d in enumerate(lst.tolist()):
                self.holders[d].append((r, k))

    def _update(self, i: int, relevant: bool) -> None:
        for r, k in self.holders[i]:
            if k == self.prefix[r]:
                self._extend(r, self.pool.lists[r])

    def _extend(self, r: int, lst: np.ndarray) -> None:
        p = int(self.prefix[r])
        while p < len(lst) and int(lst[p]) in self.labels:
            relevant = self.labels[int(lst[p])]
            self.x[r] = self.gamma * self.x[r] + relevant
            self.n[r] = self.gamma * self.n[r] + 1
            self.nonrel[r] += not relevant
            self._counted(r, relevant)
            p += 1
        self.prefix[r] = p

    def _counted(self, r: int, relevant: bool) -> None:
        """React to a document joining run r's judged prefix (default: nothing)."""

    def _next_of(self, r: int) -> int | None:
        """Run r's first document neither judged nor handed out (None: run exhausted)."""
        lst = self.pool.lists[r]
        c = max(int(self.cursor[r]), int(self.prefix[r]))
        while c < len(lst) and self.judged[lst[c]]:
            c += 1
        self.cursor[r] = c
        if c == len(lst):
            self.exhausted[r] = True
            return None
        return int(lst[c])

    def _arm_values(self) -> np.ndarray:
        raise NotImplementedError

    def _pick(self) -> int | None:
        while not self.exhausted.all():
            values = np.where(self.exhausted, -np.inf, self._arm_values())
            r = int(np.argmax(values))  # ties: the first run
            i = self._next_of(r)
            if i is not None:
                return i
        return None


class MoveToFrontState(PrefixState):
    def _arm_values(self) -> np.ndarray:
        return -self.nonrel


class CormackMoveToFrontState(PrefixState):
    """Priorities p_r (0 at start); the front among equal priorities is the run with the
    latest relevant document (`front` stamps), then the first run."""

    def __init__(self, pool: TopicPool) -> None:
        super().__init__(pool)
        self.priority = np.zeros(len(pool.tags))
        self.front = np.zeros(len(pool.tags))
        self.clock = 0

    def _counted(self, r: int, relevant: bool) -> None:
        if relevant:
            self.clock += 1
            self.priority[r] = self.priority.max()
            self.front[r] = self.clock
        else:
            self.priority[r] -= 1

    def _arm_values(self) -> np.ndarray:
        return self.priority + self.front / (self.clock + 1)  # priorities are integers


class MaxMeanState(PrefixState):
    def _arm_values(self) -> np.ndarray:
        return (1 + self.x) / (2 + self.n)


class DiscountedMaxMeanState(MaxMeanState):
    gamma = DISCOUNT_GAMMA


class ThompsonState(PrefixState):
    def __init__(self, pool: TopicPool, seed: int, qid: str) -> None:
        super().__init__(pool)
        self.seed, self.qid = seed, qid
        self.draws = 0

    def _arm_values(self) -> np.ndarray:
        rng = pooling.topic_rng(self.seed, "ts", self.qid, self.n_judged, self.draws)
        self.draws += 1
        return rng.beta(1 + self.x, 1 + self.n - self.x)

    def _update(self, i: int, relevant: bool) -> None:
        super()._update(i, relevant)
        self.draws = 0


class HedgeState(MethodState):
    def __init__(self, pool: TopicPool, beta: float = HEDGE_BETA) -> None:
        super().__init__(pool)
        self.beta = beta
        self.gains = hedge_gains(pool)
        self.loss = np.zeros(len(pool.tags))

    def weights(self) -> np.ndarray:
        """w_r = beta^L_r / sum beta^L (computed from L - min L, which cancels)."""
        w = self.beta ** (self.loss - self.loss.min()) if len(self.loss) else self.loss
        return w / w.sum() if len(w) else w

    def _update(self, i: int, relevant: bool) -> None:
        self.loss += (-0.5 if relevant else 0.5) * self.gains[:, i]

    def _pick(self) -> int | None:
        if self.judged.all():
            return None
        scores = self.weights() @ self.gains
        scores[self.judged] = -np.inf
        return int(np.argmax(scores))  # ties: the earlier document of the depth order


def hedge_gains(pool: TopicPool) -> np.ndarray:
    """g_r(d) for every run (rows, tag order) and pool document (columns, pool order)."""
    big_d = pool.depth + 1
    gains = np.zeros((len(pool.tags), len(pool)))
    for r, lst in enumerate(pool.lists):
        missing = np.arange(len(lst) + 1, big_d + 1)
        gains[r, :] = (math.log(big_d) - np.log(missing)).mean() if len(missing) else 0.0
        gains[r, lst] = math.log(big_d) - np.log(np.arange(1, len(lst) + 1))
    return gains


class ActiveLearningState(MethodState):
    def __init__(self, pool: TopicPool, texts: Mapping[str, str]) -> None:
        super().__init__(pool)
        require_scikit_learn()
        from sklearn.feature_extraction.text import TfidfVectorizer

        missing = [d for d in pool.docnos if d not in texts]
        if missing:
            raise MethodError(
                f"active learning needs the text of every pooled document; "
                f"{len(missing)} have none (e.g. {missing[0]!r})"
            )
        self.features: Any = (
            TfidfVectorizer(sublinear_tf=True).fit_transform([texts[d] for d in pool.docnos])
            if len(pool)
            else None
        )
        self.ranking: list[int] = list(range(len(pool)))  # the depth order until trained
        self.cursor = 0
        self.trained = False
        self.next_training = 1
        self.batch = 1

    def _update(self, i: int, relevant: bool) -> None:
        if self.trained and self.n_judged < self.next_training:
            return
        labels = [self.labels[j] for j in self.order]
        if len(set(labels)) < 2:
            return
        self.trained = True
        self.batch += math.ceil(self.batch / 10)
        self.next_training = self.n_judged + self.batch
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0, solver="liblinear")
        model.fit(self.features[self.order], labels)
        scores = model.decision_function(self.features)
        self.ranking = np.argsort(-scores, kind="stable").tolist()
        self.cursor = 0

    def _pick(self) -> int | None:
        while self.cursor < len(self.ranking) and self.judged[self.ranking[self.cursor]]:
            self.cursor += 1
        return self.ranking[self.cursor] if self.cursor < len(self.ranking) else None


def require_scikit_learn() -> None:
    try:
        import sklearn  # noqa: F401
    except ModuleNotFoundError:
        raise MethodError(
            "the 'al' method needs scikit-learn: pip install 'workbench[al]'"
        ) from None


@dataclass(frozen=True)
class Method:
    """A named method: how to start its state on a topic's pool."""

    name: str
    description: str
    adaptive: bool
    start: Callable[..., MethodState]
    needs_texts: bool = False


def _fixed(order: Callable[[TopicPool], Iterable[str]]) -> Callable[..., MethodState]:
    def start(pool: TopicPool, **_: object) -> MethodState:
        return FixedOrderState(pool, [pool.at[d] for d in order(pool)])  # pool docnos only

    return start


def _take_order(pool: TopicPool) -> list[str]:
    return [p.docno for p in pooling.take_pool(pool.ranked_lists, len(pool))] if len(pool) else []


def _fusion_order(fusion: str) -> Callable[[TopicPool], list[str]]:
    def order(pool: TopicPool) -> list[str]:
        if not len(pool):
            return []
        return [p.docno for p in pooling.fusion_pool(pool.ranked_lists, len(pool), method=fusion)]

    return order


def _active_learning(pool: TopicPool, *, texts: Mapping[str, str] | None = None, **_: object):
    if texts is None:
        raise MethodError("active learning needs the documents' texts")
    return ActiveLearningState(pool, texts)


METHODS: dict[str, Method] = {
    s.name: s
    for s in (
        Method(
            "depth", "depth-k order: best rank, then docno", False, _fixed(lambda pool: pool.docnos)
        ),
        Method("take", "Take@N round robin over the runs", False, _fixed(_take_order)),
        Method("rrf", "fusion Take@N, reciprocal rank fusion", False, _fixed(_fusion_order("rrf"))),
        Method("combsum", "fusion Take@N, CombSUM", False, _fixed(_fusion_order("combsum"))),
        Method("borda", "fusion Take@N, Borda count", False, _fixed(_fusion_order("borda"))),
        Method(
            "mtf-cormack",
            "move-to-front, Cormack et al.'s rule (1998): a relevant document moves the run "
            "to the front",
            True,
            lambda pool, **_: CormackMoveToFrontState(pool),
        ),
        Method(
            "mtf",
            "move-to-front with a cumulative penalty (VisualPool's variant of Cormack et al. 1998)",
            True,
            lambda pool, **_: MoveToFrontState(pool),
        ),
        Method(
            "hedge",
            "Hedge (Aslam et al. 2003), default beta 0.8",
            True,
            lambda pool, **_: HedgeState(pool),
        ),
        Method(
            "ts",
            "Thompson sampling bandit (Losada et al. 2016)",
            True,
            lambda pool, *, seed=0, qid="", **_: ThompsonState(pool, seed, qid),
        ),
        Method(
            "mm",
            "MaxMean bandit (Losada et al. 2016)",
            True,
            lambda pool, **_: MaxMeanState(pool),
        ),
        Method(
            "mm-discounted",
            "MaxMean on counts discounted by 0.9 per rank (our variant, not the published MM-NS)",
            True,
            lambda pool, **_: DiscountedMaxMeanState(pool),
        ),
        Method(
            "al",
            "simplified continuous active learning (logistic regression on TF-IDF; not BMI)",
            True,
            _active_learning,
            needs_texts=True,
        ),
    )
}


ADAPTIVE = tuple(name for name, s in METHODS.items() if s.adaptive)  # for live pools


def renamed_message(name: str) -> str:
    """What to say of a method's old name (`RENAMED`)."""
    return (
        f"the adaptive method {name!r} is now called {RENAMED[name]!r} (our discounted "
        "variant of MaxMean, not the published MM-NS)"
    )


def get_method(name: str) -> Method:
    if name in RENAMED:
        raise MethodError(renamed_message(name))
    if name not in METHODS:
        raise MethodError(f"unknown adaptive method {name!r}; expected one of {', '.join(METHODS)}")
    return METHODS[name]


def start_state(
    method: str,
    pool: TopicPool,
    *,
    seed: int = 0,
    qid: str = "",
    texts: Mapping[str, str] | None = None,
) -> MethodState:
    """A fresh state of `method` on `pool` (texts: docno -> text, for 'al')."""
    return get_method(method).start(pool, seed=seed, qid=qid, texts=texts)


@dataclass(frozen=True)
class Choices:
    """What a method chooses next: documents to reveal, reserved-sample documents it picked
    on the way (judged already: they cost nothing), and both in the order picked."""

    reveal: list[str]
    free: list[str]
    order: list[str]


def choose(
    method: str,
    pool: TopicPool,
    judgements: Iterable[Judgement],
    n: int = 1,
    *,
    free: Mapping[str, bool] | None = None,
    seed: int = 0,
    qid: str = "",
    texts: Mapping[str, str] | None = None,
) -> Choices:
    """The next `n` documents to reveal after `judgements` (docno, relevant: every document
    the method chose so far, free ones included, in the order chosen); `free` maps the
    reserved sample's documents the method has not chosen yet to their labels."""
    state = start_state(method, pool, seed=seed, qid=qid, texts=texts)
    for docno, relevant in judgements:
        state.observe(docno, relevant)
    reveal = state.take(n, free=free)
    return Choices(reveal, state.free_picks, state.picks)


def next_documents(
    method: str,
    pool: TopicPool,
    judgements: Iterable[Judgement],
    n: int = 1,
    *,
    seed: int = 0,
    qid: str = "",
    texts: Mapping[str, str] | None = None,
) -> list[str]:
    """The next `n` documents to judge after `judgements` (docno, relevant), in judging order,
    for a pool without a reserved sample."""
    return choose(method, pool, judgements, n, seed=seed, qid=qid, texts=texts).reveal


def remaining_relevant(labels: Sequence[bool], unjudged: int, *, window: int = 20) -> float | None:
    """Relevant documents expected among `unjudged` pool documents, from the yield curve.

    With x1 the relevant documents among the last w judgements and x0 among the w before them
    (w = `window`, or half the judgements when there are fewer than 2 w), the yield
    y = x1 / w is taken to decay geometrically by q = min(1, ((x1 + 0.5) / (x0 + 0.5))^(1/w))
    per judgement, so the estimate is y q (1 - q^U) / (1 - q), or y U when q = 1 (U unjudged).
    An extrapolation, not a sample-based estimate: None with fewer than two judgements.
    """
    n = len(labels)
    if n < 2:
        return None
    w = min(window, n // 2)
    x1 = sum(labels[n - w :])
    x0 = sum(labels[n - 2 * w : n - w])
    y = x1 / w
    q = min(1.0, ((x1 + 0.5) / (x0 + 0.5)) ** (1 / w))
    if q >= 1.0:
        return y * unjudged
    return y * q * (1 - q**unjudged) / (1 - q)
