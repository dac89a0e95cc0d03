"""trec_eval's judgment-group measures: ``-m qrels_jg`` with ``-R qrels_jg``.

Relevance information is a list of :class:`~workbench.trec.JudgmentGroupLine` ``(qid, jg,
docno, rel)``: every judgment group (JG, e.g. one assessor) of a topic is a complete set of
qrels of its own.  Each measure is the standard trec_eval measure computed against one JG's
qrels, averaged over the topic's JGs (the ``all`` line then averages over topics):

* ``map_avgjg``: average precision (sum over relevant retrieved docs of precision at its rank,
  over R, the JG's number of docs with rel >= ``-l``);
* ``P_avgjg_k``: relevant docs in the top k over k (default k = 5 10 15 20 30 100 200 500 1000);
* ``Rprec_mult_avgjg_m``: precision at c = (long)(m R + 0.9) documents, 0 when c = 0 (default
  m = 0.2 0.4 ... 2.0).

The run is ranked as for every trec_eval measure (score descending, ties by docno descending),
cut at ``-M``; JGs are taken in ``strcmp`` order of their names.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.metrics.measures import average_precision, rel_in_top
from workbench.metrics.names import parse_cutoffs, parse_distinct_floats
from workbench.metrics.prefs import (
    SUMMARY_ONLY,
    Line,
    TrecEvalFlags,
    assemble,
    check_no_duplicates,
    resolve_measures,
)
from workbench.metrics.ranked import rank_topics
from workbench.trec import JudgmentGroupLine, Qrels, Run, TrecFormatError
from workbench.trec.order import strcmp_key, trec_order

P_AVGJG_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RPREC_MULT_AVGJG_MULTIPLIERS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
JG_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
NICKNAMES = {"qrels_jg": SUMMARY_ONLY + JG_MEASURES}


class _Request:
    """The measures asked for, with their parameters (the first ``name.params`` given wins, as
    in trec_eval)."""

    def __init__(self, measure_names: Sequence[str]) -> None:
        kind = "a judgment-group measure (-R qrels_jg)"
        self.families, params = resolve_measures(measure_names, JG_MEASURES, NICKNAMES, kind)
        cutoffs, multipliers = params.get("P_avgjg"), params.get("Rprec_mult_avgjg")
        self.cutoffs = (
            list(P_AVGJG_CUTOFFS)
            if cutoffs is None
            else parse_cutoffs(cutoffs, f"P_avgjg.{cutoffs}")
        )
        self.multipliers = (
            list(RPREC_MULT_AVGJG_MULTIPLIERS)
            if multipliers is None
            else parse_distinct_floats(multipliers, f"Rprec_mult_avgjg.{multipliers}")
        )

    def names(self) -> list[str]:
        """Printed measure names in trec_eval's order."""
        out: list[str] = []
        for family in self.families:
            if family == "P_avgjg":
                out.extend(f"P_avgjg_{k}" for k in self.cutoffs)
            elif family == "Rprec_mult_avgjg":
                out.extend(f"Rprec_mult_avgjg_{m:3.2f}" for m in self.multipliers)
            else:
                out.append(family)
        return out


def _judgment_groups(lines: list[JudgmentGroupLine]) -> dict[str, list[Qrels]]:
    """Per topic, one :class:`Qrels` per JG in ``strcmp`` order of the JG names.  A docno
    judged twice in one JG is an error, as in trec_eval."""
    grouped: dict[str, dict[str, dict[str, int]]] = {}
    for line in lines:
        docs = grouped.setdefault(line.qid, {}).setdefault(line.jg, {})
        if line.docno in docs:
            raise TrecFormatError(
                "<qrels_jg>",
                0,
                f"{line.qid} {line.jg} {line.docno} {line.rel}",
                "each docno at most once per topic and judgment group",
            )
        docs[line.docno] = line.rel
    return {
        qid: [Qrels.from_dict({qid: groups[jg]}) for jg in sorted(groups, key=strcmp_key)]
        for qid, groups in grouped.items()
    }


def _topic_values(
    qid: str,
    groups: list[Qrels],
    run: Run,
    request: _Request,
    *,
    relevance_level: int,
    max_results: int | None,
    float32: bool = False,
) -> dict[str, float]:
    """Each measure of one topic: the JG values summed in JG order, then over the number of
    JGs when there are several (trec_eval's accumulation order)."""
    totals = {name: 0.0 for name in request.names() if name not in SUMMARY_ONLY}
    if qid in run:
        lines = run.topic_slice(qid)
        docnos = run.docnos[lines]
        order = trec_order(docnos, run.scores[lines], float32=float32)
        if max_results is not None:
            order = order[: max(max_results, 0)]
        check_no_duplicates(qid, docnos[order].tolist())
    for qrels in groups:
        ranked = rank_topics(
            qrels,
            run,
            [qid],
            relevance_level=relevance_level,
            max_results=max_results,
            float32=float32,
        )
        if "map_avgjg" in totals:
            totals["map_avgjg"] += float(average_precision(ranked)[0])
        if "P_avgjg" in request.families:
            for k in request.cutoffs:
                totals[f"P_avgjg_{k}"] += int(rel_in_top(ranked, k)[0]) / k
        if "Rprec_mult_avgjg" in request.families:
            num_rel = int(ranked.num_rel[0])
            for m in request.multipliers:
                cut = int(m * num_rel + 0.9)
                if cut > 0:
                    totals[f"Rprec_mult_avgjg_{m:3.2f}"] += int(rel_in_top(ranked, cut)[0]) / cut
    if len(groups) > 1:
        totals = {name: value / len(groups) for name, value in totals.items()}
    return totals


def evaluate_judgment_groups(
    lines: list[JudgmentGroupLine], run: Run, measure_names: list[str], flags: TrecEvalFlags
) -> list[Line]:
    """trec_eval's output lines ``(measure, qid, value)`` for ``-R qrels_jg``: per-topic blocks
    when ``flags.per_topic`` (``-q``), then the ``all`` summary (runid, num_q, means over
    topics)."""
    request = _Request(measure_names)
    by_topic = _judgment_groups(lines)

    def evaluate_topic(qid: str) -> dict[str, int | float]:
        return _topic_values(
            qid,
            by_topic[qid],
            run,
            request,
            relevance_level=flags.relevance_level,
            max_results=flags.max_results,
            float32=flags.compat < 10,
        )

    return assemble(request.names(), list(by_topic), evaluate_topic, run, flags)
