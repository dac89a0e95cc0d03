"""The analysis commands end to end on the judged fixture campaign."""

from __future__ import annotations

import io
import json
import sys

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import select

from tests.analysis.conftest import GRADES
from workbench.cli import main
from workbench.store.models import FinalLabel


def _run(database_url: str, *args: str):
    return CliRunner().invoke(main, ["--db", database_url, *args], catch_exceptions=False)


def test_agreement_json_gives_the_pairwise_kappas(judged, database_url):
    result = _run(
        database_url, "agreement", "--campaign", "demo", "--format", "json", "--bootstrap", "100"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    alice_bob = report["per_pair"][0]
    pairs = [(r[0], r[1]) for r in GRADES.values() if r[0] is not None and r[1] is not None]
    expected = cohen_kappa_score([int(a >= 1) for a, _ in pairs], [int(b >= 1) for _, b in pairs])
    assert (alice_bob["first"], alice_bob["second"]) == ("alice", "bob")
    assert alice_bob["kappa"] == pytest.approx(expected)
    assert report["graded"] is False


def test_a_report_runs_while_a_writer_holds_the_sqlite_store(judged, database_url):
    """A report is a read: on SQLite it neither waits for the write lock (opening the store
    reads its version in a read transaction) nor takes it (judging goes on beside it)."""
    import sqlite3

    if not database_url.startswith("sqlite"):
        pytest.skip("the write lock is SQLite's")
    writer = sqlite3.connect(database_url.removeprefix("sqlite:///"), timeout=0.1)
    writer.execute("BEGIN IMMEDIATE")  # another process writing, for as long as it likes
    result = _run(database_url, "agreement", "--campaign", "demo", "--bootstrap", "10")
    writer.rollback()
    writer.close()
    assert result.exit_code == 0, result.output
    assert "alice" in result.output


def test_agreement_text_and_csv(judged, database_url):
    text = _run(database_url, "agreement", "--campaign", "demo", "--graded", "--bootstrap", "50")
    assert text.exit_code == 0
    assert "Krippendorff alpha (ordinal)" in text.output
    assert "alice" in text.output and "Quadratic kappa" in text.output
    csv = _run(
        database_url, "agreement", "--campaign", "demo", "--format", "csv", "--bootstrap", "0"
    )
    assert csv.output.splitlines()[0].startswith("Topic,Items,")


def test_adjudicate_writes_final_labels_and_reports_the_queue(judged, database_url):
    result = _run(database_url, "adjudicate", "--campaign", "demo", "--rule", "majority")
    assert result.exit_code == 0, result.output
    assert (
        "10 final labels set, 0 kept as adjudicated, 2 left to adjudicate; the final qrels "
        "are incomplete: 2 of the 12 pooled or judged documents lack a final label" in result.output
    )
    with judged.session() as s:
        assert len(list(s.scalars(select(FinalLabel)))) == 10


def test_bad_requests_fail_with_one_message(judged, database_url):
    missing = _run(database_url, "agreement", "--campaign", "nope")
    assert missing.exit_code == 1 and "no campaign 'nope'" in missing.output
    primary = _run(database_url, "adjudicate", "--campaign", "demo", "--rule", "primary")
    assert primary.exit_code == 1 and "primary assessor" in primary.output


def test_evaluate_formats(evaluated, database_url):
    from workbench.services import evaluation as service
    from workbench.services.campaigns import get_campaign

    with evaluated.session() as s:
        table = service.evaluate_campaign(s, get_campaign(s, "demo"), measures=["map"])
    as_json = _run(database_url, "evaluate", "--campaign", "demo", "-m", "map", "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    document = json.loads(as_json.stdout)
    sections = {s["name"]: s for s in document["sections"]}
    maps = {r["tag"]: r["summary"]["map"] for r in sections["summary"]["data"]["runs"]}
    assert maps == {r.tag: r.summary["map"] for r in table.runs}
    assert sections["pairwise-tests"]["data"]["test"] == "paired t-test"
    text = _run(database_url, "evaluate", "--campaign", "demo", "-m", "map", "--test", "wilcoxon",
                "--correction", "bonferroni", "--section", "ranking-stability",
                "--section", "reusability-group", "--section", "pairwise-tests")  # fmt: skip
    assert text.exit_code == 0, text.output
    assert "Bonferroni" in text.output and "Leave-one-group-out" in text.output
    assert "Kendall tau" in text.output and "Leave-one-run-out" not in text.output
    trec = _run(database_url, "evaluate", "--campaign", "demo", "-m", "P.5", "--format", "trec")
    assert "P_5                   \tq1\t" in trec.output
    md = _run(database_url, "evaluate", "--campaign", "demo", "--format", "md", "--qrels", "bob",
              "--section", "summary", "--section", "per-topic")  # fmt: skip
    assert md.output.startswith("# Evaluation of demo against the assessor bob qrels")
    assert "| a | runA |" in md.output
    assert "*map per topic (assessor bob qrels).*" in md.output and "| q3 |" in md.output
    csv = _run(database_url, "evaluate", "--campaign", "demo", "-m", "map", "--format", "csv",
               "--section", "summary")  # fmt: skip
    rows = csv.stdout.splitlines()
    assert rows[0] == "Evaluation of demo against the final qrels"
    assert ",Run,map,map marks,Missing topics" in rows
    assert any(r.startswith("Every run is evaluated over the 3 judged topics") for r in rows)


def test_evaluate_refuses_unknown_qrels_and_measures(evaluated, database_url, tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d2\n")
    malformed = _run(database_url, "evaluate", "--campaign", "demo", "--qrels", str(bad))
    assert malformed.exit_code == 1 and "bad.qrels:2" in malformed.output
    unknown = _run(database_url, "evaluate", "--campaign", "demo", "--qrels", "nobody")
    assert unknown.exit_code == 1 and "qrels 'nobody'" in unknown.output
    measure = _run(database_url, "evaluate", "--campaign", "demo", "-m", "nonsense")
    assert measure.exit_code == 1 and "nonsense" in measure.output


def test_evaluate_trec_format_is_trec_evals_output_for_the_same_flags(
    evaluated, database_url, tmp_path
):
    """`evaluate --format trec -m X` == `trec-eval -c -q -l LEVEL -m X QRELS RUN` for each run
    (missing topics score 0, the campaign convention): no runid line unless asked, summary-only
    gm_map in the summary."""
    from workbench.services import evaluation_inputs as service
    from workbench.services.campaigns import get_campaign
    from workbench.trec import write_qrels, write_run
    from workbench.trec_eval_command import run_trec_eval

    flags = ["-m", "map", "-m", "gm_map", "-m", "P.5"]
    result = _run(database_url, "evaluate", "--campaign", "demo", *flags, "--format", "trec")
    assert result.exit_code == 0, result.output
    with evaluated.session() as s:
        campaign = get_campaign(s, "demo")
        qrels = service.resolve_qrels(s, campaign, "final").qrels
        runs = service.load_runs(s, campaign)
        level = campaign.relevance_level
    write_qrels(qrels, tmp_path / "qrels")
    expected = []
    for run in runs:
        write_run(run.trec_run, tmp_path / run.tag)
        out, err = io.StringIO(), io.StringIO()
        args = [
            "-c",
            "-q",
            "-l",
            str(level),
            *flags,
            str(tmp_path / "qrels"),
            str(tmp_path / run.tag),
        ]
        assert run_trec_eval(args, out, err) == 0, err.getvalue()
        expected.append(out.getvalue())
    assert result.stdout == "".join(expected)
    assert "runid" not in result.stdout
    assert result.stdout.count("gm_map                \tall\t") == len(runs)
    with_runid = _run(database_url, "evaluate", "--campaign", "demo", "-m", "runid", "-m", "map",
                      "--format", "trec")  # fmt: skip
    assert with_runid.stdout.count("runid                 \tall\t") == len(runs)


def test_summary_only_measures_are_in_the_summary_of_every_format(evaluated, database_url):
    """gm_map has no per-topic values: in the summary table, and the per-topic table and the
    tests say why they leave it out (it was refused before)."""
    for fmt in ("json", "text", "csv", "md", "latex"):
        result = _run(
            database_url, "evaluate", "--campaign", "demo", "-m", "gm_map", "-m", "map",
            "--format", fmt, "--section", "summary", "--section", "per-topic",
            "--section", "pairwise-tests",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        text = result.output.replace("\\_", "_").replace("\n", " ")  # LaTeX escapes _
        assert "gm_map" in text and "trec_eval gives no per-topic value" in text


def test_commands_that_test_nothing_start_without_scipy() -> None:
    """The store, import, pool, export, progress, evaluate and quality commands load no scipy
    module when they start (its import was most of their start-up), nor does an adaptive pool's
    reserved sample (it took the estimate simulation and scipy.stats, 1.2 s, into each process
    building or advancing one); a test computed after the start imports scipy.stats then, and
    gives scipy's value."""
    import subprocess

    modules = ["store_commands", "import_commands", "pool_commands", "report_commands"]
    modules += ["quality_commands", "estimate_commands", "analysis_commands", "web_commands"]
    code = (
        "import sys\n"
        + "".join(f"import workbench.cli.{m}\n" for m in modules)
        + "from workbench.services.adaptive_pools import AdaptiveSettings\n"
        "assert AdaptiveSettings('mm', 40, 5, 0.2, sample_share=0.1).sample_size(30) == 4\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
        "from workbench import stats\n"
        "print(stats.paired_t_test([0.1, 0.5, 0.3, 0.7], [0.2, 0.1, 0.3, 0.2]).p_value)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, p_value, imported = done.stdout.split("\n")[:3]
    assert loaded == "[]"
    from scipy import stats as scipy_stats

    expected = scipy_stats.ttest_rel([0.1, 0.5, 0.3, 0.7], [0.2, 0.1, 0.3, 0.2]).pvalue
    assert float(p_value) == pytest.approx(expected, rel=1e-12)
    assert imported == "True"
