"""The C run reader (workbench/trec/_fastscan.c) against the numpy reader: the same rows,
values, tag and errors on random files full of corners, across block boundaries."""

from __future__ import annotations

import io
import random
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from tests.property_examples import examples
from workbench.limits import STORE_LIMITS
from workbench.trec import TrecFormatError, native, read_run, read_runs, scan
from workbench.trec import runs as runs_module
from workbench.trec.keys import docno_hash, segments_with_repeats

pytestmark = [
    pytest.mark.skipif(
        not native.available(),
        reason="the C run reader is not built (pip install -e . compiles trec/_fastscan.c)",
    ),
    pytest.mark.smoke,  # also run against the installed wheel (scripts/check-wheel.sh)
]

SEPARATORS = [" ", " ", " ", "  ", "\t", " \t ", "\x0b", "\x0c", " \r "]
SCORES = [
    "1", "0.5", "-0.25", "+3", "12.750", "1e-3", "-1E+2", "inf", "-inf", "nan", "0.", ".5",
    "-0", "123456789012345", "1234567890123456", "0.0000000000000000000001", "1.2.3", "x",
    "--1", "+", ".", "0x1p3", "1_0", "9" * 30,
]  # fmt: skip
RANKS = ["1", "07", "-3", "+4", "x", "99999999999999999999999", "-99999999999999999999999", "1.5"]


def _line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.03:
        return rng.choice(["", "   ", "\t", "# a comment", "#x Q0 d 1 1 t", " # indented"])
    if roll < 0.04:
        return "q Q0 d 1"  # too few fields
    qid = rng.choice(["1", "2", "10", "q_3", "b"])
    docno = rng.choice(["d", "doc", "FBIS3-1234", "d" * rng.randint(1, 40), "x#y", "é"])
    fields = [qid, "Q0", docno, rng.choice(RANKS), rng.choice(SCORES), rng.choice(["t", "tag2"])]
    fields += ["extra"] * (rng.random() < 0.1)
    text = fields[0]
    for field in fields[1:]:
        text += rng.choice(SEPARATORS) + field
    return rng.choice(["", " ", "\t"]) + text + rng.choice(["", " ", "\r"])


def _read(path: Path, *, use_c: bool, **options: bool) -> tuple:
    """Everything read_run gives, or its error, with the C reader on or off."""
    saved = native._fastscan
    native._fastscan = saved if use_c else None
    try:
        run = read_run(path, **options)
    except TrecFormatError as error:
        return ("error", error.path, error.line_number, error.line, error.expected)
    finally:
        native._fastscan = saved
    return (
        run.topics(),
        run.offsets.tolist(),
        run.docnos.tolist(),
        run.docnos.dtype,
        run.scores.view(np.uint64).tolist(),  # bit for bit (NaN, -0.0)
        run.ranks.tolist(),
        run.docno_hashes.tolist(),
        run.tag,
        run.n_lines,
    )


@pytest.mark.parametrize("chunk", [1 << 23, 64, 7])
@pytest.mark.parametrize("seed", range(examples(40)))
def test_c_and_numpy_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    monkeypatch.setattr(scan, "_CHUNK_BYTES", chunk)
    rng = random.Random(seed)
    lines = [_line(rng) for _ in range(rng.randint(1, 60))]
    text = "\n".join(lines) + rng.choice(["", "\n"])
    if rng.random() < 0.05:
        text = text.replace("Q0", "Q\x000", 1)
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    for options in ({}, {"check_duplicates": False, "ranks": False}):
        assert _read(path, use_c=True, **options) == _read(path, use_c=False, **options)


def test_clean_files_are_read_in_c(tmp_path: Path) -> None:
    """A plain file takes the C path (it is read at all, and the numbers come out exact)."""
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 0.1 t\n1 Q0 d2 2 1e-1 t\n2 Q0 d1 1 7 t\n")
    run = read_run(path, check_duplicates=False, ranks=False)
    assert run.scores.tolist() == [0.1, 0.1, 7.0]
    assert run.docnos.dtype == np.dtype("S2")
    assert run.docno_hashes.tolist() == docno_hash(run.docnos).tolist()


def test_streams_and_a_line_longer_than_a_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_CHUNK_BYTES", 16)
    docno = "d" * 100
    text = f"1 Q0 {docno} 1 2.5 t\n1 Q0 e 2 1 t"  # no final newline
    for source in (io.BytesIO(text.encode()), io.StringIO(text)):
        run = read_run(source)
        assert run.topic_lines("1").docnos == [docno, "e"]
        assert run.tag == "t"


def test_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 d 1 1 t\n1 Q0 e 1 oops t\n")
    with pytest.raises(TrecFormatError) as error:
        read_run(path, check_duplicates=False, ranks=False)
    assert (error.value.line_number, error.value.line) == (2, "1 Q0 e 1 oops t")
    assert "a number as field 5 (score)" in error.value.expected


@pytest.mark.parametrize("seed", range(examples(20)))
def test_repeated_hashes_in_c_and_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, size=rng.integers(1, 20))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    hashes = rng.integers(0, 40, size=int(offsets[-1])).astype(np.uint64)
    in_c = segments_with_repeats(hashes, offsets)
    saved = native._fastscan
    native._fastscan = None
    try:
        in_numpy = segments_with_repeats(hashes, offsets)
    finally:
        native._fastscan = saved
    expected = [len(set(hashes[a:b].tolist())) < b - a for a, b in pairwise(offsets)]
    assert in_c.tolist() == in_numpy.tolist() == expected


@pytest.mark.parametrize("seed", range(examples(8)))
def test_evaluation_is_the_same_with_and_without_c(seed: int) -> None:
    """The qrels lookup in C (and every other C path an evaluation takes) gives the numpy
    path's values: graded, negative and unjudged documents, long and short docnos, ties."""
    from workbench.metrics import evaluate

    rng = np.random.default_rng(seed)
    docs = [f"d{i}" * int(rng.integers(1, 4)) for i in range(300)]
    qrels = {
        f"q{t}": {d: int(rng.choice([-2, -1, 0, 0, 1, 2, 3])) for d in rng.choice(docs, 60)}
        for t in range(12)
    }
    run = {
        f"q{t}": {d: float(rng.integers(0, 20)) for d in rng.choice(docs, 120)}
        for t in range(2, 15)
    }
    measures = ["official", "ndcg_cut.5,10", "bpref", "infAP", "P(rel=2)@5", "binG", "unj"]
    with_c = evaluate(qrels, run, measures, average_over_all_topics=True)
    saved = native._fastscan
    native._fastscan = None
    try:
        without = evaluate(qrels, run, measures, average_over_all_topics=True)
    finally:
        native._fastscan = saved
    assert with_c.per_topic == without.per_topic and with_c.summary == without.summary


def _plain_line(rng: random.Random) -> str:
    """Mostly the plain form an import reads in C, now and then one of the corners that send
    the file to the numpy reader (or make it refuse)."""
    qid = rng.choice(["1", "2", "10", "q_3", "b"])
    docno = rng.choice(["d", "FBIS3-1234", "d" * rng.randint(1, 40), "x#y"])
    rank = rng.choice(["1", "07", "12", "123456789012345678"])
    fields = [qid, "Q0", docno, rank, rng.choice(["1", "0.5", "-2.25", "3"]), "t"]
    if rng.random() < 0.02:  # one corner: the whole line, or one field
        corner = rng.randrange(6)
        if corner == 0:
            return _line(rng)
        fields[[0, 2, 3, 5, 5][corner - 1]] = ["b" * 101, "d" * 201, "1" * 19, "tag2", "é"][
            corner - 1
        ]
    return " ".join(fields)


def _read_runs(path: Path, *, use_c: bool, **options: object) -> tuple:
    """Everything read_runs (an import's strict reading) gives, or its error."""
    saved = native._fastscan
    native._fastscan = saved if use_c else None
    try:
        runs = read_runs(path, **options)  # type: ignore[arg-type]
    except TrecFormatError as error:
        return ("error", error.path, error.line_number, error.line, error.expected)
    finally:
        native._fastscan = saved
    return tuple(
        (
            run.topics(), run.offsets.tolist(), run.docnos.tolist(), run.docnos.dtype,
            run.scores.view(np.uint64).tolist(), run.ranks.tolist(), run.docno_hashes.tolist(),
            run.tag, run.n_lines,
        )
        for run in runs
    )  # fmt: skip


@pytest.mark.parametrize("chunk", [1 << 23, 64, 7])
@pytest.mark.parametrize("seed", range(examples(40)))
def test_strict_c_and_numpy_readers_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, chunk: int
) -> None:
    """read_runs in C (a plain file) or numpy (anything else): the same runs or error."""
    monkeypatch.setattr(scan, "_CHUNK_BYTES", chunk)
    rng = random.Random(seed)
    lines = [_plain_line(rng) for _ in range(rng.randint(1, 60))]
    text = "\n".join(lines) + rng.choice(["", "\n"])
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    for options in ({}, {"limits": STORE_LIMITS}, {"limits": STORE_LIMITS, "split_tags": True}):
        assert _read_runs(path, use_c=True, **options) == _read_runs(path, use_c=False, **options)


def test_a_plain_file_is_imported_through_c(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.25 t\n2 Q0 d1 1 7 t\n")
    plain = runs_module._plain_read(path, str(path), STORE_LIMITS, True, None)
    assert plain is not None and plain.tag == b"t" and plain.seg_qids == [b"1", b"2"]
    for irregular in ("1 Q0 d1 1 0.5 t extra\n", "1 Q0 d1 +1 0.5 t\n", "1 Q0 d1 1 0.5 u\n",
                      "1 Q0 dé 1 0.5 t\n", "1 Q0 d1 1 1e3 t\n"):  # fmt: skip
        path.write_text("1 Q0 d0 1 0.5 t\n" + irregular)
        assert runs_module._plain_read(path, str(path), STORE_LIMITS, True, None) is None
    path.write_bytes(b"# caf\xe9 (Latin-1)\n1 Q0 d1 1 0.5 t\n")  # not UTF-8, in a comment
    assert runs_module._plain_read(path, str(path), STORE_LIMITS, True, None) is None
    assert _read_runs(path, use_c=True)[0] == "error"
