"""evaluate(qrels, run, measures) with trec_eval's conventions on topics and averaging.

Topics (trec_eval 10): the qrels topics in ``strcmp`` order that the run has; with
``average_over_all_topics`` (``-c``) also the qrels topics the run lacks, scored on an empty
ranking.  trec_eval 10 stops on a qrels topic the run lacks; we skip it as 9.0.8 did and list
it in ``Evaluation.skipped``.  With ``compat=9`` the topics are the run's topics that have
qrels, ranking uses 32-bit float scores, the iprec cutoffs round with +0.9, and topics added by
``-c`` count in the averages but are not reported per topic (``Evaluation.hidden``).

Summary: num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret are summed, gm_map and
gm_bpref are exp(mean(log(max(v, 1e-5)))), everything else is the arithmetic mean over num_q
(per-topic doubles added in print order, then divided).  With ``-c`` the summary ``num_rel``
is trec_eval's: the qrels lines with rel > 0 over all qrels topics, whatever ``-l``, ``-J``
and ``-M`` (``te_calc_avg_num_rel``).

trec_eval 10 scores a ``-c`` topic that the run lacks on a one-document ranking of an unknown
docno, then sets num_ret, utility, relstring (unparameterised), unj and rbp_resid to 0; so do we.

Undefined values are NaN, as trec_eval computes them: with ``-J`` (or ``-M 0``) a topic can
retrieve no document, and then ``iprec_at_recall`` at a cutoff of 0 relevant documents is
0/0 (trec_eval prints ``-nan``), and so is ``11pt_avg`` and the summaries they enter.

:class:`TopicError` is raised where trec_eval stops with "Can't calculate measure": a docno
twice in the ranked (``-M``-cut) lines of an evaluated topic, or an evaluated topic whose
judgements are all negative before any topic with a nonnegative one (trec_eval 9 and 10 then
find no buffer; after one, a topic whose judgements are all below -1 crashes trec_eval).
``TopicError.evaluated`` holds the topics evaluated before it, which trec_eval prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from workbench.metrics.measures import MIN_GEO_MEAN
from workbench.metrics.names import Measure, Options, refuse_shared_gains, resolve
from workbench.metrics.ranked import Ranked, rank_topics
from workbench.trec.keys import docno_hash
from workbench.trec.order import first_repeated, strcmp_key, trec_order
from workbench.trec.qrels import Qrels
from workbench.trec.runs import Run

if TYPE_CHECKING:
    import pandas as pd

    from workbench.frames import Style

BOGUS_DOCNO = b"ceci_nest_pas_un_docno"  # trec_eval 10's ranking for -c topics the run lacks
ZEROED_ON_BOGUS = ("num_ret", "utility", "rbp_resid")


class CannotEvaluate(ValueError):
    """A topic trec_eval cannot evaluate: it stops there with "Can't calculate measure"."""

    def __init__(self, qid: str, reason: str, measure: str) -> None:
        self.qid = qid
        self.reason = reason
        self.measure = measure
        super().__init__(f"topic {qid!r}: {reason}; can't calculate measure {measure!r}")


class TopicError(CannotEvaluate):
    """:class:`CannotEvaluate` from :func:`evaluate`; ``evaluated`` holds the topics before."""

    def __init__(self, qid: str, reason: str, measure: str, evaluated: Evaluation) -> None:
        self.evaluated = evaluated
        super().__init__(qid, reason, measure)


class Line(NamedTuple):
    """One printed measure: name, family summary rule and kind."""

    name: str
    summary: str
    kind: str
    per_topic: bool


class Evaluation:
    """Per-topic values and the summary, keyed by printed measure name, and what was left out.

    A plain class (not a dataclass: its generated methods would cost start-up time).
    """

    def __init__(
        self,
        per_topic: dict[str, dict[str, float | int | str]],
        summary: dict[str, float | int | str],
        lines: list[Line] | None = None,
        skipped: list[str] | None = None,
        hidden: list[str] | None = None,
        run_tag: str = "",
    ) -> None:
        self.per_topic = per_topic
        self.summary = summary
        self.lines = lines if lines is not None else []
        self.skipped = skipped if skipped is not None else []  # qrels topics the run lacks
        self.hidden = hidden if hidden is not None else []  # -c topics not reported (compat 9)
        self.run_tag = run_tag

    def to_frame(self, *, style: Style = "ir_measures", summary: bool = False) -> pd.DataFrame:
        """The values as a pandas DataFrame (:func:`workbench.frames.evaluation_frame`)."""
        from workbench.frames import evaluation_frame

        return evaluation_frame(self, style=style, summary=summary)

    def _repr_html_(self, max_topics: int = 20) -> str:
        """Jupyter's display: measures x (the summary, then the topics, at most
        ``max_topics`` of them, the table saying how many more there are)."""
        from workbench.tabular import Cell, Table, to_html

        names = [line.name for line in self.lines]
        topics = [q for q in self.per_topic if q not in self.hidden]
        shown = topics[:max_topics]
        rows = [
            [Cell("all"), *(Cell(self.summary.get(name)) for name in names)],
            *([Cell(q), *(Cell(self.per_topic[q].get(name)) for name in names)] for q in shown),
        ]
        notes = []
        if len(shown) < len(topics):
            notes.append(f"{len(topics) - len(shown)} more topics, not shown here")
        if self.skipped:
            notes.append(f"qrels topics the run lacks, not evaluated: {', '.join(self.skipped)}")
        caption = f"{self.run_tag or 'run'}: {len(topics)} topics"
        return to_html(Table(["topic", *names], rows, caption=caption, notes=notes))


def select_topics(
    qrels: Qrels, run: Run, *, average_over_all_topics: bool, compat: int
) -> tuple[list[str], list[str], list[str]]:
    """(evaluated topics in print order, skipped topics, hidden topics)."""
    qrels_topics = sorted(qrels.topics(), key=strcmp_key)
    if compat >= 10:
        present = [q for q in qrels_topics if q in run]
        missing = [q for q in qrels_topics if q not in run]
        if average_over_all_topics:
            return qrels_topics, [], []
        return present, missing, []
    present = sorted((q for q in run.topics() if q in qrels), key=strcmp_key)
    missing = [q for q in qrels_topics if q not in run]
    if average_over_all_topics:
        return present + missing, [], missing
    return present, missing, []


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | pd.DataFrame,
    run: Run | Mapping[str, Mapping[str, float]] | pd.DataFrame,
    measures: Sequence[str] = ("official",),
    *,
    relevance_level: int = 1,
    average_over_all_topics: bool = False,
    max_results: int | None = None,
    judged_only: bool = False,
    compat: int = 10,
    n_docs_in_collection: int = 0,
    drop_in: bool = False,
) -> Evaluation:
    """Per-topic values and the summary of ``measures``: trec_eval names, friendly names or
    (unless ``drop_in``, ``workbench trec-eval``'s reading) ir_measures names, whose options
    (``P(rel=2)@5``) are evaluated apart and reported under their ir_measures spelling.

    Raises TopicError for a topic trec_eval cannot evaluate (duplicate documents, ...), then
    MeasureError for measures whose gains trec_eval 10 would crash on (``refuse_shared_gains``),
    in the order trec_eval meets them."""
    qrels, run = as_qrels(qrels), as_run(run)
    chosen = resolve(list(measures), compat, check_gains=False, drop_in=drop_in)
    options: dict[str, Any] = {
        "relevance_level": relevance_level,
        "average_over_all_topics": average_over_all_topics,
        "max_results": max_results,
        "judged_only": judged_only,
        "compat": compat,
        "n_docs_in_collection": n_docs_in_collection,
    }
    if any(m.options != Options() for m in chosen):
        from workbench.metrics.options import evaluate_with_options

        return evaluate_with_options(qrels, run, chosen, evaluate_measures, **options)
    return evaluate_measures(qrels, run, chosen, **options)


def as_qrels(qrels: Any) -> Qrels:
    """Qrels as given: a :class:`Qrels`, ``{qid: {docno: grade}}`` or a pandas DataFrame
    (PyTerrier's or ir_measures' columns, :mod:`workbench.frames`)."""
    if isinstance(qrels, Qrels):
        return qrels
    if type(qrels).__name__ == "DataFrame":
        from workbench.frames import qrels_from_frame

        return qrels_from_frame(qrels)
    return Qrels.from_dict(qrels)


def as_run(run: Any) -> Run:
    """A run as given: a :class:`Run`, ``{qid: {docno: score}}`` or a pandas DataFrame."""
    if isinstance(run, Run):
        return run
    if type(run).__name__ == "DataFrame":
        from workbench.frames import run_from_frame

        return run_from_frame(run)
    return Run.from_dict(run)


def evaluate_measures(
    qrels: Qrels,
    run: Run,
    chosen: list[Measure],
    *,
    relevance_level: int,
    average_over_all_topics: bool,
    max_results: int | None,
    judged_only: bool,
    compat: int,
    n_docs_in_collection: int,
) -> Evaluation:
    """:func:`evaluate` of resolved measures, all under the same options."""
    qids, skipped, hidden = select_topics(
        qrels, run, average_over_all_topics=average_over_all_topics, compat=compat
    )
    bogus = [q for q in qids if q not in run] if compat >= 10 else []
    if bogus:
        run = _with_bogus_topics(run, bogus)

    def evaluate_topics(topics: list[str], hidden_topics: list[str]) -> Evaluation:
        ranked = rank_topics(
            qrels,
            run,
            topics,
            relevance_level=relevance_level,
            max_results=max_results,
            judged_only=judged_only,
            float32=compat < 10,
            n_docs_in_collection=n_docs_in_collection,
        )
        result = _evaluate_ranked(ranked, chosen, run.tag, skipped, hidden_topics, topics)
        _zero_bogus(result, set(bogus) & set(topics))
        _zero_hidden(result, hidden_topics)
        _stale_ideal_dcg(result, [q for q in topics if q not in hidden_topics], _max_rel(qrels))
        if average_over_all_topics and "num_rel" in result.summary:
            result.summary["num_rel"] = int((qrels.rels > 0).sum())
        return result

    failure = _first_failure(qrels, run, qids, hidden, chosen, max_results, compat < 10)
    if failure is not None:
        index, reason, measure = failure
        raise TopicError(qids[index], reason, measure, evaluate_topics(qids[:index], []))
    if len(qids) > len(hidden):  # trec_eval reports the files' errors, then crashes at exit
        refuse_shared_gains(chosen)
    return evaluate_topics(qids, hidden)


def _with_bogus_topics(run: Run, qids: list[str]) -> Run:
    """The run with a one-line ranking of :data:`BOGUS_DOCNO` for each of ``qids``."""
    n = len(qids)
    extra = np.array([BOGUS_DOCNO] * n)
    return Run(
        run.topics() + qids,
        np.concatenate((run.offsets, run.offsets[-1] + np.arange(1, n + 1))),
        np.concatenate((run.docnos, extra)),
        np.concatenate((run.scores, np.ones(n))),
        np.concatenate((run.ranks, np.ones(n, dtype=run.ranks.dtype))),
        run.tag,
        docno_hashes=np.concatenate((run.docno_hashes, docno_hash(extra))),
    )


def _zero_bogus(result: Evaluation, bogus: set[str]) -> None:
    """trec_eval 10's clean-up of a bogus ranking's values (exact measure names only)."""
    if not bogus:
        return
    for line in result.lines:
        name = line.name
        if name not in (*ZEROED_ON_BOGUS, "relstring") and not name.startswith("unj"):
            continue
        for q in bogus:
            values = result.per_topic[q]
            values[line.name] = "" if line.name == "relstring" else type(values[line.name])(0)
        if line.summary in ("mean", "sum"):
            in_order = [result.per_topic[q][line.name] for q in result.per_topic]
            result.summary[line.name] = summarise(in_order, line.summary, len(in_order))


def _zero_hidden(result: Evaluation, hidden: list[str]) -> None:
    """trec_eval 9.0.8 never evaluates ``-c`` topics the run lacks: every value of theirs is 0
    in the averages (an empty ranking would give NaN for iprec, nonzero utility)."""
    changed = set()
    for qid in hidden:
        values = result.per_topic[qid]
        for name, value in values.items():
            if isinstance(value, int | float) and value != 0:
                values[name] = type(value)(0)
                changed.add(name)
    for line in result.lines:
        if line.name in changed and line.summary in ("mean", "gm", "sum"):
            in_order = [result.per_topic[q][line.name] for q in result.per_topic]
            result.summary[line.name] = summarise(in_order, line.summary, len(in_order))


def _stale_ideal_dcg(result: Evaluation, order: list[str], max_rel: dict[str, int]) -> None:
    """trec_eval 10's ideal_dcg for a topic judged only -1: that of the last topic evaluated
    before it with a nonnegative judgement (its grade counts are left over in trec_eval)."""
    names = [line.name for line in result.lines if line.name.startswith("ideal_dcg")]
    if not names:
        return
    last: str | None = None
    changed = False
    for qid in order:
        top = max_rel.get(qid, 0)
        if top >= 0:
            last = qid
        elif last is not None:
            for name in names:
                result.per_topic[qid][name] = result.per_topic[last][name]
            changed = True
    if changed:
        for name in names:
            in_order = [result.per_topic[q][name] for q in result.per_topic]
            result.summary[name] = summarise(in_order, "mean", len(in_order))


def _first_failure(
    qrels: Qrels,
    run: Run,
    qids: list[str],
    hidden: list[str],
    chosen: list[Measure],
    max_results: int | None,
    float32: bool,
) -> tuple[int, str, str] | None:
    """(index in ``qids``, reason, measure) of the first topic trec_eval cannot evaluate."""
    measure = next((m for m in chosen if m.family.summary not in ("runid", "num_q")), None)
    if measure is None:
        return None
    name = measure.name
    duplicated = run.repeated_topics
    judged_twice = qrels.judged_twice
    max_rel = _max_rel(qrels)
    allocated = False
    skip = set(hidden)
    for i, qid in enumerate(qids):
        if qid in skip:
            continue
        if qid in duplicated:
            docno = _duplicate_in_ranking(run, qid, max_results, float32)
            if docno is not None:
                return i, f"docno {docno!r} appears twice in the run (duplicate docs)", name
        if qid in judged_twice:
            docno = _first_repeated(qrels.grouped_docnos[qrels.topic_slice(qid)])
            if docno is not None:
                return i, f"docno {docno!r} is judged twice in the qrels (duplicate docs)", name
        top = max_rel.get(qid)
        if top is None:
            continue
        if top >= 0:
            allocated = True
        elif not allocated:
            return i, "every judgement of the topic is negative (trec_eval finds no buffer)", name
        elif top < -1:
            return i, "every judgement of the topic is below -1 (trec_eval crashes)", name
    return None


def _max_rel(qrels: Qrels) -> dict[str, int]:
    """The largest grade of each qrels topic."""
    offsets = qrels.offsets
    if not len(qrels.grouped_rels):
        return {}
    tops = np.maximum.reduceat(qrels.grouped_rels, offsets[:-1]).tolist()
    return dict(zip(qrels.topics(), tops, strict=True))


def _first_repeated(docnos: np.ndarray) -> str | None:
    """The smallest docno (strcmp order) given twice, as trec_eval names it."""
    repeated = first_repeated(docnos.tolist())
    return None if repeated is None else repeated.decode("utf-8", "surrogateescape")


def _duplicate_in_ranking(run: Run, qid: str, max_results: int | None, float32: bool) -> str | None:
    """The first docno (strcmp order) twice among the topic's ranked, ``-M``-cut lines."""
    lines = run.topic_slice(qid)
    docnos = run.docnos[lines]
    order = trec_order(docnos, run.scores[lines], float32=float32)
    if max_results is not None:
        order = order[: max(max_results, 0)]
    return _first_repeated(docnos[order])


def _evaluate_ranked(
    ranked: Ranked,
    chosen: list[Measure],
    tag: str,
    skipped: list[str],
    hidden: list[str],
    qids: list[str],
) -> Evaluation:
    """Per-topic values keyed in ``qids`` order (the print order), and the summary."""
    per_topic: dict[str, dict[str, float | int | str]] = {q: {} for q in qids}
    summary: dict[str, float | int | str] = {}
    lines: list[Line] = []
    n = ranked.n_topics
    for measure in chosen:
        family = measure.family
        if family.summary == "runid":
            summary["runid"] = tag
            lines.append(Line("runid", "runid", "string", False))
            continue
        if family.summary == "num_q":
            summary["num_q"] = n
            lines.append(Line("num_q", "num_q", "count", False))
            continue
        assert family.compute is not None
        for printed, values in family.compute(ranked, measure.params):
            name = measure.rename(printed)
            lines.append(Line(name, family.summary, family.kind, family.per_topic))
            if family.kind == "string":
                for q, v in zip(ranked.qids, values, strict=True):
                    per_topic[q][name] = v
                continue
            array = np.asarray(values)
            as_list = array.astype(np.int64 if family.kind == "count" else np.float64).tolist()
            for q, v in zip(ranked.qids, as_list, strict=True):
                per_topic[q][name] = v
            in_print_order = [per_topic[q][name] for q in qids]  # trec_eval's summation order
            summary[name] = summarise(in_print_order, family.summary, n)
    return Evaluation(per_topic, summary, lines, skipped, hidden, tag)


def summarise(values: list, rule: str, n: int) -> float | int:
    """trec_eval's summary of per-topic values (sequential sums, as its accumulators)."""
    if rule == "sum":
        return int(sum(values))
    if rule == "gm":
        total = 0.0
        for v in values:
            total += math.log(max(v, MIN_GEO_MEAN))
        return math.exp(total / n) if n else 0.0
    total = 0.0
    for v in values:
        total += v
    return total / n if n else 0.0


def interpolated_precision_recall(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    *,
    relevance_level: int = 1,
    average_over_all_topics: bool = False,
    compat: int = 10,
) -> dict[str, np.ndarray]:
    """The 11-point interpolated precision-recall curve (recall 0.0, 0.1 ... 1.0).

    qid -> 11 precisions, and ``"all"`` -> their mean over topics (``average_over_all_topics``:
    over every qrels topic, as ``evaluate`` and trec_eval -c); data for plots.
    """
    result = evaluate(
        qrels,
        run,
        ["iprec_at_recall"],
        relevance_level=relevance_level,
        average_over_all_topics=average_over_all_topics,
        compat=compat,
    )
    names = [line.name for line in result.lines]
    curves = {
        q: np.array([values[name] for name in names], dtype=np.float64)
        for q, values in result.per_topic.items()
    }
    curves["all"] = np.array([result.summary[name] for name in names], dtype=np.float64)
    return curves
