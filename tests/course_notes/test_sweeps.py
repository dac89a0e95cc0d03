"""Parameter grids from tags or a mapping file, and K-fold cross-validation over topics."""

from __future__ import annotations

import math

import pytest

from workbench import sweeps
from workbench.reports import plots

# A is excellent on one topic only; B is steady; C is steadier and worse
SCORES = {
    "A": {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0},
    "B": {"q1": 0.0, "q2": 0.3, "q3": 0.3, "q4": 0.3},
    "C": {"q1": 0.2, "q2": 0.2, "q3": 0.2, "q4": 0.2},
}


def test_tags_parse_with_a_pattern() -> None:
    tags = ["bm25_k1=0.9_b=0.4", "bm25_k1=1.2_b=0.75", "tfidf", "bm25_k1=1.2_b=x"]
    grid = sweeps.grid_from_tags(tags, "bm25_k1={k1}_b={b}")
    assert grid.parameters == ("k1", "b")
    assert grid.settings["bm25_k1=0.9_b=0.4"] == {"k1": 0.9, "b": 0.4}
    assert grid.settings["bm25_k1=1.2_b=x"] == {"k1": 1.2, "b": "x"}
    assert grid.excluded == ("tfidf",)
    assert grid.values("b") == [0.4, 0.75, "x"]


def test_patterns_that_cannot_define_a_grid() -> None:
    with pytest.raises(sweeps.SweepError, match="no \\{parameter\\}"):
        sweeps.grid_from_tags(["a"], "bm25")
    with pytest.raises(sweeps.SweepError, match="twice"):
        sweeps.grid_from_tags(["a"], "{k}_{k}")
    with pytest.raises(sweeps.SweepError, match="literal between"):
        sweeps.grid_from_tags(["a"], "{k}{b}")
    with pytest.raises(sweeps.SweepError, match="no run tag matches"):
        sweeps.grid_from_tags(["tfidf"], "bm25_{k}")
    with pytest.raises(sweeps.SweepError, match="same setting"):
        sweeps.grid_from_tags(["r_1", "r_1.0"], "r_{k}")


def test_a_mapping_file() -> None:
    text = "tag\tk1\tb\nrun1\t0.9\t0.4\nrun2\t1.2\t0.75\n"
    grid = sweeps.grid_from_mapping(text, ["run1", "run2", "other"], name="grid.tsv")
    assert grid.settings == {"run1": {"k1": 0.9, "b": 0.4}, "run2": {"k1": 1.2, "b": 0.75}}
    assert grid.excluded == ("other",)
    with pytest.raises(sweeps.SweepError, match=r"grid\.csv:3: 'nope' is not a run"):
        sweeps.grid_from_mapping("tag,k1\nrun1,1\nnope,2\n", ["run1"], name="grid.csv")
    with pytest.raises(sweeps.SweepError, match=r"grid\.csv:1: expected a header"):
        sweeps.grid_from_mapping("run,k1\nrun1,1\n", ["run1"], name="grid.csv")
    with pytest.raises(sweeps.SweepError, match=r"grid\.csv:2: expected 2 fields"):
        sweeps.grid_from_mapping("tag,k1\nrun1,1,2\n", ["run1"], name="grid.csv")


def test_leave_one_topic_out_shows_the_overfitting_gap() -> None:
    """Hindsight picks A (mean 0.25). Holding out q1, B wins the training topics and scores 0
    on q1; holding out any other topic, A wins training (1/3) and scores 0 there. So the
    cross-validated score is 0 and the gap 0.25."""
    result = sweeps.cross_validate(SCORES, k=4, seed=3)
    assert (result.best_tag, result.best_score) == ("A", 0.25)
    by_topic = {fold.test_topics: fold for fold in result.folds}
    assert by_topic[("q1",)].chosen == "B" and by_topic[("q1",)].test_score == 0.0
    assert by_topic[("q2",)].chosen == "A" and by_topic[("q2",)].training_score == 1 / 3
    assert by_topic[("q2",)].best_test_score == 0.3
    assert result.cv_score == 0.0
    assert result.overfitting_gap == 0.25
    assert result.chosen == {"A": 3, "B": 1}


def test_two_folds_are_seeded_and_cover_every_topic_once() -> None:
    first = sweeps.cross_validate(SCORES, k=2, seed=7)
    assert first == sweeps.cross_validate(SCORES, k=2, seed=7)
    topics = [q for fold in first.folds for q in fold.test_topics]
    assert sorted(topics) == ["q1", "q2", "q3", "q4"]
    # the cross-validated score is the topic-weighted mean of the folds' held-out scores
    weighted = sum(f.test_score * len(f.test_topics) for f in first.folds) / 4
    assert first.cv_score == pytest.approx(weighted)


def test_cross_validation_refuses_bad_input() -> None:
    with pytest.raises(sweeps.SweepError, match="K must be"):
        sweeps.cross_validate(SCORES, k=5)
    with pytest.raises(sweeps.SweepError, match="same topics"):
        sweeps.cross_validate({"A": {"q1": 1.0}, "B": {"q2": 1.0}}, k=2)


def test_heat_matrix_and_plot() -> None:
    tags = ["r_k1=1_b=0.5", "r_k1=2_b=0.5", "r_k1=1_b=1"]
    grid = sweeps.grid_from_tags(tags, "r_k1={k1}_b={b}")
    means = {"r_k1=1_b=0.5": 0.2, "r_k1=2_b=0.5": 0.3, "r_k1=1_b=1": 0.1}
    xs, ys, rows = sweeps.heat_matrix(grid, means, "k1", "b")
    assert (xs, ys) == ([1.0, 2.0], [0.5, 1.0])
    assert rows[0] == [0.2, 0.3] and rows[1][0] == 0.1 and math.isnan(rows[1][1])
    svg = plots.parameter_heatmap(xs, ys, rows, x_name="k1", y_name="b", measure="map",
                                  best=(2.0, 0.5))  # fmt: skip
    assert svg.startswith("<?xml") and "0.300" in svg and "k1" in svg
    with pytest.raises(sweeps.SweepError, match="not a parameter"):
        sweeps.heat_matrix(grid, means, "k1", "mu")
