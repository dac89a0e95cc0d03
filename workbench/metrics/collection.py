"""Set measures at collection scale (course notes 001 and 002): they need the collection size N.

Named additions that never change a trec_eval measure. With R relevant documents, the
retrieved set B (the run's list for the topic, truncated at ``max_results``) and N documents
in the collection, the confusion matrix of a topic is TP = |rel ∩ ret|, FP = |ret| - TP,
FN = R - TP, TN = N - TP - FP - FN, and

* accuracy = (TP + TN) / N, error = 1 - accuracy = (FP + FN) / N,
* fallout = FP / (N - R)  (non-relevant retrieved over the non-relevant in the collection),
* precision = TP / |ret|, recall = TP / R, their arithmetic mean, and F1 = 2PR / (P + R).

Unjudged documents count as non-relevant, as in trec_eval. The counts come from the metric
module (``num_ret``, ``num_rel``, ``num_rel_ret``), so they are trec_eval's.

Why accuracy is not used in IR: the collection is overwhelmingly non-relevant (TN dominates),
so a system that retrieves nothing already scores an accuracy close to 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.metrics.evaluation import evaluate
from workbench.trec import Qrels, Run

IMBALANCE_NOTE = (
    "Accuracy is not used to rank retrieval runs: almost every document of the collection is "
    "non-relevant, so even an empty result is almost always 'correct' (accuracy near 1)."
)


@dataclass(frozen=True)
class CollectionSetMeasures:
    """The confusion matrix of one retrieved set against the whole collection, and its measures."""

    num_docs: int
    relevant: int
    retrieved: int
    relevant_retrieved: int

    def __post_init__(self) -> None:
        counts = (self.relevant, self.retrieved, self.relevant_retrieved)
        if min(counts) < 0:
            raise ValueError(f"counts must be non-negative: {counts}")
        if self.relevant_retrieved > min(self.relevant, self.retrieved):
            raise ValueError(
                f"{self.relevant_retrieved} relevant retrieved exceeds relevant "
                f"({self.relevant}) or retrieved ({self.retrieved})"
            )
        if self.num_docs < self.relevant + self.false_positives:
            raise ValueError(
                f"the collection size N = {self.num_docs} is smaller than the {self.relevant} "
                f"relevant plus {self.false_positives} non-relevant retrieved documents"
            )

    @property
    def true_positives(self) -> int:
        return self.relevant_retrieved

    @property
    def false_positives(self) -> int:
        return self.retrieved - self.relevant_retrieved

    @property
    def false_negatives(self) -> int:
        return self.relevant - self.relevant_retrieved

    @property
    def true_negatives(self) -> int:
        return self.num_docs - self.relevant - self.false_positives

    @property
    def accuracy(self) -> float:
        """(TP + TN) / N."""
        return (self.true_positives + self.true_negatives) / self.num_docs

    @property
    def error(self) -> float:
        """1 - accuracy = (FP + FN) / N."""
        return (self.false_positives + self.false_negatives) / self.num_docs

    @property
    def fallout(self) -> float:
        """FP / (N - R); 0 when the whole collection is relevant."""
        nonrelevant = self.num_docs - self.relevant
        return self.false_positives / nonrelevant if nonrelevant else 0.0

    @property
    def precision(self) -> float:
        return self.relevant_retrieved / self.retrieved if self.retrieved else 0.0

    @property
    def recall(self) -> float:
        return self.relevant_retrieved / self.relevant if self.relevant else 0.0

    @property
    def arithmetic_mean(self) -> float:
        """(P + R) / 2: the combination the course notes show is easy to game."""
        return (self.precision + self.recall) / 2

    @property
    def f1(self) -> float:
        """Harmonic mean 2PR / (P + R), 0 when both are 0."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in MEASURES}


MEASURES = ("accuracy", "error", "fallout", "precision", "recall", "arithmetic_mean", "f1")


def set_measures(
    num_docs: int, relevant: int, retrieved: int, relevant_retrieved: int
) -> CollectionSetMeasures:
    """The collection-scale set measures from the four counts (N, R, |ret|, |rel ∩ ret|)."""
    if num_docs < 1:
        raise ValueError(f"the collection size N must be at least 1, got {num_docs}")
    return CollectionSetMeasures(num_docs, relevant, retrieved, relevant_retrieved)


@dataclass(frozen=True)
class CollectionEvaluation:
    """Per topic (the topics trec_eval evaluates) and the mean over those topics."""

    num_docs: int
    per_topic: dict[str, CollectionSetMeasures]

    @property
    def mean(self) -> dict[str, float]:
        n = len(self.per_topic)
        return {
            m: (sum(getattr(t, m) for t in self.per_topic.values()) / n if n else float("nan"))
            for m in MEASURES
        }


def collection_set_measures(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    num_docs: int,
    *,
    relevance_level: int = 1,
    max_results: int | None = None,
    average_over_all_topics: bool = False,
) -> CollectionEvaluation:
    """Accuracy, error, fallout, precision, recall, their mean and F1 of a run's retrieved sets,
    per topic, with N = ``num_docs``; topics and counts as trec_eval's (``-M``, ``-c``, ``-l``)."""
    if num_docs < 1:
        raise ValueError(f"the collection size N must be at least 1, got {num_docs}")
    result = evaluate(
        qrels,
        run,
        ["num_ret", "num_rel", "num_rel_ret"],
        relevance_level=relevance_level,
        max_results=max_results,
        average_over_all_topics=average_over_all_topics,
    )
    per_topic = {
        qid: set_measures(num_docs, int(v["num_rel"]), int(v["num_ret"]), int(v["num_rel_ret"]))
        for qid, v in result.per_topic.items()
    }
    return CollectionEvaluation(num_docs, per_topic)
