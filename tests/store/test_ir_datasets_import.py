"""`workbench import ir-datasets` end to end on datasets registered through ir_datasets' own
API for local files (nothing is downloaded): topics, documents, qrels and scored documents
arrive as the same files would bring them; bad records and taken names change nothing."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from workbench.cli import main
from workbench.services import browse, campaigns
from workbench.store import open_store
from workbench.store.models import Document, QrelsEntry, QrelsSet, Topic

from .conftest import row_counts

ir_datasets = pytest.importorskip("ir_datasets")

DOCS = """\
<DOC>
<DOCNO>D1</DOCNO>
<TITLE>Solar panels</TITLE>
<TEXT>Recycling solar panels recovers silicon.</TEXT>
</DOC>
<DOC>
<DOCNO>D2</DOCNO>
<TEXT>Habitats for a Mars colony.</TEXT>
</DOC>
"""
QUERIES = "1\tsolar panel recycling\n2\tmars colony\n"
QRELS = "1 0 D1 2\n1 0 D2 0\n2 0 D2 1\n"
SCORED = "1 Q0 D1 1 2.5 bm25\n1 Q0 D2 2 1.0 bm25\n2 Q0 D2 1 3.0 bm25\n"
_names = itertools.count()


def register(folder: Path, *, docs: str = DOCS, scored: str | None = SCORED) -> str:
    """A dataset of local files registered with ir_datasets; returns its (new) id."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecDocs, TrecQrels, TrecScoredDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    for name, text in (("docs.trec", docs), ("queries.tsv", QUERIES), ("qrels.txt", QRELS)):
        (folder / name).write_text(text)
    parts = [
        TrecDocs(LocalDownload(folder / "docs.trec")),
        TsvQueries(LocalDownload(folder / "queries.tsv")),
        TrecQrels(LocalDownload(folder / "qrels.txt"), {0: "no", 1: "yes", 2: "very"}),
    ]
    if scored is not None:
        (folder / "run.txt").write_text(scored)
        parts.append(TrecScoredDocs(LocalDownload(folder / "run.txt")))
    dataset_id = f"workbench-test/local-{next(_names)}"
    ir_datasets.registry.register(dataset_id, Dataset(*parts))
    return dataset_id


@pytest.fixture
def cli(database_url, tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, ["--db", database_url, *args], catch_exceptions=False)

    assert invoke("campaign", "create", "c1", "--scale", "0=No,1=Yes,2=Very").exit_code == 0
    return invoke


def _stored(database_url: str) -> dict:
    store = open_store(database_url)
    try:
        with store.read_session() as session:
            campaign = campaigns.get_campaign(session, "c1")
            qrels = {
                q.name: sorted(
                    (e.qid, e.iteration, e.docno, e.rel)
                    for e in session.scalars(
                        select(QrelsEntry).where(QrelsEntry.qrels_set_id == q.id)
                    )
                )
                for q in session.scalars(select(QrelsSet))
            }
            return {
                "topics": {t.qid: t.title for t in session.scalars(select(Topic))},
                "documents": {
                    d.docno: (d.title, d.text.strip()) for d in session.scalars(select(Document))
                },
                "runs": {r.tag: r.per_topic for r in browse.runs(session, campaign)},
                "qrels": qrels,
            }
    finally:
        store.dispose()


def test_a_dataset_end_to_end(cli, database_url, tmp_path) -> None:
    dataset_id = register(tmp_path)
    result = cli("import", "ir-datasets", dataset_id, "--campaign", "c1")
    assert result.exit_code == 0, result.output
    assert "documents: 2" in result.stderr and "topics: 2" in result.stderr  # progress
    assert "documents: 2 added" in result.stdout and "runs: 1 added, 3 lines" in result.stdout
    assert _stored(database_url) == {
        "topics": {"1": "solar panel recycling", "2": "mars colony"},
        "documents": {
            "D1": ("", "Solar panels\nRecycling solar panels recovers silicon."),
            "D2": ("", "Habitats for a Mars colony."),
        },
        "runs": {dataset_id: {"1": 2, "2": 1}},
        "qrels": {dataset_id: [("1", "0", "D1", 2), ("1", "0", "D2", 0), ("2", "0", "D2", 1)]},
    }
    evaluated = cli(
        "evaluate", "--campaign", "c1", "--qrels", dataset_id, "-m", "P@1", "-m", "P(rel=2)@1",
        "--format", "trec",
    )  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output
    # D1 (grade 2) first for topic 1, D2 (grade 1) for topic 2
    assert "P_1                   \tall\t1.0000" in evaluated.stdout
    assert "P(rel=2)@1            \tall\t0.5000" in evaluated.stdout


def test_parts_left_out_and_parts_the_dataset_lacks(cli, database_url, tmp_path) -> None:
    dataset_id = register(tmp_path, scored=None)
    result = cli(
        "import", "ir-datasets", dataset_id, "--campaign", "c1", "--no-documents",
        "--run-tag", "mine", "--qrels-name", "official",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"warning: {dataset_id} has no run" in result.stderr
    stored = _stored(database_url)
    assert stored["documents"] == {} and stored["runs"] == {}
    assert list(stored["qrels"]) == ["official"] and len(stored["topics"]) == 2


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: "no-such/dataset", "ir_datasets has no dataset 'no-such/dataset'"),
        (
            lambda tmp: register(tmp, docs=DOCS.replace("<DOCNO>D2", "<DOCNO>D 2")),
            "document id 'D 2' has white space",
        ),
    ],
)
def test_refusals_change_nothing(cli, database_url, tmp_path, make, expected: str) -> None:
    store = open_store(database_url)
    with store.read_session() as session:
        before = row_counts(session)
    result = cli("import", "ir-datasets", make(tmp_path), "--campaign", "c1")
    assert result.exit_code == 1 and expected in result.stderr
    with store.read_session() as session:
        assert row_counts(session) == before
    store.dispose()


def test_a_taken_run_tag_is_refused_before_any_document(cli, database_url, tmp_path) -> None:
    dataset_id = register(tmp_path)
    first = cli("import", "ir-datasets", dataset_id, "--campaign", "c1", "--no-documents")
    assert first.exit_code == 0
    again = register(tmp_path)
    store = open_store(database_url)
    with store.read_session() as session:
        before = row_counts(session)
    result = cli("import", "ir-datasets", again, "--campaign", "c1", "--run-tag", dataset_id)
    assert result.exit_code == 1 and "already has a run tagged" in result.stderr
    with store.read_session() as session:
        assert row_counts(session) == before  # no document was stored either
    store.dispose()
