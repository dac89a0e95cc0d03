"""What the leave-one-out sections read, made the lean way (issue 29 §2): a run's first k
documents of a topic ordered without ordering (or decoding) the whole topic, equal to the
whole ranked list's first k, with ties at the k-th score, NaN scores and k beyond the lines."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.services.evaluation_inputs import LoadedRun
from workbench.trec import Run


def _run(rng: np.random.Generator, nan: bool) -> Run:
    topics = {}
    for q in range(6):
        n = int(rng.integers(1, 40))
        scores = rng.integers(0, 8, n).astype(float) / 2  # many ties
        if nan and q % 2:
            scores[rng.integers(0, n)] = np.nan
        docnos = rng.choice(60, n, replace=False)
        topics[f"q{q}"] = {f"D{d:02d}": float(s) for d, s in zip(docnos, scores, strict=True)}
    return Run.from_dict(topics, tag="r")


@pytest.mark.parametrize("nan", [False, True])
def test_a_topics_first_k_documents_equal_the_whole_ranked_lists(nan: bool) -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        loaded = LoadedRun("r", "", True, _run(rng, nan))
        for qid in loaded.trec_run.topics():
            whole = loaded.ranked_lists[qid]
            for k in (1, 2, 5, 10, 39, 100):
                lean = loaded.ranked_list(qid, k)
                assert list(lean.top(k)) == list(whole.top(k)), (qid, k)
                assert lean.scores[:k].tolist() == pytest.approx(
                    whole.scores[:k].tolist(), nan_ok=True
                )
