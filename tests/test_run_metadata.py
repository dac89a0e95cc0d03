"""ir_metadata (PRIMAD) blocks at the head of run files: read as written by repro_eval, the
refusals (each naming its line), which runs of a file a block describes, written back."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.trec import TrecFormatError, read_run
from workbench.trec.run_metadata import (
    MAX_DEPTH,
    metadata_lines,
    metadata_of_runs,
    parse_metadata,
    read_run_metadata,
)

# As repro_eval's MetadataHandler.write_metadata writes it: "# " + line + " " per YAML line.
YAML = [
    "schema-version: 0.1",
    "run-version: 1.0",
    "tag: bm25",
    "",
    "platform:",
    "  hardware:",
    "    cpu:",
    "      model: Intel Xeon",
    "method:",
    "  retrieval:",
    "    - name: bm25",
    "      k1: 0.9",
    "actor:",
    "  team: irgroup",
    "data:",
    "  test collection:",
    "    name: TREC Robust04",
    "    date: 2004-05-01",
]
BLOCK = "# ir_metadata.start\n" + "".join(f"# {line} \n" for line in YAML) + "# ir_metadata.end\n"
LINES = "401 Q0 d1 1 2.5 bm25\n401 Q0 d2 2 1.5 bm25\n"


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.txt"
    path.write_text(text)
    return path


def test_a_block_as_repro_eval_writes_it(tmp_path: Path) -> None:
    path = _file(tmp_path, "# made by a script\n\n" + BLOCK + LINES)
    metadata = read_run_metadata(path)
    assert metadata is not None
    assert (metadata.start_line, metadata.end_line, metadata.tag) == (3, 22, "bm25")
    assert metadata.data == {
        "schema-version": 0.1,
        "run-version": 1.0,
        "tag": "bm25",
        "platform": {"hardware": {"cpu": {"model": "Intel Xeon"}}},
        "method": {"retrieval": [{"name": "bm25", "k1": 0.9}]},
        "actor": {"team": "irgroup"},
        "data": {"test collection": {"name": "TREC Robust04", "date": "2004-05-01"}},
    }
    assert read_run(path).topic_lines("401").docnos == ["d1", "d2"]  # comments, as trec_eval
    again = _file(tmp_path, metadata_lines(metadata.text) + LINES)
    assert read_run_metadata(again).data == metadata.data  # written back, read the same


def test_a_run_without_a_block_has_none(tmp_path: Path) -> None:
    assert read_run_metadata(_file(tmp_path, "# just a comment\n" + LINES)) is None
    assert read_run_metadata(_file(tmp_path, LINES + BLOCK)) is None  # only the head counts


assert MAX_DEPTH == 32


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("# ir_metadata.start\n# tag: x\n" + LINES, 1, "'# ir_metadata.end' before the run lines"),
        ("# ir_metadata.end\n" + LINES, 1, "'# ir_metadata.start' before"),
        ("# ir_metadata.start\n# a: [1, 2\n# ir_metadata.end\n", 3, "ir_metadata in YAML"),
        ("# ir_metadata.start\n# a: 1\n#  b: 2\n# ir_metadata.end\n", 3, "ir_metadata in YAML"),
        ("# ir_metadata.start\n# - a\n# ir_metadata.end\n", 2, "ir_metadata as a mapping"),
        ("# ir_metadata.start\n# a: &x [1]\n# b: *x\n# ir_metadata.end\n", 2, "without YAML"),
        ("# ir_metadata.start\n# a: !!python/name:os.system x\n# ir_metadata.end\n", 2, "tags"),
        (f"# ir_metadata.start\n# a: {'[' * 40}{']' * 40}\n# ir_metadata.end\n", 2, "32 deep"),
        (BLOCK + BLOCK + LINES, 21, "one ir_metadata block per file"),
    ],
)  # fmt: skip
def test_blocks_that_cannot_be_read_are_refused_naming_the_line(
    tmp_path: Path, text: str, line: int, expected: str
) -> None:
    with pytest.raises(TrecFormatError) as refused:
        read_run_metadata(_file(tmp_path, text))
    assert refused.value.line_number == line
    assert expected in refused.value.expected


def test_which_runs_a_block_describes() -> None:
    named = parse_metadata("tag: a\nactor: {team: t}\n", "f", 1)
    unnamed = parse_metadata("actor: {team: t}\n", "f", 1)
    assert set(metadata_of_runs(named, ["a", "b"], "f")) == {"a"}
    assert set(metadata_of_runs(unnamed, ["a"], "f")) == {"a"}
    assert metadata_of_runs(None, ["a"], "f") == {}
    with pytest.raises(TrecFormatError, match="to be a run tag of the file"):
        metadata_of_runs(named, ["b"], "f")
    with pytest.raises(TrecFormatError, match="a tag in the ir_metadata of a file of several"):
        metadata_of_runs(unnamed, ["a", "b"], "f")


def test_a_huge_comment_head_is_refused(tmp_path: Path) -> None:
    head = "# " + "x" * 1000 + "\n"
    with pytest.raises(TrecFormatError, match="comment lines of at most"):
        read_run_metadata(_file(tmp_path, "# ir_metadata.start\n" + head * 1100 + LINES))
