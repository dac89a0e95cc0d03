"""Measures named with options of their own, in ir_measures' syntax: ``P(rel=2)@5`` (its
relevance level), ``nDCG(judged_only=True)@10`` (trec_eval's ``-J`` for it alone),
``nDCG(gains={0:0,1:1,2:3})`` (the grades replaced by these gains in the qrels, as ir_measures'
pytrec_eval provider does).  Each such measure is evaluated with its options, the others
together with the evaluation's, and one :class:`Evaluation` holds them all: a measure whose
options change the evaluation's is reported under its ir_measures spelling (``P(rel=2)@5``),
beside trec_eval's names for the rest.  An option equal to the evaluation's changes nothing
(``P(rel=2)@5`` at relevance level 2 is ``P_5``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.metrics.evaluation import Evaluation
from workbench.metrics.names import Measure, Options
from workbench.trec.qrels import Qrels
from workbench.trec.runs import Run


def changes(options: Options, relevance_level: int, judged_only: bool) -> bool:
    """Whether a measure's options differ from the evaluation's."""
    return (
        (options.relevance_level is not None and options.relevance_level != relevance_level)
        or (options.judged_only is not None and options.judged_only != judged_only)
        or options.gains is not None
    )


def evaluate_with_options(
    qrels: Qrels,
    run: Run,
    chosen: list[Measure],
    evaluate_measures: Callable[..., Evaluation],
    **options: Any,
) -> Evaluation:
    """``evaluate_measures`` of the measures without options of their own, then of each one
    with them (its own relevance level, judged-only flag, gains), merged."""
    level, judged = options["relevance_level"], options["judged_only"]
    plain: list[Measure] = []
    own: list[Measure] = []
    for measure in chosen:
        if changes(measure.options, level, judged):
            own.append(measure)
        elif all(measure.trec_text != m.trec_text for m in plain):
            plain.append(measure._replace(options=Options(), label=None))
    result = evaluate_measures(qrels, run, plain, **options) if plain else None
    for measure in own:
        wanted = measure.options
        its_options = dict(options)
        if wanted.relevance_level is not None:
            its_options["relevance_level"] = wanted.relevance_level
        if wanted.judged_only is not None:
            its_options["judged_only"] = wanted.judged_only
        part = evaluate_measures(
            with_gains(qrels, wanted.gains) if wanted.gains else qrels,
            run,
            [measure._replace(options=Options(), label=None)],
            **its_options,
        )
        result = _merged(result, part, measure.label or measure.trec_text)
    assert result is not None  # chosen holds at least one measure
    return result


def _merged(result: Evaluation | None, part: Evaluation, label: str) -> Evaluation:
    """``part``'s values added to ``result`` under ``label`` (``label name`` when the
    measure gives several values)."""
    if result is None:
        result = Evaluation(
            {q: {} for q in part.per_topic}, {}, [], part.skipped, part.hidden, part.run_tag
        )
    for line in part.lines:
        name = label if len(part.lines) == 1 else f"{label} {line.name}"
        result.lines.append(line._replace(name=name))
        for qid, values in part.per_topic.items():
            if line.name in values:
                result.per_topic.setdefault(qid, {})[name] = values[line.name]
        result.summary[name] = part.summary[line.name]
    return result


def with_gains(qrels: Qrels, gains: tuple[tuple[int, int], ...]) -> Qrels:
    """The qrels with each grade that ``gains`` maps replaced by its gain (others kept)."""
    rels = qrels.rels.copy()
    for grade, gain in gains:
        rels[qrels.rels == grade] = gain
    return Qrels(qrels.qids, qrels.iterations, qrels.docnos, np.asarray(rels, dtype=np.int64))
