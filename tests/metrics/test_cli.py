"""``workbench trec-eval``: flag parsing, several runs, stdin, errors and exit statuses."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench.cli import main
from workbench.trec_eval_command import UsageError, parse_args, run_trec_eval

pytestmark = pytest.mark.smoke  # also run against the installed wheel (scripts/check-wheel.sh)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return run_trec_eval(list(args), out, err), out.getvalue(), err.getvalue()


def test_getopt_style_flags() -> None:
    opts = parse_args(
        [
            "-qc",
            "-mP.5,10",
            "-m",
            "map",
            "-l2",
            "-M",
            "100",
            "-J",
            "-N50",
            "q",
            "r1",
            "-n",
            "r2",
            "--compat",
            "9",
            "-Rqrels",
            "-Zz",
        ]
    )
    assert opts.per_topic and opts.complete and opts.judged_only and not opts.summary
    assert opts.measures == ["P.5,10", "map"]
    assert (opts.level, opts.max_results, opts.n_docs, opts.compat) == (2, 100, 50, 9)
    assert opts.files == ["q", "r1", "r2"]
    assert opts.zscores == "z"
    assert parse_args(["--compat=10", "--", "-odd-name", "r"]).files == ["-odd-name", "r"]


@pytest.mark.parametrize(
    "args", [["-x"], ["-l", "two"], ["-m"], ["--compat", "8"], ["-R", "xml"], ["--nope"]]
)
def test_bad_flags(args: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_args(args)
    status, out, err = _run(*args, "q", "r")
    assert (status, out) == (1, "")
    assert err.startswith("trec_eval: ")


def test_bundled_example_through_the_workbench_command() -> None:
    result = CliRunner().invoke(
        main,
        ["trec-eval", "-q", "-m", "P.5", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("P_5                   \t401\t")
    assert lines[-1].startswith("P_5                   \tall\t")
    assert len(lines) == 4


def test_no_summary_and_several_runs(tmp_path: Path) -> None:
    run = EXAMPLES / "run.txt"
    other = tmp_path / "other.txt"
    other.write_text(run.read_text().replace(" example\n", " other\n"))
    status, out, _ = _run(
        "-m", "runid", "-m", "map", str(EXAMPLES / "qrels.txt"), str(run), str(other)
    )
    assert status == 0
    assert [line.split("\t")[2] for line in out.splitlines() if line.startswith("runid")] == [
        "example",
        "other",
    ]
    status, out, _ = _run("-n", "-q", "-m", "map", str(EXAMPLES / "qrels.txt"), str(run))
    assert status == 0 and "\tall\t" not in out and out.count("\n") == 3


def test_run_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (EXAMPLES / "run.txt").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    _, expected, _ = _run(str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"))
    status, out, _ = _run(str(EXAMPLES / "qrels.txt"), "-")
    assert status == 0 and out == expected


def test_malformed_input_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("401 Q0 DOC 1 1.0 t\n401 Q0 DOC 2 0.5\n")
    status, out, err = _run(str(EXAMPLES / "qrels.txt"), str(bad))
    assert (status, out) == (2, "")
    assert err.startswith(f"trec_eval: {bad}:2: expected ")
    status, _, err = _run(str(EXAMPLES / "qrels.txt"), str(tmp_path / "missing.run"))
    assert status == 2 and "cannot read" in err


def test_unknown_measure_exit_1() -> None:
    status, out, err = _run(
        "-m", "nonsense", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    )
    assert (status, out) == (1, "")
    assert "unknown measure 'nonsense'" in err


def test_help_and_version() -> None:
    status, out, _ = _run("-h")
    assert status == 0 and "--compat 9" in out
    status, out, _ = _run("-v")
    assert status == 0 and "trec-eval" in out


def test_trec_eval_starts_without_click_or_the_command_group() -> None:
    """`workbench trec-eval` goes straight to the evaluator (start-up time, issue 10)."""
    import subprocess

    code = (
        "import sys, runpy; sys.argv = ['workbench', 'trec-eval', sys.argv[1], sys.argv[2]];\n"
        "try:\n    runpy.run_module('workbench', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('click', 'flask', 'sqlalchemy', 'scipy', 'workbench'))\n"
        "print(' '.join(loaded), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = done.stderr.split()
    assert "workbench.metrics.evaluation" in loaded
    assert not [m for m in loaded if m.startswith(("click", "flask", "sqlalchemy", "scipy"))]
    assert not [m for m in loaded if m.startswith(("workbench.cli", "workbench.metrics.prefs"))]
    # only the readers the command needs: no store, services, web, topic/prefs/JSONL readers
    unneeded = ("workbench.store", "workbench.services", "workbench.web", "workbench.pooling")
    unneeded += ("workbench.trec.topics", "workbench.trec.prefs", "workbench.trec.jsonl")
    assert not [m for m in loaded if m.startswith(unneeded)]
    assert done.stdout.startswith("runid                 \tall\texample\n")
