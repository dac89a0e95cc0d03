"""`workbench querylog ...` and `workbench evaluate --qrels clicks:LOG` through click's runner."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tests.read_only import forbid_write_sessions
from workbench.cli import main

from .test_querylogs import KEY, LOG


@pytest.fixture
def cli(database_url, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.delenv("WORKBENCH_QUERYLOG_KEY", raising=False)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, ["--db", database_url, *args], catch_exceptions=False)

    return invoke


@pytest.fixture
def campaign(cli, files, tmp_path):
    assert cli("campaign", "create", "c", "--scale", "0=No,1=Yes,2=Very").exit_code == 0
    assert cli("import", "topics", "--campaign", "c", str(files["topics"])).exit_code == 0
    runs = [str(files[t]) for t in "ABC"]
    assert cli("import", "runs", "--campaign", "c", *runs).exit_code == 0
    qrels = cli("import", "qrels", "--campaign", "c", "--name", "official", str(files["qrels"]))
    assert qrels.exit_code == 0
    log = tmp_path / "log.jsonl"
    log.write_text("".join(x + "\n" for x in LOG), encoding="utf-8")
    return log


def test_import_report_prefs_agreement_evaluate(cli, campaign, tmp_path, monkeypatch):
    imported = cli("querylog", "import", "--campaign", "c", "--min-users", "2", str(campaign))
    assert imported.exit_code == 0, imported.output
    assert re.search(r"e-mail addresses masked +masked +2 +2 +2\n", imported.output)
    assert re.search(r"kept +5 +3 +2\n", imported.output)
    assert "5 impressions stored, 3 on 1 topic(s)" in imported.output
    key = (tmp_path / "instance" / "querylog_key").read_text().strip()
    assert len(bytes.fromhex(key)) == 32
    # what follows only reads: no write transaction (on SQLite it would hold the write lock,
    # and every judgement would wait for the command)
    forbid_write_sessions(monkeypatch)
    listed = cli("querylog", "list", "--campaign", "c", "--format", "csv")
    assert listed.output.splitlines()[1].startswith("log.jsonl,log.jsonl,")
    report = json.loads(
        cli("querylog", "report", "--campaign", "c", "log.jsonl", "--format", "json").output
    )
    assert report["anonymisation"]["kept"] == {"impressions": 5, "users": 3, "queries": 2}
    out = tmp_path / "prefs.txt"
    assert cli("querylog", "prefs", "--campaign", "c", "log.jsonl", "-o", str(out)).exit_code == 0
    assert out.read_text() == "1 p1 1 d1 1\n1 p1 1 a1 0\n"
    trec = cli(
        "trec-eval",
        "-m",
        "prefs_simp",
        "-R",
        "prefs",
        str(out),
        str(campaign.parent / "in" / "runB.txt"),
    )
    assert trec.output.split() == ["prefs_simp", "all", "1.0000"]
    agreement = json.loads(
        cli(
            "querylog",
            "agreement",
            "--campaign",
            "c",
            "log.jsonl",
            "--qrels",
            "official",
            "--min-support",
            "1",
            "--format",
            "json",
        ).output
    )
    assert (agreement["consistent"], agreement["comparable"]) == (1, 1)
    evaluated = cli(
        "evaluate", "--campaign", "c", "--qrels", "clicks:log.jsonl", "--against", "official"
    )
    assert evaluated.exit_code == 0, evaluated.output
    assert "Kendall's tau between the two rankings" in evaluated.output
    rows = {
        line.split()[0]: line.split()
        for line in evaluated.output.splitlines()
        if line[:2] in ("A ", "B ", "C ")
    }
    assert rows["A"][1] == "0.0000" and rows["B"][1].startswith("1.0000")
    same = cli("querylog", "evaluate", "--campaign", "c", "log.jsonl", "--qrels", "official")
    assert same.output == evaluated.output


def test_errors_exit_1_with_the_message(cli, campaign, tmp_path, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(LOG[0] + "\n{}\n", encoding="utf-8")
    failed = cli("querylog", "import", "--campaign", "c", str(bad))
    assert failed.exit_code == 1 and "bad.jsonl:2: expected an object with" in failed.output
    missing = cli("querylog", "report", "--campaign", "c", "nope")
    assert missing.exit_code == 1 and "no query log named 'nope'" in missing.output
    none = cli("evaluate", "--campaign", "c", "--qrels", "clicks:nope", "--against", "official")
    assert none.exit_code == 1
    monkeypatch.setenv("WORKBENCH_QUERYLOG_KEY", KEY.hex())
    assert (
        cli(
            "querylog",
            "import",
            "--campaign",
            "c",
            "--min-users",
            "2",
            "--name",
            "k",
            str(campaign),
        ).exit_code
        == 0
    )


def test_prioritise_a_pool(cli, campaign):
    assert (
        cli("querylog", "import", "--campaign", "c", "--min-users", "2", str(campaign)).exit_code
        == 0
    )
    assert cli("pool", "build", "--campaign", "c", "--depth", "3").exit_code == 0
    done = cli("querylog", "prioritise", "--campaign", "c", "log.jsonl", "--pool", "1")
    assert done.exit_code == 0, done.output
    assert "3 seen by users" in done.output
    again = cli("querylog", "prioritise", "--campaign", "c", "log.jsonl", "--pool", "7")
    assert again.exit_code == 1 and "has no pool 7" in again.output
