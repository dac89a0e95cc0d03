"""The metric module: trec_eval-exact measures.

``evaluate(qrels, run, ["map", "P@10", "nDCG@10"])`` returns an :class:`Evaluation` with
per-topic values and the summary, keyed by trec_eval's printed names (``map``, ``P_10``,
``ndcg_cut_10``).  Imports neither Flask nor SQLAlchemy.
"""

from workbench.metrics.evaluation import Evaluation, evaluate, interpolated_precision_recall
from workbench.metrics.names import Measure, MeasureError, parse_measure
from workbench.metrics.ranking import trec_order

__all__ = [
    "Evaluation",
    "Measure",
    "MeasureError",
    "evaluate",
    "interpolated_precision_recall",
    "parse_measure",
    "trec_order",
]
