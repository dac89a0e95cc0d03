"""A run's first documents of every topic in trec_eval order, all topics at once
(`LoadedRun.tops`, the leave-one-out's contributions): what `ranked_list` gives topic by topic."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.property_examples import examples
from workbench.services.evaluation_inputs import LoadedRun
from workbench.trec import read_run


def _run(rng: np.random.Generator, *, nan: bool) -> LoadedRun:
    lines = []
    for q in rng.permutation([f"q{i}" for i in range(8)])[: int(rng.integers(1, 9))]:
        for k in range(int(rng.integers(1, 30))):
            score = rng.choice(["1", "0.5", "0.25", "2", "0.50000000001", "-1", "1e-3"])
            if nan and rng.random() < 0.05:
                score = "nan"
            docno = f"D{int(rng.integers(0, 25))}" if rng.random() < 0.9 else "é" * (k % 3 + 1)
            lines.append(f"{q} Q0 {docno} {k} {score} t\n")
    trec = read_run(io.BytesIO("".join(lines).encode()), check_duplicates=False)
    return LoadedRun("t", "", True, trec)


@pytest.mark.parametrize("seed", range(examples(40)))
def test_tops_are_each_topics_ranked_list(seed: int) -> None:
    rng = np.random.default_rng(seed)
    run = _run(rng, nan=seed % 4 == 3)
    for limit in (1, 3, 10, 100):  # a contribution depth is at least 1
        tops = run.tops(limit)
        assert list(tops) == run.trec_run.topics()
        for qid in run.trec_run.topics():
            assert tops[qid] == list(run.ranked_list(qid, limit).docnos), (qid, limit)
