"""Report tables and plots, on Sakai's 3 systems x 20 topics fixture (docs/methods.md 4.7)."""

from __future__ import annotations

import dataclasses
import io
import json
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest

from workbench.reports import plots
from workbench.reports.document import Report, SectionResult
from workbench.reports.evaluation import comparisons_table, letter, runs_table, tukey_table
from workbench.reports.formats import REPORT_FORMATS
from workbench.reports.tables import render, to_csv, to_latex
from workbench.services.evaluation import EvaluationTable, RunScores, compare_runs, tukey_hsd
from workbench.services.evaluation_inputs import TopicScope
from workbench.tabular import Cell, Table, bold_best

SAKAI = {
    "a": ".70 .30 .20 .60 .40 .40 .00 .70 .10 .30 .50 .40 .00 .60 .50 .30 .10 .50 .20 .10",
    "b": ".50 .10 .00 .20 .40 .30 .00 .50 .30 .30 .40 .40 .10 .40 .20 .10 .10 .60 .30 .20",
    "c": ".00 .00 .20 .10 .30 .30 .10 .20 .40 .40 .40 .30 .30 .20 .20 .20 .10 .50 .40 .30",
}


@pytest.fixture
def sakai() -> EvaluationTable:
    runs = []
    for tag, text in SAKAI.items():
        values = [float(v) for v in text.split()]
        per_topic = {f"t{i:02d}": {"map": v} for i, v in enumerate(values)}
        runs.append(RunScores(tag, "", True, {"map": float(np.mean(values))}, per_topic))
    topics = tuple(sorted(runs[0].per_topic))
    return EvaluationTable(
        "sakai", "final", 1, ["map"], runs, TopicScope("final", "all", topics, 20)
    )


def test_letters():
    assert [letter(i) for i in (0, 1, 25, 26, 27, 52)] == ["a", "b", "z", "aa", "ab", "ba"]


def test_pairwise_t_with_holm_gives_the_book_values(sakai):
    comparisons = compare_runs(sakai, test="t", correction="holm", alpha=0.15)
    assert [round(p.p_value, 4) for p in comparisons.pairs] == [0.0478, 0.1232, 0.5218]
    assert [round(p.p_adjusted, 4) for p in comparisons.pairs] == [0.1434, 0.2463, 0.5218]
    assert [p.significant for p in comparisons.pairs] == [True, False, False]
    assert comparisons.beats("map", "a") == ["b"] and comparisons.beats("map", "b") == []
    assert comparisons.beaten("map") == {"a": ["b"]}
    loose = compare_runs(sakai, test="t", correction="holm", alpha=0.6)  # all 3 pairs
    assert loose.beaten("map") == {"a": ["b", "c"], "b": ["c"]}
    assert loose.to_dict() == dataclasses.asdict(loose)
    assert comparisons.to_dict() == dataclasses.asdict(comparisons)


def test_runs_table_marks_bold_and_caption(sakai):
    comparisons = compare_runs(sakai, test="t", correction="holm", alpha=0.15)
    table = runs_table(sakai, comparisons)
    a, b, c = table.rows
    assert (a[2].bold, b[2].bold, c[2].bold) == (True, False, False)
    assert (a[2].marks, b[2].marks, c[2].marks) == ("b", "", "")
    assert "paired t-test" in table.caption and "Holm correction" in table.caption
    assert "alpha = 0.15" in table.caption
    mean_a = np.mean([float(v) for v in SAKAI["a"].split()])
    latex = to_latex(table)
    assert rf"\textbf{{{mean_a:.4f}}}$^{{b}}$" in latex
    assert r"\hphantom{$^{a}$}" in latex  # unmarked numbers padded to the same width
    assert r"\caption{" in latex and r"\toprule" in latex and r"\bottomrule" in latex
    md = render(table, "md")
    assert f"| a | a | **{mean_a:.4f}**<sup>b</sup> |" in md
    text = render(table, "text")
    assert f"{mean_a:.4f}*^b" in text
    rows = json.loads(render(table, "json"))["rows"]
    assert rows[0]["map"] == pytest.approx(mean_a)


def test_comparisons_and_tukey_tables(sakai):
    comparisons = compare_runs(sakai, test="randomization", correction="bonferroni")
    table = comparisons_table(comparisons)
    first = table.rows[0]
    assert [first[1].value, first[2].value] == ["a", "b"]
    assert round(first[6].value, 4) == 0.0659  # exact sign-flip p (book value)
    assert first[11].value == "10/5/5"
    assert "randomization test" in table.caption and "Bonferroni" in table.caption
    tukey = tukey_table(tukey_hsd(sakai, "map"), "map")
    assert [round(r[4].value, 3) for r in tukey.rows] == [0.257, 0.096, 0.855]


def test_captions_say_how_resampling_tests_found_their_p_values(sakai):
    """A randomization test's p-values are Monte Carlo estimates from B random sign vectors
    above 16 topics that differ and exact below: both captions (runs table, pairwise table)
    say so with the counts, in every format; the bootstrap's say B; the t-test's nothing."""
    comparisons = compare_runs(sakai, test="randomization", correction="holm", n_resamples=500)
    exact = sum(1 for p in comparisons.pairs if p.n_topics - p.ties <= 16)
    assert 0 < exact < len(comparisons.pairs)  # Sakai's three pairs: both kinds
    sentence = (
        "Randomization test p-values: Monte Carlo estimates from B = 500 random sign vectors, "
        f"p = (hits + 1)/(B + 1), for the {3 - exact} of the 3 tests with more than 16 topics "
        f"that differ; exact (all 2^n sign vectors enumerated) for the {exact} of the 3 tests "
        "with n <= 16 topics that differ."
    )
    assert comparisons.p_values == sentence
    tables = (runs_table(sakai, comparisons), comparisons_table(comparisons))
    for table in tables:
        assert table.caption.endswith(" " + sentence)
        assert "Monte Carlo estimates from B = 500" in table._repr_html_()  # the web's too
    said = "Monte Carlo estimates from B = 500 random sign vectors"
    section = SectionResult("pairwise-tests", "Pairwise tests", tables=tables)
    report = Report("sakai", "final", {}, {"description": "3 runs"}, (), (), (section,))
    for fmt, kind in REPORT_FORMATS.items():
        if kind.render is None:
            continue
        found = kind.render(report)
        texts = [found.decode()] if fmt != "zip" else [
            zipfile.ZipFile(io.BytesIO(found)).read(name).decode()
            for name in zipfile.ZipFile(io.BytesIO(found)).namelist()
        ]  # fmt: skip
        assert all(text.count(said) == 2 for text in texts), fmt  # both captions
    assert comparisons.to_dict()["p_values"] == sentence
    many = compare_runs(sakai, test="randomization", correction="holm", n_resamples=10_000)
    assert "B = 10,000 random sign vectors" in many.p_values
    boot = compare_runs(sakai, test="bootstrap", correction="holm", n_resamples=300)
    assert boot.p_values == (
        "Bootstrap test p-values: Monte Carlo estimates from B = 300 resamples of the topics, "
        "p = (hits + 1)/(B + 1)."
    )
    assert comparisons_table(boot).caption.endswith(boot.p_values)
    t = compare_runs(sakai, test="t", correction="holm")
    assert t.p_values == "" and comparisons_table(t).caption.endswith("tied/worse.")


def test_bold_best_rounds_and_skips_constant_columns():
    table = Table(["x", "y"], [[Cell(0.12341), Cell(1.0)], [Cell(0.12339), Cell(1.0)],
                               [Cell(0.1), Cell(1.0)]], digits=3)  # fmt: skip
    bold_best(table, 0)
    bold_best(table, 1)
    assert [r[0].bold for r in table.rows] == [True, True, False]  # 0.123 ties after rounding
    assert not any(r[1].bold for r in table.rows)


def test_csv_keeps_15_significant_digits_and_latex_escapes():
    table = Table(["run_tag", "P_10"], [[Cell("my_run&co"), Cell(1 / 3, marks="b")]])
    assert to_csv(table).splitlines() == [
        "run_tag,P_10,P_10 marks",
        "my_run&co,0.333333333333333,b",
    ]
    noisy = Table(
        ["x"], [[Cell(0.1 + 0.2)], [Cell(np.mean([0.9, 0.95]))], [Cell(2.0)], [Cell(1e-20)]]
    )
    assert to_csv(noisy).splitlines() == ["x", "0.3", "0.925", "2", "1e-20"]
    assert r"my\_run\&co" in to_latex(table) and r"P\_10" in to_latex(table)


def test_plots_are_deterministic_svg():
    curve = plots.precision_recall_curves({"r": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2,
                                                0.1, 0.0]})  # fmt: skip
    assert curve == plots.precision_recall_curves(
        {"r": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]}
    )
    heat = plots.confusion_heatmap([[5, 1], [2, 7]], [0, 1], first="alice", second="bob")
    bars = plots.per_topic_bars({"r": {"q1": 0.5}}, ["q1", "q2"], measure="map")
    for svg in (curve, heat, bars):
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
    texts = "".join(heat.split())
    assert ">7<" in texts and ">alice<" in texts
    with pytest.raises(ValueError, match="11 interpolated"):
        plots.precision_recall_curves({"r": [1.0]})


def test_confusion_heat_map_scale_starts_at_zero_and_every_count_is_readable() -> None:
    from matplotlib.colors import to_rgba

    from workbench.reports.plots import confusion_figure

    figure = confusion_figure([[8, 12], [20, 16]], [0, 1], first="alice", second="bob")
    axes = figure.axes[0]
    norm = axes.images[0].norm
    assert (norm.vmin, norm.vmax) == (0, 20)  # not autoscaled from the smallest count, 8
    colours = {t.get_text(): to_rgba(t.get_color()) for t in axes.texts}
    black, white = to_rgba("black"), to_rgba("white")
    assert colours == {"8": black, "12": white, "20": white, "16": white}


def test_notes_name_each_runs_missing_and_unjudged_topics():
    runs = [
        RunScores("a", "", True, {}, {}, missing_topics=["q2", "q3"], unjudged_topics=["x9"]),
        RunScores("b", "", True, {}, {}),
    ]
    scope = TopicScope("final", "all", ("q1", "q2", "q3"), 3)
    table = EvaluationTable("c", "final", 1, ["map"], runs, scope)
    assert table.notes() == [
        "Every run is evaluated over the 3 judged topics of the final qrels; a topic a run lacks "
        "scores 0 (trec_eval -c).",
        "a lacks 2 judged topic(s), scored 0: q2, q3.",
        "a has 1 topic(s) without judgements, not evaluated: x9.",
    ]
