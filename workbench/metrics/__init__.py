"""The metric module: trec_eval-exact measures.

``evaluate(qrels, run, ["map", "P@10", "nDCG@10"])`` returns an :class:`Evaluation` with
per-topic values and the summary, keyed by trec_eval's printed names (``map``, ``P_10``,
``ndcg_cut_10``).  The run is a ``trec.Run`` (the one shape of run data: what the readers
and the store give), ranked as it is; a ``{qid: {docno: score}}`` dict or a DataFrame is made
into one first (``evaluation.as_run``).  Imports neither Flask nor SQLAlchemy.  Names load on
first use, so that importing one submodule (``workbench.metrics.names``) does not load the
rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.lazy import lazy_attributes

if TYPE_CHECKING:
    from workbench.metrics.evaluation import Evaluation, evaluate, interpolated_precision_recall
    from workbench.metrics.names import Measure, MeasureError, parse_measure
    from workbench.trec.order import trec_order

_HOMES = {
    "Evaluation": "workbench.metrics.evaluation",
    "evaluate": "workbench.metrics.evaluation",
    "interpolated_precision_recall": "workbench.metrics.evaluation",
    "Measure": "workbench.metrics.names",
    "MeasureError": "workbench.metrics.names",
    "parse_measure": "workbench.metrics.names",
    "trec_order": "workbench.trec.order",
}

__all__ = [
    "Evaluation",
    "Measure",
    "MeasureError",
    "evaluate",
    "interpolated_precision_recall",
    "parse_measure",
    "trec_order",
]


__getattr__ = lazy_attributes(__name__, _HOMES)
