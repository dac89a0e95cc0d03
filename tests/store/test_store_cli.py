"""The store commands through click's test runner with --db sqlite:///..."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from workbench.cli import main

pytestmark = pytest.mark.smoke  # also run against the installed wheel (scripts/check-wheel.sh)


@pytest.fixture
def cli(database_url):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, ["--db", database_url, *args], catch_exceptions=False)

    return invoke


def test_a_campaign_from_files_to_qrels(cli, files, tmp_path):
    assert cli("db", "upgrade").exit_code == 0
    created = cli(
        "campaign", "create", "trec8", "--scale", "0=No,1=Yes,2=Very", "--relevance-level", "2"
    )
    assert created.exit_code == 0, created.output
    assert "0=No [0], 1=Yes [1], 2=Very [2]" in created.output
    assert "trec8" in cli("campaign", "list").output
    assert cli("import", "topics", "--campaign", "trec8", str(files["topics"])).exit_code == 0
    runs = cli("import", "runs", "--campaign", "trec8", str(files["A"]), str(files["B"]))
    assert runs.exit_code == 0 and "runs: 2 added, 12 lines" in runs.output
    late = cli(
        "import", "runs", "--campaign", "trec8", "--group", "g", "--no-contribute", str(files["C"])
    )
    assert late.exit_code == 0
    built = cli("pool", "build", "--campaign", "trec8", "--depth", "2", "--seed", "7")
    assert built.exit_code == 0, built.output
    assert "seed 7" in built.output and "6 documents" in built.output
    assert "have neither a title nor a text in the store" in built.stderr
    extended = cli("pool", "extend", "--campaign", "trec8", "--runs", "C")
    assert extended.exit_code == 0 and "1 document(s) added" in extended.output
    stats = cli("pool", "stats", "--campaign", "trec8", "--format", "json")
    data = json.loads(stats.stdout)
    assert data["size"] == 7 and data["runs"] == ["A", "B", "C"]
    assert "unique" in cli("pool", "stats", "--campaign", "trec8").output
    out = tmp_path / "pool.txt"
    assert cli("export", "pool", "--campaign", "trec8", "-o", str(out)).exit_code == 0
    assert out.read_text().splitlines()[:3] == ["1 a1", "1 a2", "1 b2"]
    qrels = tmp_path / "qrels.txt"
    refused = cli("export", "qrels", "--campaign", "trec8", "-o", str(qrels))
    assert refused.exit_code == 1 and "7 of the 7 pooled or judged documents" in refused.stderr
    assert not qrels.exists()  # refused before the file is opened
    partial = ["export", "qrels", "--campaign", "trec8", "-o", str(qrels), "--allow-incomplete"]
    exported = cli(*partial)
    assert exported.exit_code == 0 and "warning: INCOMPLETE qrels: 7 of the 7" in exported.stderr
    assert qrels.read_text() == ""  # nothing judged yet: plain (empty) qrels, said on stderr
    log = cli("export", "log", "--campaign", "trec8", "--format", "json")
    assert log.exit_code == 0 and log.stdout == "[]\n"
    docs = cli("import", "documents", "--campaign", "trec8", "--only-pooled", str(files["docs"]))
    assert docs.exit_code == 0 and "2 added" in docs.output and "1 skipped" in docs.output
    assert cli("import", "qrels", "--campaign", "trec8", str(files["qrels"])).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["campaign", "create", "x", "--scale", "0=No,0=Yes"], "unique"),
        (["import", "runs", "--campaign", "nope", "RUN"], "no campaign 'nope'"),
        (["pool", "build", "--campaign", "c", "--strategy", "take"], "needs a positive budget"),
        (["pool", "stats", "--campaign", "c"], "has no pool yet"),
        (["export", "qrels", "--campaign", "c", "--final", "--assessor", "a"], "not both"),
        (["import", "runs", "--campaign", "c", "BAD"], "bad_run:1: expected exactly 6 fields"),
    ],
)
def test_failures_exit_non_zero_with_the_message(cli, files, tmp_path, args, message):
    assert cli("campaign", "create", "c").exit_code == 0
    assert cli("import", "topics", "--campaign", "c", str(files["topics"])).exit_code == 0
    bad = tmp_path / "bad_run"
    bad.write_text("1 Q0 doc\n")
    args = [str(files["A"]) if a == "RUN" else str(bad) if a == "BAD" else a for a in args]
    result = cli(*args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("options", "recorded"),
    [
        (["--strategy", "take", "--budget", "3", "--fair"], "budget 3, fair run order"),
        (["--strategy", "fusion", "--budget", "2", "--fusion", "borda"], "budget 2, fusion borda"),
        (["--strategy", "stratified", "--strata", "1:1,5:0.5"], "ranks ≤ 1: 100%, ranks ≤ 5: 50%"),
        (["--strategy", "stratified"], "ranks ≤ 10: 100%, ranks ≤ 30: 20%, ranks ≤ 100: 5%"),
    ],
)
def test_pool_build_passes_each_strategys_options(cli, files, options, recorded):
    assert cli("campaign", "create", "c").exit_code == 0
    assert cli("import", "topics", "--campaign", "c", str(files["topics"])).exit_code == 0
    assert cli("import", "runs", "--campaign", "c", str(files["A"]), str(files["B"])).exit_code == 0
    built = cli("pool", "build", "--campaign", "c", "--seed", "3", "--runs", "B,A", *options)
    assert built.exit_code == 0, built.stderr
    assert recorded in built.stdout
    stats = json.loads(cli("pool", "stats", "--campaign", "c", "--format", "json").stdout)
    assert stats["runs"] == ["B", "A"] and stats["seed"] == 3


def test_a_qrels_file_is_read_before_the_write_transaction(cli, database_url, files, monkeypatch):
    """While the qrels file is parsed another process's store can write: the command opens
    its write transaction (the store's write lock, on SQLite) only to write the labels."""
    import threading

    from workbench import trec
    from workbench.store import open_store
    from workbench.store.models import User

    assert cli("db", "upgrade").exit_code == 0
    assert cli("campaign", "create", "c").exit_code == 0
    other = open_store(database_url)
    real = trec.read_qrels
    written: list[bool] = []

    def read_while_another_writes(*args, **kwargs):
        def write() -> None:
            with other.session() as session:
                session.add(User(username="writer", password_hash="x"))
            written.append(True)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(60)  # a hang guard: the write would wait for a held write lock
        return real(*args, **kwargs)

    monkeypatch.setattr(trec, "read_qrels", read_while_another_writes)
    imported = cli("import", "qrels", "--campaign", "c", str(files["qrels"]))
    other.dispose()
    assert imported.exit_code == 0, imported.output
    assert written == [True], "the other writer waited for the qrels import"
