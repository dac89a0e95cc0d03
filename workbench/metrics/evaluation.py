"""evaluate(qrels, run, measures) with trec_eval's conventions on topics and averaging.

Topics (trec_eval 10): the qrels topics in ``strcmp`` order that the run has; with
``average_over_all_topics`` (``-c``) also the qrels topics the run lacks, scored on an empty
ranking.  trec_eval 10 stops on a qrels topic the run lacks; we skip it as 9.0.8 did and list
it in ``Evaluation.skipped``.  With ``compat=9`` the topics are the run's topics that have
qrels, ranking uses 32-bit float scores, the iprec cutoffs round with +0.9, and topics added by
``-c`` count in the averages but are not reported per topic (``Evaluation.hidden``).

Summary: num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret are summed, gm_map and
gm_bpref are exp(mean(log(max(v, 1e-5)))), everything else is the arithmetic mean over num_q.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from workbench.metrics.measures import MIN_GEO_MEAN
from workbench.metrics.names import Measure, resolve
from workbench.metrics.ranked import Ranked, rank_topics
from workbench.metrics.ranking import strcmp_key
from workbench.trec import Qrels, Run


@dataclass
class Line:
    """One printed measure: name, family summary rule and kind."""

    name: str
    summary: str
    kind: str
    per_topic: bool


@dataclass
class Evaluation:
    per_topic: dict[str, dict[str, float | int | str]]
    summary: dict[str, float | int | str]
    lines: list[Line] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # qrels topics the run lacks (no -c)
    hidden: list[str] = field(default_factory=list)  # -c topics not reported (compat 9)
    run_tag: str = ""


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
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str] = ("official",),
    *,
    relevance_level: int = 1,
    average_over_all_topics: bool = False,
    max_results: int | None = None,
    judged_only: bool = False,
    compat: int = 10,
    n_docs_in_collection: int = 0,
) -> Evaluation:
    """Per-topic values and the summary of ``measures`` (trec_eval names or friendly names)."""
    if not isinstance(qrels, Qrels):
        qrels = Qrels.from_dict(qrels)
    if not isinstance(run, Run):
        run = Run.from_dict(run)
    chosen = resolve(list(measures), compat)
    qids, skipped, hidden = select_topics(
        qrels, run, average_over_all_topics=average_over_all_topics, compat=compat
    )
    ranked = rank_topics(
        qrels,
        run,
        qids,
        relevance_level=relevance_level,
        max_results=max_results,
        judged_only=judged_only,
        float32=compat < 10,
        n_docs_in_collection=n_docs_in_collection,
    )
    return _evaluate_ranked(ranked, chosen, run.tag, skipped, hidden, qids)


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
    compat: int = 10,
) -> dict[str, np.ndarray]:
    """The 11-point interpolated precision-recall curve (recall 0.0, 0.1 ... 1.0).

    qid -> 11 precisions, and ``"all"`` -> their mean over topics; data for plots.
    """
    result = evaluate(
        qrels, run, ["iprec_at_recall"], relevance_level=relevance_level, compat=compat
    )
    names = [line.name for line in result.lines]
    curves = {
        q: np.array([values[name] for name in names], dtype=np.float64)
        for q, values in result.per_topic.items()
    }
    curves["all"] = np.array([result.summary[name] for name in names], dtype=np.float64)
    return curves
