"""The course notes' commands end to end (files, and the fixture campaign)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.read_only import forbid_write_sessions
from workbench.cli import main

PATTERN = "RNNRNRNNRN"


def _invoke(*args: str, database_url: str | None = None):
    prefix = ["--db", database_url] if database_url else []
    return CliRunner().invoke(main, [*prefix, *args], catch_exceptions=False)


@pytest.fixture
def example_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"q 0 d{i:02d} {int(c == 'R')}\n" for i, c in enumerate(PATTERN, 1))
        + "".join(f"q 0 missed{i} 1\n" for i in range(4))
    )
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q Q0 d{i:02d} {i} {100 - i} notes\n" for i in range(1, 11)))
    return qrels, run


def test_collection_measures_of_the_course_notes_example(example_files):
    qrels, run = example_files
    result = _invoke(
        "collection-measures", str(qrels), str(run), "--num-docs", "1000000", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["rows"][-1]
    assert row["Topic"] == "all"
    assert row["accuracy"] == pytest.approx(0.99999)
    assert row["error"] == pytest.approx(0.00001)
    assert (row["precision"], row["recall"]) == (0.4, 0.5)
    assert row["arithmetic_mean"] == pytest.approx(0.45)
    assert row["f1"] == pytest.approx(4 / 9)
    text = _invoke("collection-measures", str(qrels), str(run), "-N", "1000000").output
    assert "0.999990" in text and "Accuracy is not used" in text


def test_collection_measures_refuses_without_a_size(example_files):
    qrels, run = example_files
    result = CliRunner().invoke(main, ["collection-measures", str(qrels), str(run)])
    assert result.exit_code != 0 and "--num-docs" in result.output


def test_collection_measures_of_a_campaign(evaluated, database_url):
    result = _invoke(
        "collection-measures",
        "--campaign",
        "demo",
        "-N",
        "100",
        "--format",
        "csv",
        database_url=database_url,
    )
    assert result.exit_code == 0, result.output
    header, *rows = result.output.strip().splitlines()
    assert header.startswith("Run,Topics,Accuracy")
    assert [r.split(",")[0] for r in rows] == ["runA", "runB", "runC", "runD"]


def test_power_design_without_a_campaign():
    result = _invoke(
        "power",
        "--variance",
        "0.0219",
        "--topics",
        "20",
        "--systems",
        "3",
        "--delta",
        "0.1",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    design = json.loads(result.output)
    assert design["n_topics"] == 20 and design["topics_t_test"] == 37
    assert design["detectable_difference"] == pytest.approx(0.1382, abs=5e-5)


def test_power_of_a_campaign(evaluated, database_url, monkeypatch):
    forbid_write_sessions(monkeypatch)
    result = _invoke(
        "power", "--campaign", "demo", "-m", "map", "--delta", "0.2", database_url=database_url
    )
    assert result.exit_code == 0, result.output
    assert "With 3 topics, differences of at least" in result.output
    assert "runA" in result.output and "noncentral t" in result.output
    assert "post-hoc" in result.output and "Hoenig & Heisey" in result.output  # none shown


def _grid_files(folder):
    """Four settings x 3 topics; the ranking quality grows with k1 and falls with b."""
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"q{t} 0 rel{t} 1\n" for t in range(3)))
    runs = []
    for k1 in (1, 2):
        for b in (0.5, 1):
            tag = f"bm25_k1={k1}_b={b}"
            depth = 1 + (2 - k1) + int(b == 1)  # rank of the relevant document
            path = folder / f"{tag}.txt"
            lines = []
            for t in range(3):
                docs = [f"x{i}" for i in range(depth - 1)] + [f"rel{t}"]
                lines += [f"q{t} Q0 {d} {r} {10 - r} {tag}\n" for r, d in enumerate(docs, 1)]
            path.write_text("".join(lines))
            runs.append(str(path))
    return str(qrels), runs


def test_sweep_of_run_files_writes_a_heat_map(tmp_path):
    qrels, runs = _grid_files(tmp_path)
    plot = tmp_path / "grid.svg"
    result = _invoke(
        "sweep",
        qrels,
        *runs,
        "--pattern",
        "bm25_k1={k1}_b={b}",
        "-m",
        "map",
        "--folds",
        "3",
        "--plot",
        str(plot),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output[result.output.index("{") :])
    assert document["means"]["bm25_k1=2_b=0.5"] == 1.0
    assert document["means"]["bm25_k1=1_b=1"] == pytest.approx(1 / 3)
    assert document["cv"]["best_tag"] == "bm25_k1=2_b=0.5"
    assert document["cv"]["overfitting_gap"] == 0.0
    assert plot.read_text().startswith("<?xml") and "b" in plot.read_text()


def test_sweep_needs_a_grid(tmp_path):
    qrels, runs = _grid_files(tmp_path)
    result = CliRunner().invoke(main, ["sweep", qrels, *runs])
    assert result.exit_code != 0 and "--pattern or --mapping" in result.output


@pytest.mark.parametrize("command", ["sweep", "interleave", "collection-measures"])
def test_two_run_files_with_one_tag_are_refused_by_name(tmp_path, command):
    qrels, runs = _grid_files(tmp_path)
    again = tmp_path / "again.run"
    again.write_text((tmp_path / runs[0]).read_text())
    extra = {"sweep": ["--pattern", "bm25_k1={k1}_b={b}"], "collection-measures": ["-N", "100"]}
    result = CliRunner().invoke(main, [command, qrels, runs[0], runs[1], str(again),
                                       *extra.get(command, [])])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "again.run: run tag" in result.output and "appears twice" in result.output


def test_interleave_run_files(tmp_path):
    qrels, runs = _grid_files(tmp_path)
    result = _invoke(
        "interleave",
        qrels,
        runs[0],
        runs[3],
        "--impressions",
        "20",
        "--method",
        "balanced",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    study = document["study"]
    pair = study["pairs"][0]
    # bm25_k1=1_b=0.5 ranks the relevant document 2nd, bm25_k1=2_b=1 2nd too: no offline winner
    assert pair["comparison"]["first"] == "bm25_k1=1_b=0.5"
    assert pair["offline_difference"] == 0.0
    assert study["agreement"]["undecided"] == 1
    # the fidelity check of both methods, 100 random-click impressions per query
    assert [c["method"] for c in document["fidelity"]] == ["team-draft", "balanced"]
    assert all(p["impressions"] == 300 for c in document["fidelity"] for p in c["pairs"])
    text = _invoke("interleave", qrels, runs[1], runs[2]).output
    assert "team-draft interleaving" in text and "bm25_k1=2_b=0.5" in text
    assert "Fidelity check: every pair interleaved with clicks at random" in text
    quiet = _invoke("interleave", qrels, runs[1], runs[2], "--fidelity-impressions", "0").output
    assert "Fidelity check" not in quiet


def test_interleave_of_a_campaign(evaluated, database_url):
    result = _invoke(
        "interleave", "--campaign", "demo", "--impressions", "3", database_url=database_url
    )
    assert result.exit_code == 0, result.output
    assert "Interleaving agrees with the offline map" in result.output
    assert "Fidelity check" in result.output and "balanced: mean |bias|" in result.output


def test_efficiency_import_and_show(evaluated, database_url, tmp_path):
    sidecar = tmp_path / "eff.json"
    sidecar.write_text(
        json.dumps(
            [
                {"run": "runA", "mean_latency_ms": 20, "throughput_qps": 50},
                {"run": "runB", "mean_latency_ms": 5},
            ]
        )
    )
    result = _invoke(
        "efficiency", "import", "--campaign", "demo", str(sidecar), database_url=database_url
    )
    assert result.exit_code == 0, result.output
    assert "stored for 2 runs" in result.output
    plot = tmp_path / "pareto.svg"
    shown = _invoke(
        "efficiency",
        "show",
        "--campaign",
        "demo",
        "--plot",
        str(plot),
        "--format",
        "csv",
        database_url=database_url,
    )
    assert shown.exit_code == 0, shown.output
    lines = [line for line in shown.output.splitlines() if line.startswith("run")]
    assert lines[0].startswith("runA,") and ",20,,50," in lines[0]
    assert "no figures" in lines[2]
    assert "Pareto frontier" in plot.read_text()
    again = CliRunner().invoke(
        main, ["--db", database_url, "efficiency", "import", "--campaign", "demo", str(sidecar)]
    )
    assert again.exit_code != 0 and "already have efficiency figures" in again.output


def test_evaluate_with_the_course_notes_sections(evaluated, database_url):
    sections = [
        a for name in ("collection-measures", "power", "efficiency", "interleaving", "sweep")
        for a in ("--section", name)
    ]  # fmt: skip
    result = _invoke(
        "evaluate", "--campaign", "demo", "-m", "map", *sections, "--num-docs", "100",
        database_url=database_url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Set measures of each run's retrieved set at collection scale, N = 100" in out
    assert "With 3 topics, differences of at least" in out
    assert "No run has efficiency figures" in out
    assert "team-draft interleaving" in out
    document = json.loads(
        _invoke(
            "evaluate", "--campaign", "demo", "-m", "map", *sections, "--format", "json",
            database_url=database_url,
        ).stdout
    )  # fmt: skip
    notes = {s["name"]: s for s in document["sections"]}
    collection = notes["collection-measures"]
    assert not collection["available"] and "no documents" in collection["reason"]
    assert notes["power"]["data"]["n_topics"] == 3
    assert not notes["sweep"]["available"] and "pattern" in notes["sweep"]["reason"]
    assert [s["name"] for s in document["sections"]] == [
        "collection-measures", "power", "sweep", "interleaving", "efficiency",
    ]  # fmt: skip


def test_import_runs_with_an_efficiency_sidecar_is_one_transaction(store, database_url, tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst\nq2\tsecond\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 fast\nq2 Q0 d2 1 1.0 fast\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"run": "fast", "per_query_latency_ms": {"q1": 3, "q7": 4}}')
    good = tmp_path / "good.json"
    good.write_text('{"run": "fast", "per_query_latency_ms": {"q1": 3, "q2": 5}}')
    assert _invoke("campaign", "create", "c", database_url=database_url).exit_code == 0
    assert (
        _invoke(
            "import", "topics", "--campaign", "c", str(topics), database_url=database_url
        ).exit_code
        == 0
    )
    refused = CliRunner().invoke(
        main,
        [
            "--db",
            database_url,
            "import",
            "runs",
            "--campaign",
            "c",
            str(run),
            "--efficiency",
            str(bad),
        ],
    )
    assert refused.exit_code != 0 and "has no topic q7" in refused.output
    from workbench.services.campaigns import get_campaign
    from workbench.services.efficiency import run_efficiency
    from workbench.services.errors import ServiceError
    from workbench.services.evaluation_inputs import load_runs

    with store.session() as s, pytest.raises(ServiceError, match="no runs"):
        load_runs(s, get_campaign(s, "c"))
    done = _invoke(
        "import",
        "runs",
        "--campaign",
        "c",
        str(run),
        "--efficiency",
        str(good),
        database_url=database_url,
    )
    assert done.exit_code == 0, done.output
    with store.session() as s:
        assert run_efficiency(s, get_campaign(s, "c"))["fast"].mean_latency_ms == 4.0
