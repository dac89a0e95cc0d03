"""A run's ir_metadata kept with it: imported from the file's head, shown by the run service
(browse), replaced with the run, exported; a bad block refuses the import, changing nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from workbench.services import browse, campaigns, exports, run_imports, run_metadata, topic_imports
from workbench.services.errors import ServiceError
from workbench.trec import TrecFormatError

from .conftest import row_counts

BLOCK = (
    "# ir_metadata.start\n"
    "# tag: {tag}\n"
    "# method:\n"
    "#   retrieval:\n"
    "#     - name: <b>bm25</b>\n"
    "# actor:\n"
    "#   team: irgroup\n"
    "# data:\n"
    "#   test collection:\n"
    "#     name: TREC Robust04\n"
    "# ir_metadata.end\n"
)


def _run(folder: Path, tag: str, *, block: str = "", lines: str | None = None) -> Path:
    path = folder / f"{tag}.txt"
    path.write_text(block + (lines or f"1 Q0 d1 1 2.0 {tag}\n1 Q0 d2 2 1.0 {tag}\n"))
    return path


@pytest.fixture
def campaign_id(store, tmp_path: Path) -> int:
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tone\n2\ttwo\n")
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "c1")
        topic_imports.import_topics(session, campaign, topics)
        return campaign.id


def _rows(store, campaign_id: int) -> dict[str, browse.BrowseRun]:
    with store.read_session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        return {row.tag: row for row in browse.runs(session, campaign)}


def test_metadata_is_kept_shown_exported_and_replaced(store, campaign_id, tmp_path) -> None:
    annotated = _run(tmp_path, "bm25", block=BLOCK.format(tag="bm25"))
    plain = _run(tmp_path, "ql")
    run_imports.import_runs_in_steps(store, campaign_id, [annotated, plain])
    rows = _rows(store, campaign_id)
    assert rows["bm25"].metadata == {
        "tag": "bm25",
        "method": {"retrieval": [{"name": "<b>bm25</b>"}]},
        "actor": {"team": "irgroup"},
        "data": {"test collection": {"name": "TREC Robust04"}},
    }
    assert rows["bm25"].primad == "method: <b>bm25</b>; actor: irgroup; data: TREC Robust04"
    assert rows["ql"].metadata is None and rows["ql"].primad == ""
    with store.read_session() as session:
        campaign = campaigns.get_campaign(session, campaign_id)
        assert run_metadata.campaign_run_metadata(session, campaign) == {
            "bm25": rows["bm25"].metadata
        }
        out = io.StringIO()
        written = exports.EXPORTS["run-metadata"].write(session, campaign, out, {"run": None})
        assert written.count == 1 and written.filename == "c1.run-metadata.json"
        assert json.loads(out.getvalue()) == {
            "runs": {"bm25": rows["bm25"].metadata},
            "runs without": ["ql"],
        }
        out = io.StringIO()
        exports.EXPORTS["run-metadata"].write(session, campaign, out, {"run": "bm25"})
        assert out.getvalue() == BLOCK.format(tag="bm25")  # as the file opened
    # replaced by a file without a block: the run keeps its id, its metadata goes
    again = _run(tmp_path, "bm25", lines="2 Q0 d9 1 1.0 bm25\n")
    run_imports.import_runs_in_steps(store, campaign_id, [again], replace=True)
    assert _rows(store, campaign_id)["bm25"].metadata is None


def test_split_tags_give_the_block_to_the_run_it_names(store, campaign_id, tmp_path) -> None:
    lines = "1 Q0 d1 1 2.0 a\n1 Q0 d1 1 2.0 b\n"
    path = _run(tmp_path, "ab", block=BLOCK.format(tag="b"), lines=lines)
    run_imports.import_runs_in_steps(store, campaign_id, [path], split_tags=True)
    rows = _rows(store, campaign_id)
    assert rows["a"].metadata is None and rows["b"].metadata["tag"] == "b"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (BLOCK.format(tag="other"), "the ir_metadata's tag ('other') to be a run tag"),
        ("# ir_metadata.start\n# tag: bm25\n", "'# ir_metadata.end' before the run lines"),
        ("# ir_metadata.start\n# a: [1\n# ir_metadata.end\n", "ir_metadata in YAML"),
    ],
)
def test_a_bad_block_refuses_the_import_and_changes_nothing(
    store, campaign_id, tmp_path, block: str, expected: str
) -> None:
    good = _run(tmp_path, "good")
    bad = _run(tmp_path, "bm25", block=block)
    with store.read_session() as session:
        before = row_counts(session)
    with pytest.raises((TrecFormatError, ServiceError)) as refused:
        run_imports.import_runs_in_steps(store, campaign_id, [good, bad])
    assert expected in str(refused.value) and "bm25.txt:" in str(refused.value)
    with store.read_session() as session:
        assert row_counts(session) == before
