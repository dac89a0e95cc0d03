"""The generated demo data: readable, seeded, and runs of clearly different quality."""

from __future__ import annotations

import random

import pytest

from workbench import demo

pytestmark = pytest.mark.smoke  # also run against the installed wheel (scripts/check-wheel.sh)


def precision_at_10(lines: list[str], grades: dict[str, dict[str, int]]) -> float:
    """Mean over topics of the fraction of the top 10 with grade >= 1."""
    top: dict[str, list[str]] = {}
    for line in lines:
        qid, _, docno, rank, _, _ = line.split()
        if int(rank) <= 10:
            top.setdefault(qid, []).append(docno)
    return sum(
        sum(grades[qid].get(d, 0) >= 1 for d in docs) / 10 for qid, docs in top.items()
    ) / len(top)


def test_runs_are_ordered_by_quality() -> None:
    rng = random.Random(demo.SEED)
    documents, grades = demo.generate(rng)
    runs = demo.run_lines(rng, documents, grades)
    scores = [precision_at_10(runs[tag], grades) for tag in demo.RUN_QUALITY]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] - scores[-1] > 0.5


def test_documents_are_seeded_and_readable() -> None:
    first, grades = demo.generate(random.Random(demo.SEED))
    again, _ = demo.generate(random.Random(demo.SEED))
    assert first == again
    assert len(first) == 300 and len({d.docno for d in first}) == 300
    assert all(d.title and len(d.text.split()) >= 20 for d in first)
    for topic in demo.TOPICS:
        counts = [list(grades[topic.qid].values()).count(g) for g in (0, 1, 2)]
        assert counts == [demo.DOCS_PER_GRADE[g] for g in (0, 1, 2)]
