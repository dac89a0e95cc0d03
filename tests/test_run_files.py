"""Runs given as files: one tag each, scored per topic by one measure."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.metrics import MeasureError
from workbench.run_files import DuplicateRunTag, runs_by_tag, score_runs

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 d4 2\n"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_runs_are_keyed_by_tag_in_file_order(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.run", "1 Q0 d1 1 3.0 alpha\n")
    b = _write(tmp_path, "b.run", "1 Q0 d2 1 3.0 beta\n")
    assert list(runs_by_tag([b, a])) == ["beta", "alpha"]


def test_two_files_with_one_tag_are_refused_naming_the_second(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.run", "1 Q0 d1 1 3.0 same\n")
    b = _write(tmp_path, "b.run", "1 Q0 d2 1 3.0 same\n")
    with pytest.raises(DuplicateRunTag, match=r"b\.run: run tag 'same' appears twice"):
        runs_by_tag([a, b])


def test_every_run_is_scored_per_topic_under_the_printed_measure_name(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "q.txt", QRELS)
    # alpha: topic 1 ranks d1 (rel), d2, d3 (rel): AP = (1/1 + 2/3)/2; topic 2 finds d4: AP 1.
    alpha = _write(
        tmp_path,
        "a.run",
        "1 Q0 d1 1 3.0 alpha\n1 Q0 d2 2 2.0 alpha\n1 Q0 d3 3 1.0 alpha\n2 Q0 d4 1 1.0 alpha\n",
    )
    # beta: topic 1 ranks only d2 (non-relevant): AP 0; no line for topic 2.
    beta = _write(tmp_path, "b.run", "1 Q0 d2 1 1.0 beta\n")
    scored = score_runs(qrels, [alpha, beta], "P.2", relevance_level=1)
    assert scored.measure == "P_2"
    assert scored.per_topic == {"alpha": {"1": 0.5, "2": 0.5}, "beta": {"1": 0.0}}
    ap = score_runs(qrels, [alpha], "map", relevance_level=1)
    assert ap.measure == "map"
    assert ap.per_topic["alpha"] == pytest.approx({"1": (1 + 2 / 3) / 2, "2": 1.0})
    # With relevance level 2 only d4 counts: topic 1 has no relevant document.
    strict = score_runs(qrels, [alpha], "P.2", relevance_level=2)
    assert strict.per_topic["alpha"]["2"] == 0.5


@pytest.mark.parametrize("measure", ["runid", "num_q"])
def test_a_measure_without_per_topic_scores_is_refused(tmp_path: Path, measure: str) -> None:
    qrels = _write(tmp_path, "q.txt", QRELS)
    run = _write(tmp_path, "a.run", "1 Q0 d1 1 3.0 alpha\n")
    with pytest.raises(MeasureError, match=f"measure '{measure}' has no score per topic"):
        score_runs(qrels, [run], measure, relevance_level=1)
