"""DataFrames in and out (PyTerrier's and ir_measures' columns): the same numbers as from
files, the refusals a file gets, and the HTML that Jupyter shows."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from workbench import metrics
from workbench.tabular import Cell, Table
from workbench.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run

pd = pytest.importorskip("pandas")
frames = pytest.importorskip("workbench.frames")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MEASURES = ["official", "ndcg_cut.10", "bpref", "infAP", "P(rel=2)@5", "RR@10", "Judged@10"]


def _random_files(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    qrels = {
        str(q): {f"D{d}": rng.choice([-1, 0, 0, 1, 2]) for d in rng.sample(range(60), 20)}
        for q in range(1, 9)
    }
    run = {
        str(q): {f"D{d}": round(rng.random(), 2) for d in rng.sample(range(80), 30)}
        for q in range(2, 11)  # topic 1 missing, topics 9 and 10 unjudged
    }
    write_qrels(qrels, tmp_path / "qrels")
    write_run(run, tmp_path / "run", tag="r1")
    return tmp_path / "qrels", tmp_path / "run"


@pytest.mark.parametrize("style", ["pyterrier", "ir_measures"])
@pytest.mark.parametrize("seed", range(4))
def test_frames_give_the_numbers_files_give(tmp_path: Path, style: str, seed: int) -> None:
    qrels_path, run_path = _random_files(tmp_path, seed)
    from_files = metrics.evaluate(read_qrels(qrels_path), read_run(run_path), MEASURES)
    qrels = frames.qrels_frame(read_qrels(qrels_path), style=style)
    run = frames.run_frame(read_run(run_path), style=style).sample(frac=1, random_state=seed)
    assert metrics.evaluate(qrels, run, MEASURES).per_topic == from_files.per_topic
    files_c = metrics.evaluate(
        read_qrels(qrels_path), read_run(run_path), MEASURES, average_over_all_topics=True
    )
    frames_c = metrics.evaluate(qrels, run, MEASURES, average_over_all_topics=True)
    assert frames_c.summary.pop("runid") == "run"  # a frame has no run tag
    assert files_c.summary.pop("runid") == "r1"
    assert frames_c.summary == files_c.summary


def test_pyterrier_frames_as_pyterrier_makes_them() -> None:
    """qid and docno as strings, rank from 0, extra columns (docid, query) ignored; integer
    ids are read as their text, as in a file."""
    run = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q2"],
            "docid": [7, 3, 9],
            "docno": ["d7", "d3", "d9"],
            "score": [2.5, 1.0, 0.5],
            "rank": [0, 1, 0],
            "query": ["a b", "a b", "c"],
        }
    )
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["d3", "d9"], "label": [1, 2]})
    result = metrics.evaluate(qrels, run, ["recip_rank"])
    assert result.per_topic == {"q1": {"recip_rank": 0.5}, "q2": {"recip_rank": 1.0}}
    numeric = pd.DataFrame({"query_id": [1, 1], "doc_id": [5, 6], "score": [1.0, 2.0]})
    assert frames.run_from_frame(numeric, tag="t").topic_lines("1").docnos == ["5", "6"]


def test_frames_out_and_back(tmp_path: Path) -> None:
    run = read_run(EXAMPLES / "run.txt")
    again = frames.run_from_frame(frames.run_frame(run), tag=run.tag)
    assert again.topics() == run.topics()
    assert np.array_equal(again.docnos, run.docnos) and np.array_equal(again.scores, run.scores)
    assert np.array_equal(again.ranks, run.ranks)
    qrels = read_qrels(EXAMPLES / "qrels.txt")
    back = frames.qrels_from_frame(frames.qrels_frame(qrels))
    assert list(back.entries()) == list(qrels.entries())
    assert list(frames.qrels_frame(qrels, style="ir_measures").columns) == [
        "query_id",
        "iteration",
        "doc_id",
        "relevance",
    ]


def test_evaluation_frames_long_and_summary() -> None:
    result = metrics.evaluate(
        read_qrels(EXAMPLES / "qrels.txt"), read_run(EXAMPLES / "run.txt"), ["map", "gm_map"]
    )
    long = result.to_frame()
    assert list(long.columns) == ["query_id", "measure", "value"]
    assert set(long["measure"]) == {"map"}  # gm_map has no per-topic value
    assert len(long) == len(result.per_topic)
    assert list(result.to_frame(style="pyterrier").columns) == ["qid", "measure", "value"]
    summary = result.to_frame(summary=True)
    assert dict(zip(summary["measure"], summary["value"], strict=True)) == result.summary


def _run(qids: list, docnos: list, scores: list) -> tuple[dict, str]:
    return {"qid": qids, "docno": docnos, "score": scores}, "run"


def _qrels(qids: list, docnos: list, labels: list) -> tuple[dict, str]:
    return {"qid": qids, "docno": docnos, "label": labels}, "qrels"


@pytest.mark.parametrize(
    ("given", "expected", "row"),
    [
        (_run(["1", "1"], ["a", "a"], [1.0, 2.0]), "each docno at most once", 2),
        (_run(["1", None], ["a", "b"], [1.0, 2.0]), "a value in column 'qid'", 2),
        (_run([1.5, 2.0], ["a", "b"], [1.0, 2.0]), "a string or integer id", 1),
        (_run(["1"], ["a"], ["high"]), "a number in column 'score'", 1),
        (_qrels(["1", "1"], ["a", "a"], [1, 0]), "one judgment per (qid, docno)", 2),
        (_qrels(["1"], ["a"], [0.5]), "an integer in column 'label'", 1),
    ],
)
def test_frames_are_refused_as_files_are_naming_the_row(given, expected: str, row: int) -> None:
    data, kind = given
    read = frames.run_from_frame if kind == "run" else frames.qrels_from_frame
    with pytest.raises(TrecFormatError) as refused:
        read(pd.DataFrame(data))
    assert expected in refused.value.expected
    assert refused.value.line_number == row
    assert refused.value.path == f"{kind} DataFrame"


def test_columns_of_both_conventions_or_of_neither_are_refused() -> None:
    both = pd.DataFrame(
        {"qid": ["1"], "query_id": ["1"], "docno": ["a"], "doc_id": ["a"], "score": [1.0]}
    )
    with pytest.raises(ValueError, match="both conventions"):
        frames.run_from_frame(both)
    with pytest.raises(ValueError, match="needs the columns qid, docno, label or query_id"):
        frames.qrels_from_frame(pd.DataFrame({"qid": ["1"], "docno": ["a"], "grade": [1]}))


def test_evaluations_and_tables_show_as_escaped_html() -> None:
    qrels = {str(q): {"a": 1} for q in range(25)}
    run = {str(q): {"a": 1.0, "<b>": 0.5} for q in range(25)}
    result = metrics.evaluate(qrels, run, ["P@1", "map"])
    result.run_tag = "<script>x</script>"
    shown = result._repr_html_()
    assert "<script>" not in shown and "&lt;script&gt;x&lt;/script&gt;" in shown
    assert "<th>P_1</th>" in shown and "<td>all</td>" in shown
    assert "5 more topics, not shown here" in shown  # 25 topics, 20 shown
    table = Table(["run", "map"], [[Cell("a&b"), Cell(0.25, bold=True, marks="x<")]], "cap")
    assert table._repr_html_() == (
        "<table><caption>cap</caption><thead><tr><th>run</th><th>map</th></tr></thead><tbody>"
        "<tr><td>a&amp;b</td><td><b>0.2500</b><sup>x&lt;</sup></td></tr></tbody></table>"
    )


def test_agreement_reports_show_their_tables_as_html() -> None:
    from workbench.services.agreement import AgreementReport, GroupAgreement, PairAgreement

    overall = GroupAgreement("all", 10, 2, 8, 0.75, 0.5, 0.52, "not good", "moderate")
    pair = PairAgreement(
        "ann", "<bob>", 8, 0.75, 0.5, 0.1, 0.9, 0.2, 0.8, "not good", "moderate", 0.49
    )
    report = AgreementReport("c", False, 1, ["ann", "<bob>"], overall, [overall], [pair], [])
    shown = report._repr_html_()
    assert shown.count("<table>") >= 2
    assert "&lt;bob&gt;" in shown and "<bob>" not in shown
    assert "<th>Landis &amp; Koch</th>" in shown and "<td>moderate</td>" in shown
