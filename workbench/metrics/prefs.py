"""trec_eval's preference measures: ``-m all_prefs`` with ``-R prefs`` or ``-R qrels_prefs``.

Relevance information is a list of :class:`~workbench.trec.PrefsLine` ``(qid, jg, jsg, docno,
rel)``.  Within one judgment sub-group (JSG) a document is preferred to every document with a
lower ``rel``; a judgment group (JG) is one consistent set of preferences (one user, one
information need); different JGs may contradict each other.

Per topic, as trec_eval 10 computes it:

* The run is ranked by score descending, ties by docno **ascending** (``form_prefs_counts.c``
  breaks ties the other way round from every other trec_eval measure), then cut at ``-M``.
  Judged retrieved documents get ids 0..NJR-1 in rank order, judged unretrieved ones
  NJR..NJ-1 in docno order; a smaller id is "ranked higher".
* A JG with one JSG is a chain of equivalence classes (ECs) of equal ``rel``; every document of a
  higher EC is preferred to every document of a lower one.  A JG with several JSGs is a
  preference graph closed under transitivity (A>B in one JSG and B>C in another imply A>C).
* A preference A>B is *retrieved* when both are retrieved (fulfilled when A is ranked above B),
  *implied* when only one is (fulfilled when that one is A), *not occurring* when neither is.
* ``rel > 0`` marks a relevant document, ``rel == 0`` a non-relevant one (``_Rnonrel``).

Measures (``ful``/``poss`` = fulfilled/possible preferences; ``_ret`` counts retrieved
preferences only, ``_imp`` retrieved and implied, the plain ones everything):

* ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``: counts; the
  summary is their sum over topics.
* ``prefs_simp*``: ful / poss over all JGs together.
* ``prefs_avgjg*``: mean over JGs of ful_jg / poss_jg.
* ``prefs_pair*``: mean over document pairs of (preferences the ranking fulfils) / (preferences
  stated on the pair) -- pairs judged by several JGs count once.
* ``prefs_avgjg_Rnonrel*``: like ``prefs_avgjg`` but as if each JG had as many non-relevant
  documents as relevant ones (R): with N < R non-relevant, R*(R-N) fulfilled preferences are
  added; with N > R, only the R best ranked non-relevant documents are kept.

trec_eval's quirks are kept on purpose (they decide printed digits): a JG with 0/0 preferences
makes ``_Rnonrel`` NaN and hence 0 for the topic; the ``_Rnonrel`` recount of an EC judgment
group also pairs the last EC with its own R first documents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.metrics.evaluation import CannotEvaluate
from workbench.metrics.names import MeasureError
from workbench.trec import PrefsLine, Qrels, Run, TrecFormatError
from workbench.trec.order import first_repeated, strcmp_key

COUNT_MEASURES = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
RATIO_MEASURES = (
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
PREFS_MEASURES = COUNT_MEASURES + RATIO_MEASURES
SUMMARY_ONLY = ("runid", "num_q")
NICKNAMES = {
    "all_prefs": SUMMARY_ONLY + PREFS_MEASURES,
    "prefs": SUMMARY_ONLY + PREFS_MEASURES[:6],
}

Line = tuple[str, str, int | float | str]


class PreferenceError(TrecFormatError):
    """Preferences trec_eval refuses: a document at two levels of one JSG, or contradictions."""

    def __init__(self, qid: str, jg: str, problem: str) -> None:
        super().__init__("<prefs>", 0, f"topic {qid} judgment group {jg}", problem)


class TopicProblem(Exception):
    """Raised while evaluating one topic where trec_eval stops ("Can't calculate measure")."""


class UnevaluableTopic(CannotEvaluate):
    """A topic trec_eval cannot evaluate; ``lines`` are the per-topic lines printed before it
    (trec_eval prints them, then exits with status 4)."""

    def __init__(self, qid: str, reason: str, measure: str, lines: list[Line]) -> None:
        self.lines = lines
        super().__init__(qid, reason, measure)


def check_no_duplicates(qid: str, ranked_docnos: Sequence[bytes]) -> None:
    """trec_eval's check on the ranked (``-M``-cut) docnos of an evaluated topic."""
    repeated = first_repeated(ranked_docnos)
    if repeated is not None:
        docno = repeated.decode("utf-8", "surrogateescape")
        raise TopicProblem(f"docno {docno!r} appears twice in the run (duplicate docs)")


# --------------------------------------------------------------------------- shared helpers


def topics_to_evaluate(
    judged_topics: Sequence[str], run: Run, *, average_over_all_topics: bool, compat: int = 10
) -> tuple[list[str], list[str]]:
    """(topics trec_eval evaluates in its order, hidden ones): judged topics (``strcmp``
    order) that the run has; with ``-c`` every judged topic (a missing one is evaluated as an
    empty ranking).  trec_eval 9.0.8 (``compat=9``) never evaluates a missing topic: with
    ``-c`` it is hidden, listed last, and adds 0 to the averages."""
    ordered = sorted(set(judged_topics), key=strcmp_key)
    present = [qid for qid in ordered if qid in run]
    if not average_over_all_topics:
        return present, []
    if compat >= 10:
        return ordered, []
    missing = [qid for qid in ordered if qid not in run]
    return present + missing, missing


def split_measure(argument: str) -> tuple[str, str | None]:
    """``name.params`` -> (name, params); trec_eval rejects an empty parameter list."""
    name, dot, params = argument.partition(".")
    if dot and not params:
        raise MeasureError(f"improper measure {argument!r}: empty parameter list after '.'")
    return name, (params if dot else None)


def summary_lines(
    names: Sequence[str],
    per_topic: list[dict[str, int | float]],
    run: Run,
    *,
    summed: Sequence[str] = (),
) -> list[Line]:
    """The ``all`` lines: runid, num_q, then each measure's mean over topics (``summed`` ones:
    their sum), accumulated in topic order as trec_eval does."""
    lines: list[Line] = []
    for name in names:
        if name == "runid":
            lines.append((name, "all", run.tag))
        elif name == "num_q":
            lines.append((name, "all", len(per_topic)))
        elif name in summed:
            lines.append((name, "all", sum(int(values[name]) for values in per_topic)))
        else:
            total = 0.0
            for values in per_topic:
                total += values[name]
            lines.append((name, "all", total / len(per_topic) if per_topic else 0.0))
    return lines


@dataclass(frozen=True)
class TrecEvalFlags:
    """The trec_eval flags that every ``-R`` format's evaluator takes: ``-q`` (per_topic),
    ``-c`` (average_over_all_topics), ``-M`` (max_results), ``-l`` (relevance_level) and the
    version whose conventions to follow (compat: 10, or 9 for 9.0.8)."""

    per_topic: bool = False
    average_over_all_topics: bool = False
    max_results: int | None = None
    relevance_level: int = 1
    compat: int = 10


def assemble(
    names: Sequence[str],
    judged_topics: Sequence[str],
    evaluate_topic: Callable[[str], dict[str, int | float]],
    run: Run,
    flags: TrecEvalFlags,
    *,
    summed: Sequence[str] = (),
) -> list[Line]:
    """Per-topic blocks (``flags.per_topic``) then the summary, in trec_eval's print order,
    over the :func:`topics_to_evaluate`; hidden topics are not evaluated nor printed and add 0
    (trec_eval 9.0.8's ``-c``).

    A topic trec_eval cannot evaluate raises :class:`UnevaluableTopic` with the lines before it.
    """
    topics, hidden = topics_to_evaluate(
        judged_topics,
        run,
        average_over_all_topics=flags.average_over_all_topics,
        compat=flags.compat,
    )
    per_topic_values: list[dict[str, int | float]] = []
    lines: list[Line] = []
    for qid in topics:
        if qid in hidden:
            per_topic_values.append({name: 0 for name in names})
            continue
        try:
            values = evaluate_topic(qid)
        except (TopicProblem, PreferenceError) as problem:
            measure = next((n for n in names if n not in SUMMARY_ONLY), "")
            reason = problem.expected if isinstance(problem, PreferenceError) else str(problem)
            raise UnevaluableTopic(qid, reason, measure, lines) from None
        per_topic_values.append(values)
        if flags.per_topic:
            lines.extend((name, qid, values[name]) for name in names if name not in SUMMARY_ONLY)
    return lines + summary_lines(names, per_topic_values, run, summed=summed)


def _ratio(numerator: float, denominator: float) -> float:
    """C's double division, where 0/0 is NaN (and NaN > 0 is false)."""
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator


# --------------------------------------------------------------------------- qrels as prefs


def prefs_from_qrels(qrels: Qrels) -> list[PrefsLine]:
    """``-R qrels_prefs``: each qrels line as a preference line, the iteration field as the
    judgment group and one sub-group ``"0"`` (so one EC per grade within each JG)."""
    return [
        PrefsLine(qid, iteration, "0", docno, float(rel))
        for qid, iteration, docno, rel in qrels.entries()
    ]


# --------------------------------------------------------------------------- one judgment group


@dataclass
class _GroupCounts:
    """One JG's preference counts (``poss_*`` include the fulfilled ones) and R/N figures."""

    ful_ret: int
    poss_ret: int
    ful_imp: int
    poss_imp: int
    notoccur: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    rnonrel: float = 0.0
    rnonrel_ret: float = 0.0

    @property
    def ful(self) -> int:
        return self.ful_ret + self.ful_imp

    @property
    def poss(self) -> int:
        return self.poss_ret + self.poss_imp + self.notoccur


def _pairs_below(higher: np.ndarray, lower: np.ndarray, njr: int) -> int:
    """#(h, l) with h in ``higher``, l in ``lower``, h < l and h retrieved (h < njr).

    ``lower`` must be sorted."""
    h = higher[higher < njr]
    return int((len(lower) - np.searchsorted(lower, h, side="right")).sum())


def _complete_rnonrel(counts: _GroupCounts) -> None:
    """The ``_Rnonrel`` ratios of a JG with at least as many relevant as non-relevant docs:
    pretend R-N more non-relevant docs, ranked below every retrieved relevant one."""
    r, n = counts.num_rel, counts.num_nonrel
    if r >= n:
        counts.rnonrel = _ratio(
            counts.ful + counts.num_rel_ret * (r - n), counts.poss + counts.num_rel * (r - n)
        )
    r, n = counts.num_rel_ret, counts.num_nonrel_ret
    if r >= n:
        counts.rnonrel_ret = _ratio(
            counts.ful_ret + counts.num_rel_ret * (r - n),
            counts.poss_ret + counts.num_rel * (r - n),
        )


def _equivalence_group(
    qid: str, jg: str, levels: np.ndarray, docids: np.ndarray, njr: int, *, edges: bool
) -> tuple[_GroupCounts, np.ndarray, np.ndarray]:
    """Counts and (if ``edges``) preference edges (winner ids, loser ids) of a one-JSG group."""
    order = np.lexsort((docids, -levels))
    levels, docids = levels[order], docids[order]
    distinct = np.unique(np.stack([docids, levels.view(np.int64)]), axis=1).shape[1]
    if len(np.unique(docids)) != distinct:
        raise PreferenceError(qid, jg, "a document at most one rel level within a sub-group")
    starts = np.flatnonzero(np.r_[True, levels[1:] != levels[:-1]])
    ecs = np.split(docids, starts[1:])
    ec_levels = levels[starts]

    ful_ret = poss_ret = ful_imp = poss_imp = notoccur = 0
    num_rel = num_rel_ret = num_nonrel = num_nonrel_ret = 0
    higher = np.zeros(0, dtype=np.int64)  # every doc of the ECs above, sorted
    winners: list[np.ndarray] = []
    losers: list[np.ndarray] = []
    for ec, level in zip(ecs, ec_levels, strict=True):
        ret = ec[ec < njr]
        n_unret = len(ec) - len(ret)
        h_ret = int(np.searchsorted(higher, njr))
        h_unret = len(higher) - h_ret
        above = int(np.searchsorted(higher[:h_ret], ret).sum())
        ful_ret += above
        poss_ret += h_ret * len(ret)
        ful_imp += h_ret * n_unret
        poss_imp += h_ret * n_unret + h_unret * len(ret)
        notoccur += h_unret * n_unret
        if level > 0:
            num_rel, num_rel_ret = num_rel + len(ec), num_rel_ret + len(ret)
        else:
            num_nonrel, num_nonrel_ret = num_nonrel + len(ec), num_nonrel_ret + len(ret)
        if edges and len(higher):
            winners.append(np.tile(higher, len(ec)))
            losers.append(np.repeat(ec, len(higher)))
        higher = np.sort(np.concatenate([higher, ec]))

    counts = _GroupCounts(
        ful_ret, poss_ret, ful_imp, poss_imp, notoccur,
        num_rel, num_rel_ret, num_nonrel, num_nonrel_ret,
    )  # fmt: skip
    _complete_rnonrel(counts)
    if counts.num_rel < counts.num_nonrel:
        counts.rnonrel = _equivalence_rnonrel(ecs, ecs[-1][: counts.num_rel], njr)
    if counts.num_rel_ret < counts.num_nonrel_ret:
        retrieved = [ec[ec < njr] for ec in ecs]
        kept = ecs[-1][: counts.num_rel_ret]
        counts.rnonrel_ret = _equivalence_rnonrel(retrieved, kept[kept < njr], njr)
    return counts, _concat(winners), _concat(losers)


def _equivalence_rnonrel(ecs: list[np.ndarray], kept: np.ndarray, njr: int) -> float:
    """trec_eval's ``_Rnonrel`` recount of an EC judgment group: pairs between the ECs but the
    last, plus every EC (the last one included) against ``kept``, the last EC's R best docs.

    A pair (a above b) is fulfilled when a is ranked above b and retrieved (a < b, a < njr).
    (With more non-relevant ECs than one, trec_eval reads past the last EC; we clamp.)"""
    ful = total = 0
    higher = np.zeros(0, dtype=np.int64)
    for k in range(len(ecs) - 1):
        if k >= 1:
            ful += _pairs_below(higher, ecs[k], njr)
            total += len(higher) * len(ecs[k])
        higher = np.concatenate([higher, ecs[k]])
    every = np.concatenate(ecs)
    ful += _pairs_below(every, kept, njr)
    total += len(every) * len(kept)
    return _ratio(ful, total)


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _graph_group(
    qid: str, jg: str, jsgs: list[bytes], levels: np.ndarray, docids: np.ndarray, njr: int, nj: int
) -> tuple[_GroupCounts, np.ndarray, np.ndarray]:
    """Counts and preference edges of a judgment group with several sub-groups: the union of
    the sub-groups' preferences, closed under transitivity (contradictions are an error)."""
    nodes, local = np.unique(docids, return_inverse=True)
    n = len(nodes)
    prefers = np.zeros((n, n), dtype=bool)
    jsg_codes = np.unique(np.array(jsgs), return_inverse=True)[1]
    for code in range(int(jsg_codes.max()) + 1):
        rows = np.flatnonzero(jsg_codes == code)
        above, below = np.nonzero(levels[rows][:, None] > levels[rows][None, :])
        prefers[local[rows[above]], local[rows[below]]] = True

    rel = _rel_levels(qid, jg, jsg_codes, levels, docids)
    reach = _transitive_closure(prefers)
    np.fill_diagonal(reach, False)
    if np.any(reach & reach.T):
        raise PreferenceError(qid, jg, "preferences without contradictions within a group")
    win_local, lose_local = np.nonzero(reach)
    winners, losers = nodes[win_local], nodes[lose_local]

    node_rel = np.array([rel[int(d)] for d in nodes], dtype=np.float64)
    retrieved = nodes < njr
    w_ret, l_ret = winners < njr, losers < njr
    ful_ret = int(np.count_nonzero(w_ret & l_ret & (winners < losers)))
    ful_imp = int(np.count_nonzero(w_ret & ~l_ret))
    counts = _GroupCounts(
        ful_ret=ful_ret,
        poss_ret=int(np.count_nonzero(w_ret & l_ret)),
        ful_imp=ful_imp,
        poss_imp=ful_imp + int(np.count_nonzero(~w_ret & l_ret)),
        notoccur=int(np.count_nonzero(~w_ret & ~l_ret)),
        num_rel=int(np.count_nonzero(node_rel > 0)),
        num_rel_ret=int(np.count_nonzero((node_rel > 0) & retrieved)),
        num_nonrel=int(np.count_nonzero(node_rel == 0)),
        num_nonrel_ret=int(np.count_nonzero((node_rel == 0) & retrieved)),
    )
    _complete_rnonrel(counts)
    nonrel = nodes[node_rel == 0]  # ascending ids
    if counts.num_rel < counts.num_nonrel:
        cut = int(nonrel[counts.num_rel]) if len(nonrel) > counts.num_rel else nj
        counts.rnonrel = _graph_rnonrel(winners, losers, nonrel[nonrel >= cut], nj, njr)
    if counts.num_rel_ret < counts.num_nonrel_ret:
        nonrel_ret = nonrel[nonrel < njr]
        cut = int(nonrel_ret[counts.num_rel]) if len(nonrel_ret) > counts.num_rel else njr
        counts.rnonrel_ret = _graph_rnonrel(winners, losers, nonrel[nonrel >= cut], njr, njr)
    return counts, winners, losers


def _rel_levels(
    qid: str, jg: str, jsg_codes: np.ndarray, levels: np.ndarray, docids: np.ndarray
) -> dict[int, float]:
    """Each document's rel level in the group (the last one in trec_eval's line order: JSG,
    level descending, id); a document both non-relevant (0) and relevant (>0) is an error."""
    order = np.lexsort((docids, -levels, jsg_codes))
    rel: dict[int, float] = {}
    for d, level in zip(docids[order].tolist(), levels[order].tolist(), strict=True):
        previous = rel.get(d, -1.0)
        if (previous > 0 and level == 0) or (previous == 0 and level > 0):
            raise PreferenceError(qid, jg, "a document not both relevant and non-relevant")
        rel[d] = level
    return rel


def _transitive_closure(prefers: np.ndarray) -> np.ndarray:
    """Reflexive-transitive closure of a boolean relation, by repeated squaring."""
    reach = prefers | np.eye(len(prefers), dtype=bool)
    while True:
        as_float = reach.astype(np.float32)
        step = (as_float @ as_float) > 0
        if np.array_equal(step, reach):
            return reach
        reach = step


def _graph_rnonrel(
    winners: np.ndarray, losers: np.ndarray, dropped: np.ndarray, limit: int, njr: int
) -> float:
    """trec_eval's ``_Rnonrel`` recount of a graph judgment group: preferences among docs with
    ids below ``limit``, minus those touching a ``dropped`` non-relevant doc; fulfilled when
    the winner is retrieved and ranked above the loser."""
    keep = (winners < limit) & (losers < limit)
    keep &= ~np.isin(winners, dropped) & ~np.isin(losers, dropped)
    ful = int(np.count_nonzero(keep & (winners < njr) & (winners < losers)))
    return _ratio(ful, int(np.count_nonzero(keep)))


# --------------------------------------------------------------------------- one topic


def _prefs_ranked_docnos(
    run: Run, qid: str, max_results: int | None, float32: bool = False
) -> np.ndarray:
    """The topic's docnos (bytes) ranked as ``form_prefs_counts`` does: score descending, ties
    by docno ascending; cut at ``max_results``.  A topic missing from the run ranks nothing."""
    if qid not in run:
        return np.zeros(0, dtype="S1")
    lines = run.topic_slice(qid)
    names = run.docnos[lines]
    scores: np.ndarray = np.asarray(run.scores[lines], dtype=np.float32 if float32 else np.float64)
    order = np.lexsort((names, -scores))
    ranked = names[order if max_results is None else order[: max(max_results, 0)]]
    check_no_duplicates(qid, ranked.tolist())
    return ranked


def _document_ids(judged: np.ndarray, ranked: np.ndarray) -> tuple[np.ndarray, int, int]:
    """(id of each judged line's doc, NJR, NJ): retrieved judged docs 0..NJR-1 in rank order,
    the other judged docs NJR..NJ-1 in docno order."""
    width = max(judged.dtype.itemsize, ranked.dtype.itemsize)
    judged, ranked = judged.astype(f"S{width}"), ranked.astype(f"S{width}")
    docs, inverse = np.unique(judged, return_inverse=True)
    at = np.minimum(np.searchsorted(docs, ranked), len(docs) - 1)
    retrieved_docs = at[docs[at] == ranked]
    njr = len(retrieved_docs)
    ids = np.empty(len(docs), dtype=np.int64)
    is_retrieved = np.zeros(len(docs), dtype=bool)
    is_retrieved[retrieved_docs] = True
    ids[retrieved_docs] = np.arange(njr)
    ids[~is_retrieved] = njr + np.arange(len(docs) - njr)
    return ids[inverse.reshape(-1)], njr, len(docs)


def _pair_means(
    winners: np.ndarray, losers: np.ndarray, nj: int, njr: int
) -> tuple[float, float, float]:
    """(prefs_pair, prefs_pair_ret, prefs_pair_imp): per doc pair, the share of its stated
    preferences that the ranking fulfils, averaged over pairs (both retrieved / at least one
    retrieved); ``prefs_pair`` also counts pairs with neither retrieved (as 0)."""
    if not len(winners):
        return 0.0, 0.0, 0.0
    low, high = np.minimum(winners, losers), np.maximum(winners, losers)
    pairs, inverse = np.unique(low * nj + high, return_inverse=True)
    stated = np.bincount(inverse)
    fulfilled = np.bincount(inverse, weights=(winners < losers).astype(np.float64))
    share = fulfilled / stated
    pair_low, pair_high = pairs // nj, pairs % nj
    both = pair_high < njr
    one = (pair_low < njr) & ~both
    n_both, n_one = int(both.sum()), int(one.sum())
    n_all = len(pairs)
    running = np.cumsum(np.concatenate([share[both], share[one]]))  # C's summation order
    sum_ret = float(running[n_both - 1]) if n_both else 0.0
    sum_imp = float(running[-1]) if len(running) else 0.0
    return (
        sum_imp / n_all,
        sum_ret / n_both if n_both else 0.0,
        sum_imp / (n_both + n_one) if n_both + n_one else 0.0,
    )


def _mean_over_groups(shares: list[float], n_groups: int) -> float:
    """trec_eval's JG average: sum of the shares, kept only when positive (NaN is not)."""
    total = 0.0
    for share in shares:
        total += share
    return total / n_groups if total > 0.0 else 0.0


def _topic_values(qid: str, lines: list[PrefsLine], ranked: np.ndarray) -> dict[str, int | float]:
    """All preference measures of one topic."""
    judged = np.array([strcmp_key(line.docno) for line in lines], dtype=bytes)
    docids, njr, nj = _document_ids(judged, ranked)
    levels = np.array([line.rel for line in lines], dtype=np.float64) + 0.0  # -0.0 == 0.0
    by_group: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        by_group.setdefault(line.jg, []).append(i)

    # One JG stating each pair once makes every pair's share 0 or 1, so the pair measures equal
    # the simple ones and the (possibly huge) list of preference edges is not needed.
    single = len(by_group) == 1 and len(np.unique(docids)) == len(docids)
    groups: list[_GroupCounts] = []
    winners: list[np.ndarray] = []
    losers: list[np.ndarray] = []
    for jg in sorted(by_group, key=strcmp_key):
        rows = np.array(by_group[jg], dtype=np.int64)
        jsgs = [strcmp_key(lines[i].jsg) for i in by_group[jg]]
        if len(set(jsgs)) > 1:
            counts, won, lost = _graph_group(qid, jg, jsgs, levels[rows], docids[rows], njr, nj)
        else:
            counts, won, lost = _equivalence_group(
                qid, jg, levels[rows], docids[rows], njr, edges=not single
            )
        groups.append(counts)
        winners.append(won)
        losers.append(lost)

    ful_ret = sum(g.ful_ret for g in groups)
    ful = sum(g.ful for g in groups)
    poss_ret = sum(g.poss_ret for g in groups)
    poss_imp = poss_ret + sum(g.poss_imp for g in groups)
    poss = sum(g.poss for g in groups)
    n = len(groups)
    if single:
        pair = ful / poss if poss else 0.0
        pair_ret = ful_ret / poss_ret if poss_ret else 0.0
        pair_imp = ful / poss_imp if poss_imp else 0.0
    else:
        pair, pair_ret, pair_imp = _pair_means(_concat(winners), _concat(losers), nj, njr)
    return {
        "prefs_num_prefs_poss": poss,
        "prefs_num_prefs_ful": ful,
        "prefs_num_prefs_ful_ret": ful_ret,
        "prefs_simp": ful / poss if poss else 0.0,
        "prefs_pair": pair,
        "prefs_avgjg": _mean_over_groups([g.ful / g.poss for g in groups if g.poss], n),
        "prefs_avgjg_Rnonrel": _mean_over_groups([g.rnonrel for g in groups], n),
        "prefs_simp_ret": ful_ret / poss_ret if poss_ret else 0.0,
        "prefs_pair_ret": pair_ret,
        "prefs_avgjg_ret": _mean_over_groups(
            [g.ful_ret / g.poss_ret for g in groups if g.poss_ret], n
        ),
        "prefs_avgjg_Rnonrel_ret": _mean_over_groups([g.rnonrel_ret for g in groups], n),
        "prefs_simp_imp": ful / poss_imp if poss_imp else 0.0,
        "prefs_pair_imp": pair_imp,
        "prefs_avgjg_imp": _mean_over_groups(
            [g.ful / (g.poss_ret + g.poss_imp) for g in groups if g.poss_ret + g.poss_imp], n
        ),
    }


# --------------------------------------------------------------------------- evaluation


def resolve_measures(
    measure_names: Sequence[str],
    measures: Sequence[str],
    nicknames: Mapping[str, Sequence[str]],
    kind: str,
) -> tuple[list[str], dict[str, str]]:
    """The measures named, nicknames expanded, in trec_eval's print order (SUMMARY_ONLY, then
    `measures`), and the first parameter suffix given to each (``name.params``: the first
    wins, as in trec_eval). A name that is none of them is a MeasureError saying it is not
    `kind`."""
    wanted: set[str] = set()
    params: dict[str, str] = {}
    for argument in measure_names:
        name, given = split_measure(argument)
        if given is not None:
            params.setdefault(name, given)
        if name in nicknames:
            wanted.update(nicknames[name])
        elif name in SUMMARY_ONLY or name in measures:
            wanted.add(name)
        else:
            raise MeasureError(f"measure {name!r} is not {kind}")
    return [name for name in (*SUMMARY_ONLY, *measures) if name in wanted], params


def resolve_prefs_measures(measure_names: Sequence[str]) -> list[str]:
    """The preference measures named (nicknames ``all_prefs``/``prefs`` expanded; trec_eval's
    parameter suffix ignored, as these measures take none), in trec_eval's print order."""
    kind = "a preference measure (-R prefs / -R qrels_prefs)"
    return resolve_measures(measure_names, PREFS_MEASURES, NICKNAMES, kind)[0]


def evaluate_prefs(
    prefs: list[PrefsLine], run: Run, measure_names: list[str], flags: TrecEvalFlags
) -> list[Line]:
    """trec_eval's output lines ``(measure, qid, value)`` for ``-R prefs`` (or ``-R
    qrels_prefs`` with :func:`prefs_from_qrels`): per-topic blocks when ``flags.per_topic``
    (``-q``), then the ``all`` summary.  Counts are ints (``%ld``), ratios floats (``%6.4f``),
    runid the run's tag.  ``flags.relevance_level`` (``-l``) does not affect preference
    measures: preferences use rel > 0 / rel == 0."""
    names = resolve_prefs_measures(measure_names)
    by_topic: dict[str, list[PrefsLine]] = {}
    for line in prefs:
        by_topic.setdefault(line.qid, []).append(line)

    def evaluate_topic(qid: str) -> dict[str, int | float]:
        ranking = _prefs_ranked_docnos(run, qid, flags.max_results, float32=flags.compat < 10)
        return _topic_values(qid, by_topic[qid], ranking)

    return assemble(names, list(by_topic), evaluate_topic, run, flags, summed=COUNT_MEASURES)
