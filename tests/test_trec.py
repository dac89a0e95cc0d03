"""TREC formats: runs, qrels, the -R variants, topics; malformed input; writers."""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import workbench.trec as trec
from tests.cost import LINEAR_BOUND, growth, on_disk, refused
from workbench.limits import IdLimits
from workbench.trec import (
    JudgmentGroupLine,
    PrefsLine,
    Qrels,
    Run,
    TopicStatement,
    TrecFormatError,
    read_prefs,
    read_qrels,
    read_qrels_jg,
    read_run,
    read_topics,
    scan,
    write_qrels,
    write_run,
)


def _file(tmp_path: Path, text: str, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


RUN = """\
q2 Q0 d1 1 3.5 tagA
q2 Q0 d2 2 3.25 tagA
q10 Q0 d9 1 -1e-3 tagA
q2 Q0 d3 3 2 tagB extra fields are ignored
"""


def test_read_run_columns_topics_and_tag(tmp_path: Path) -> None:
    run = read_run(_file(tmp_path, RUN))
    assert run.topics() == ["q2", "q10"]
    assert run.tag == "tagB"
    assert run.n_lines == 4
    lines = run.topic_lines("q2")
    assert lines.docnos == ["d1", "d2", "d3"]
    assert lines.scores.tolist() == [3.5, 3.25, 2.0]
    assert lines.ranks.tolist() == [1, 2, 3]
    assert run.topic_lines("q10").scores.tolist() == [-0.001]


def test_ids_are_strings(tmp_path: Path) -> None:
    run = read_run(_file(tmp_path, "007 Q0 0042 1 1.0 t\n7 Q0 42 1 1.0 t\n"))
    assert run.topics() == ["007", "7"]
    assert run.topic_lines("007").docnos == ["0042"]


def test_scores_parse_exactly_as_strtod(tmp_path: Path) -> None:
    tokens = ["0.1", "2.129133", "-0", "+7", "1e5", "123456789012345678", "3.", ".5", "inf"]
    text = "".join(f"q Q0 d{i} {i} {t} r\n" for i, t in enumerate(tokens))
    run = read_run(_file(tmp_path, text))
    assert run.topic_lines("q").scores.tolist() == [float(t) for t in tokens]


def test_whitespace_tabs_crlf_blank_lines_and_comments(tmp_path: Path) -> None:
    text = "# a comment\r\n\r\nq1\tQ0  d#1 1\t0.5 t\r\n   \nq1 Q0 d2 2 0.25 t\r\n"
    run = read_run(_file(tmp_path, text))
    assert run.topic_lines("q1").docnos == ["d#1", "d2"]
    assert run.tag == "t"


def test_topics_regrouped_in_file_order(tmp_path: Path) -> None:
    text = "a Q0 x 1 1 t\nb Q0 y 1 1 t\na Q0 z 2 0.5 t\n"
    run = read_run(_file(tmp_path, text))
    assert run.topics() == ["a", "b"]
    assert run.topic_lines("a").docnos == ["x", "z"]


def test_many_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk boundaries fall mid-line; line numbers in errors stay right across chunks."""
    monkeypatch.setattr(scan, "_CHUNK_BYTES", 64)
    lines = [f"q{i // 7} Q0 doc{i} {i} {i / 3!r} run\n" for i in range(200)]
    run = read_run(_file(tmp_path, "".join(lines)))
    assert run.n_lines == 200
    assert run.topic_lines("q3").docnos == [f"doc{i}" for i in range(21, 28)]
    assert run.topic_lines("q3").scores.tolist() == [i / 3 for i in range(21, 28)]
    bad = [*lines[:150], "q9 Q0 d 1 oops run\n", *lines[150:]]
    with pytest.raises(TrecFormatError) as error:
        read_run(_file(tmp_path, "".join(bad), "bad.txt"))
    assert error.value.line_number == 151


@pytest.mark.parametrize(
    ("text", "line_number", "expected"),
    [
        ("q Q0 d 1 1.0 t\nq Q0 d2 2 0.5\n", 2, "at least 6 fields"),
        ("q Q0 d 1 high t\n", 1, "a number as field 5 (score)"),
        ("q Q0 d 1 1.5x t\n", 1, "a number as field 5 (score)"),
        ("q Q0 d 1 1 t\nq Q0 e 2 1 t\nq Q0 d 3 0 t\n", 3, "each docno at most once"),
    ],
)
def test_malformed_runs(tmp_path: Path, text: str, line_number: int, expected: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(TrecFormatError) as error:
        read_run(path)
    assert error.value.path == str(path)
    assert error.value.line_number == line_number
    assert expected in error.value.expected
    assert error.value.line == text.splitlines()[line_number - 1]
    assert str(error.value).startswith(f"{path}:{line_number}: expected ")


@pytest.mark.parametrize(
    ("text", "line_number", "expected"),
    [
        ("q 0 d 1\nq 0 e 1 extra\n", 2, "exactly 4 fields"),
        ("q 0 d\n", 1, "exactly 4 fields"),
        ("q 0 d rel\n", 1, "an integer as field 4"),
        ("q 0 d 1.5\n", 1, "an integer as field 4"),
        ("q 0 d 1\nq 0 e 0\nq 1 d 0\n", 3, "one judgment per (qid, docno)"),
    ],
)
def test_malformed_qrels(tmp_path: Path, text: str, line_number: int, expected: str) -> None:
    with pytest.raises(TrecFormatError) as error:
        read_qrels(_file(tmp_path, text))
    assert (error.value.line_number, error.value.line) == (
        line_number,
        text.splitlines()[line_number - 1],
    )
    assert expected in error.value.expected


def test_malformed_streams_report_the_stream(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError) as error:
        read_run(io.BytesIO(b"q Q0 d 1 x t\n"), name="mine.run")
    assert str(error.value) == (
        "mine.run:1: expected a number as field 5 (score); got 'q Q0 d 1 x t'"
    )


def test_read_qrels(tmp_path: Path) -> None:
    qrels = read_qrels(_file(tmp_path, "# c\n1 0 d#1 2\n1 0 d2 -1\n2 0 d1 0\n"))
    assert qrels.topics() == ["1", "2"]
    assert qrels.topic("1") == {"d#1": 2, "d2": -1}
    assert list(qrels.entries()) == [
        ("1", "0", "d#1", 2),
        ("1", "0", "d2", -1),
        ("2", "0", "d1", 0),
    ]


def test_read_qrels_jg_and_prefs(tmp_path: Path) -> None:
    jg = read_qrels_jg(_file(tmp_path, "301 1 d1 1\n# c\n301 2 d1 0\n"))
    assert jg == [JudgmentGroupLine("301", "1", "d1", 1), JudgmentGroupLine("301", "2", "d1", 0)]
    prefs = read_prefs(_file(tmp_path, "1.EC F:Ret 0 d#1 1.5\n", "p.txt"))
    assert prefs == [PrefsLine("1.EC", "F:Ret", "0", "d#1", 1.5)]
    with pytest.raises(TrecFormatError, match="exactly 5 fields"):
        read_prefs(_file(tmp_path, "1 a b d\n", "bad.txt"))
    with pytest.raises(TrecFormatError, match="an integer as field 4"):
        read_qrels_jg(_file(tmp_path, "1 a d x\n", "bad2.txt"))
    with pytest.raises(TrecFormatError, match=r"exactly 4 fields \(qid jg docno rel\)"):
        read_qrels_jg(_file(tmp_path, "1 a d 1 2\n", "bad3.txt"))
    with pytest.raises(TrecFormatError, match=r"bad4.txt:2: expected a number as field 5 \(rel\)"):
        read_prefs(_file(tmp_path, "1 a b d 1\n1 a b d high\n", "bad4.txt"))


def test_writers_round_trip(tmp_path: Path) -> None:
    data = {"q1": {"b": 0.1 + 0.2, "a": 1 / 3, "c": 1 / 3}, "q0": {"x": -2.5e-9}}
    write_run(data, tmp_path / "run.txt", tag="mine")
    back = read_run(tmp_path / "run.txt")
    assert back.to_dict() == data
    assert back.tag == "mine"
    assert back.topic_lines("q1").docnos == ["c", "a", "b"]  # trec order: ties docno desc
    write_run(back, tmp_path / "again.txt", tag="mine")
    assert (tmp_path / "again.txt").read_bytes() == (tmp_path / "run.txt").read_bytes()
    qrels = {"7": {"d1": 2, "d0": -1}, "3": {"z": 0}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    assert read_qrels(tmp_path / "qrels.txt").to_dict() == qrels


def test_select_keeps_the_lines_of_the_asked_topics_in_that_order(tmp_path: Path) -> None:
    path = _file(tmp_path, "2 Q0 b 1 0.5 t\n2 Q0 a 2 0.5 t\n1 Q0 c 1 3 t\n3 Q0 d 1 1 t\n")
    run = read_run(path)
    chosen = run.select(["3", "9", "2"])
    assert chosen.topics() == ["3", "9", "2"]
    assert chosen.offsets.tolist() == [0, 1, 1, 3]
    assert chosen.to_dict() == {"3": {"d": 1.0}, "9": {}, "2": {"b": 0.5, "a": 0.5}}
    assert chosen.ranks.tolist() == [1, 1, 2]
    assert chosen.docno_hashes.tolist() == trec.docno_hash(chosen.docnos).tolist()
    assert chosen.tag == "t"
    assert run.select(["9"]).to_dict() == {"9": {}}
    assert run.select([]).topics() == []


def test_repeated_topics_are_found_once_and_carried_by_select() -> None:
    docnos = np.array([b"a", b"b", b"a", b"c", b"d", b"e", b"e"])
    run = Run(["1", "2", "3"], np.array([0, 3, 5, 7]), docnos, np.zeros(7), np.arange(7), "t")
    assert run.repeated_topics == frozenset({"1", "3"})
    assert run.select(["2", "3", "9"]).repeated_topics == frozenset({"3"})
    fresh = Run(["1", "2", "3"], np.array([0, 3, 5, 7]), docnos, np.zeros(7), np.arange(7), "t")
    chosen = fresh.select(["1", "2"])  # made before the parent knew: found from its own lines
    assert "repeated_topics" not in chosen.__dict__
    assert chosen.repeated_topics == frozenset({"1"})


def test_from_dict() -> None:
    run = Run.from_dict({"1": {"a": 2.0, "b": 1.0}})
    assert run.topic_lines("1").ranks.tolist() == [1, 2]
    assert Qrels.from_dict({"1": {"a": 1}}).topic("1") == {"a": 1}
    assert Qrels.from_dict({}).topics() == []
    assert Run.from_dict({}).topics() == []


def test_empty_files(tmp_path: Path) -> None:
    assert read_run(_file(tmp_path, "")).topics() == []
    assert read_qrels(_file(tmp_path, "\n# only a comment\n", "q.txt")).topics() == []


TREC_TOPICS = """\
<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate
in international criminal activity.
<narr> Narrative:
A relevant document must name the organization.
</top>

<top>
<num> Number: 302 <title> Poliomyelitis
</top>
"""


def test_read_topics_all_formats(tmp_path: Path) -> None:
    topics = read_topics(_file(tmp_path, TREC_TOPICS))
    assert topics[0] == TopicStatement(
        "301",
        "International Organized Crime",
        "Identify organizations that participate in international criminal activity.",
        "A relevant document must name the organization.",
    )
    assert (topics[1].qid, topics[1].title) == ("302", "Poliomyelitis")
    tsv = read_topics(_file(tmp_path, "007\tcheap flights\n8\tpolio\n", "t.tsv"))
    assert [(t.qid, t.title) for t in tsv] == [("007", "cheap flights"), ("8", "polio")]
    jsonl = '{"qid": "1", "title": "a", "narrative": "n", "lang": "en"}\n{"id": 2, "query": "b"}\n'
    topics = read_topics(_file(tmp_path, jsonl, "t.jsonl"))
    assert topics[0] == TopicStatement("1", "a", "", "n", {"lang": "en"})
    assert (topics[1].qid, topics[1].title) == ("2", "b")


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("no tab here\n", "tsv", "qid<TAB>title"),
        ("\ttitle only\n", "tsv", "qid<TAB>title"),
        ('{"qid": "1"}\n', "jsonl", '"qid" and "title"'),
        ("{not json\n", "jsonl", "a JSON object"),
        ("<top><title> x </top>\n", "trec", "<num>"),
    ],
)
def test_malformed_topics(tmp_path: Path, text: str, fmt: str, expected: str) -> None:
    with pytest.raises(TrecFormatError) as error:
        read_topics(_file(tmp_path, text), format=fmt)
    assert expected in error.value.expected
    assert error.value.line_number == 1


def test_docno_hash_equal_for_equal_docnos() -> None:
    names = np.array([b"a", b"bb", b"a"])
    hashes = trec.docno_hash(names)
    assert hashes[0] == hashes[2] and hashes[0] != hashes[1]


@pytest.mark.parametrize(
    ("reader", "text"),
    [
        (read_run, "q Q0 d 1 1 t\nq Q0 d\x002 2 1 t\n"),
        (read_qrels, "1 0 a 1\n1 0 b\x00 1\n"),
        (read_qrels_jg, "1 0 a 1\n\x00\n"),
        (read_prefs, "1 a b d 1\n1 a b e\x00 0\n"),
        (read_topics, "1\tok\n2\tbad\x00\n"),
        (read_topics, '{"qid": "1", "title": "a"}\n{"qid": "2", "title": "a\\u0000b"}\n'),
    ],
)
def test_nul_characters_are_refused(tmp_path: Path, reader, text: str) -> None:
    """NUL bytes would be stored by SQLite and refused by PostgreSQL: a format error here."""
    path = _file(tmp_path, text)
    with pytest.raises(TrecFormatError) as error:
        reader(path)
    assert (error.value.line_number, error.value.expected) == (2, "text without NUL characters")


# --------------------------------------------------------------------------- length limits

LIMITS = IdLimits(qid=5, docno=6, tag=4, iteration=3)


@pytest.mark.parametrize(
    ("text", "line_number", "expected"),
    [
        ("q1 Q0 d1 1 1.0 r\nqqqqqq Q0 d2 1 1.0 r\n", 2, "a qid of at most 5 characters"),
        ("q1 Q0 d1 1 1.0 r\n\nq1 Q0 ddddddd 2 0.5 r\n", 3, "a docno of at most 6 characters"),
        ("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 rrrrr\n", 2, "a run tag of at most 4 characters"),
    ],
)
def test_run_ids_longer_than_the_limits_name_file_line_and_limit(
    tmp_path: Path, text: str, line_number: int, expected: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(TrecFormatError) as caught:
        read_run(path, limits=LIMITS)
    assert (caught.value.path, caught.value.line_number) == (str(path), line_number)
    assert caught.value.expected.startswith(expected)
    assert read_run(path).n_lines == 2  # no limit by default, as trec_eval


def test_limits_count_characters_not_bytes(tmp_path: Path) -> None:
    # 6 characters, 12 bytes: within a 6-character docno limit
    path = _file(tmp_path, "q1 Q0 éééééé 1 1.0 r\nq1 Q0 ééééééé 2 0.5 r\n")
    with pytest.raises(TrecFormatError) as caught:
        read_run(path, limits=LIMITS)
    assert caught.value.line_number == 2
    path.write_text("q1 Q0 éééééé 1 1.0 r\n", encoding="utf-8")
    assert read_run(path, limits=LIMITS).topic_lines("q1").docnos == ["éééééé"]


@pytest.mark.parametrize(
    ("text", "line_number", "expected"),
    [
        ("q1 0 d1 1\nqqqqqq 0 d2 1\n", 2, "a qid of at most 5 characters as field 1"),
        ("q1 0 d1 1\nq1 iter d2 1\n", 2, "an iteration of at most 3 characters as field 2"),
        ("q1 0 ddddddd 1\n", 1, "a docno of at most 6 characters as field 3"),
    ],
)
def test_qrels_ids_longer_than_the_limits_are_format_errors(
    tmp_path: Path, text: str, line_number: int, expected: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(TrecFormatError) as caught:
        read_qrels(path, limits=LIMITS)
    assert (caught.value.path, caught.value.line_number) == (str(path), line_number)
    assert caught.value.expected.startswith(expected)
    assert len(read_qrels(path)) == text.count("\n")


@pytest.mark.parametrize(
    ("text", "line_number"),
    [
        ("1\tshort\n\n123456\ttoo long\n", 3),
        ('{"qid": "1", "title": "a"}\n{"qid": "123456", "title": "b"}\n', 2),
        ("<top>\n<num> Number: 1\n<title> a\n</top>\n\n<top>\n<num> Number: 123456\n</top>\n", 7),
    ],
)
def test_topic_qids_longer_than_the_limit_name_their_line(
    tmp_path: Path, text: str, line_number: int
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(TrecFormatError) as caught:
        read_topics(path, limits=LIMITS)
    assert caught.value.line_number == line_number
    assert "123456" in caught.value.line
    assert caught.value.expected == "a qid of at most 5 characters"
    assert [t.qid for t in read_topics(path)] == ["1", "123456"]


# --------------------------------------------------------------------------- imports never guess


def _bytes_file(tmp_path: Path, data: bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refusal(read, path: Path, **options) -> TrecFormatError:  # type: ignore[no-untyped-def]
    with pytest.raises(TrecFormatError) as caught:
        read(path, **options)
    error = caught.value
    assert str(error).startswith(f"{path}:{error.line_number}: expected {error.expected}; got ")
    return error


def test_a_run_file_with_two_tags_is_refused_or_split_on_request(tmp_path):
    text = "1 Q0 a 1 3 first\n1 Q0 b 2 2 first\n2 Q0 a 1 5 second\n1 Q0 a 1 9 second\n"
    path = _file(tmp_path, text)
    error = _refusal(trec.read_runs, path)
    assert error.line_number == 3
    assert error.line == "2 Q0 a 1 5 second"
    assert "one run tag per file ('first', as on line 1" in error.expected
    assert "--split-tags" in error.expected
    first, second = trec.read_runs(path, split_tags=True)
    assert (first.tag, first.to_dict()) == ("first", {"1": {"a": 3.0, "b": 2.0}})
    assert (second.tag, second.to_dict()) == ("second", {"2": {"a": 5.0}, "1": {"a": 9.0}})
    assert (first.n_lines, second.n_lines) == (2, 2)
    mixed = _file(tmp_path, "1 Q0 a 1 3 first\n2 Q0 a 1 5 second\n", "mixed.txt")
    assert read_run(mixed).tag == "second"  # trec_eval reading: the last line's tag


def test_tags_that_change_between_chunks_are_told_apart(tmp_path, monkeypatch):
    """Chunks of a single tag each (the reader's no-sort path), the tag changing between
    them: still refused, or split by tag, never merged into the first tag."""
    monkeypatch.setattr(scan, "_CHUNK_BYTES", 64)
    lines = [f"q{i % 3} Q0 d{i} {i} {100 - i} {'A' if i < 20 else 'B'}\n" for i in range(40)]
    path = _file(tmp_path, "".join(lines))
    error = _refusal(trec.read_runs, path)
    assert error.line_number == 21 and "one run tag per file ('A'" in error.expected
    first, second = trec.read_runs(path, split_tags=True)
    assert (first.tag, first.n_lines, second.tag, second.n_lines) == ("A", 20, "B", 20)
    assert first.topic_lines("q0").docnos == [f"d{i}" for i in range(0, 20, 3)]
    assert second.topic_lines("q0").docnos == [f"d{i}" for i in range(21, 40, 3)]


def test_split_tags_still_refuses_a_docno_twice_in_one_run(tmp_path):
    path = _file(tmp_path, "1 Q0 a 1 3 x\n1 Q0 a 1 3 y\n1 Q0 a 2 1 y\n")
    error = _refusal(trec.read_runs, path, split_tags=True)
    assert error.line_number == 3 and "docno 'a' repeats in topic '1'" in error.expected


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_an_empty_run_file_is_refused(tmp_path, text):
    error = _refusal(trec.read_runs, _file(tmp_path, text))
    assert (error.line_number, error.expected) == (1, "run lines (qid Q0 docno rank score tag)")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("1 Q0 a 1 3", "exactly 6 fields (qid Q0 docno rank score tag)"),
        ("1 Q0 a 1 3 tag extra", "exactly 6 fields (qid Q0 docno rank score tag)"),
        ("1 Q0 a 9223372036854775808 3 tag", "an integer from"),
        ("1 Q0 a 99999999999999999999 3 tag", "an integer from"),
        ("1 Q0 a 1.5 3 tag", "an integer as field 4 (rank)"),
        ("1 Q0 a 1_0 3 tag", "an integer as field 4 (rank)"),
    ],
)
def test_run_lines_an_import_refuses(tmp_path, line, expected):
    path = _file(tmp_path, f"1 Q0 ok 1 3 tag\n{line}\n")
    error = _refusal(trec.read_runs, path)
    assert error.line_number == 2 and expected in error.expected


def test_a_field_longer_than_any_store_limit_is_refused_before_it_is_gathered(tmp_path):
    path = _file(tmp_path, "1 Q0 a 1 3 tag\n1 Q0 " + "d" * 2000 + " 2 1 tag\n")
    error = _refusal(trec.read_runs, path)
    assert (error.line_number, error.expected) == (2, "a field of at most 1024 bytes as field 3")
    qrels = _file(tmp_path, "1 0 a " + "9" * 5000 + "\n", "qrels.txt")
    error = _refusal(read_qrels, qrels, strict=True)
    assert (error.line_number, error.expected) == (1, "a field of at most 1024 bytes as field 4")


def test_the_largest_rank_is_read_exactly(tmp_path):
    path = _file(tmp_path, "1 Q0 a 9223372036854775807 3 tag\n1 Q0 b -5 2 tag\n")
    assert trec.read_runs(path)[0].ranks.tolist() == [2**63 - 1, -5]


def test_qrels_grades_must_fit_32_bits_on_import(tmp_path):
    path = _file(tmp_path, "1 0 a 1\n1 0 b 2147483648\n")
    error = _refusal(read_qrels, path, strict=True)
    assert error.line_number == 2
    assert (
        error.expected == "an integer from -2147483648 to 2147483647 as field 4 (relevance grade)"
    )
    assert read_qrels(path).to_dict() == {"1": {"a": 1, "b": 2**31}}  # trec_eval reading
    low = _file(tmp_path, "1 0 a -2147483648\n1 0 b 2147483647\n", "ok.txt")
    assert read_qrels(low, strict=True).to_dict() == {"1": {"a": -(2**31), "b": 2**31 - 1}}
    huge = _file(tmp_path, "1 0 a 99999999999999999999\n", "huge.txt")
    assert "an integer from" in _refusal(read_qrels, huge).expected  # never an OverflowError


@pytest.mark.parametrize(
    ("read", "data", "options", "line_number"),
    [
        ("read_runs", b"1 Q0 a 1 3 tag\n1 Q0 b\xff 2 2 tag\n", {}, 2),
        ("read_runs", b"1 Q0 a 1 3 t\xe9g\n", {}, 1),
        ("read_qrels", b"1 0 a 1\n\n1 0 \xc3 0\n", {"strict": True}, 3),
        ("read_topics", b"1\tfirst\n2\tcaf\xe9\n", {}, 2),
        ("read_topics", b'{"qid": "1", "title": "\xff"}\n', {}, 1),
        ("read_topics", b"<top>\n<num> 1\n<title> caf\xe9\n</top>\n", {}, 3),
    ],
)
def test_bytes_that_are_not_utf8_are_refused(tmp_path, read, data, options, line_number):
    error = _refusal(getattr(trec, read), _bytes_file(tmp_path, data), **options)
    assert (error.line_number, error.expected) == (line_number, "UTF-8 text")


@pytest.mark.parametrize(
    ("text", "fmt", "line_number"),
    [
        ("1\tfirst\n2\tsecond\n1\tagain\n", "tsv", 3),
        ('{"qid": "7", "title": "a"}\n{"qid": 7, "title": "b"}\n', "jsonl", 2),
        ("<top><num> 5 <title> a </top>\n<top>\n<num> Number: 5\n<title> b\n</top>\n", "trec", 3),
    ],
)
def test_a_qid_twice_in_one_topics_file_is_refused(tmp_path, text, fmt, line_number):
    error = _refusal(read_topics, _file(tmp_path, text), format=fmt)
    assert error.line_number == line_number
    assert "each qid once" in error.expected and "also on line 1" in error.expected


def test_a_tsv_header_is_detected_and_reported_or_refused(tmp_path):
    notes: list[str] = []
    path = _file(tmp_path, "qid\ttitle\n1\tfirst\n")
    assert read_topics(path, notes=notes) == [TopicStatement("1", "first")]
    assert notes == [f"{path}:1: header line 'qid\\ttitle' skipped"]
    other = _file(tmp_path, "# comment\nQuery_ID\tQuery\n2\tsecond\n", "other.tsv")
    assert [t.qid for t in read_topics(other)] == ["2"]
    ambiguous = _file(tmp_path, "qid\tfirst topic\n", "ambiguous.tsv")
    error = _refusal(read_topics, ambiguous)
    assert error.expected == "a topic, or a header naming the columns qid<TAB>title"
    later = _file(tmp_path, "1\tfirst\nqid\ttitle\n", "later.tsv")  # only a first line
    assert [t.qid for t in read_topics(later)] == ["1", "qid"]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('{"qid": true, "title": "x"}', "a string or an integer as 'qid' (not a boolean)"),
        ('{"qid": {"a": 1}, "title": "x"}', "a string or an integer as 'qid' (not an object)"),
        ('{"qid": "1", "title": ["x"]}', "a string as 'title' (not an array)"),
        ('{"qid": "1", "title": 5}', "a string as 'title' (not a number)"),
        ('{"qid": "1", "title": "x", "narrative": {}}', "a string as 'narrative' (not an object)"),
        ('{"id": 1.0, "query": "x"}', "a string or an integer as 'id' (not a number)"),
        ('{"qid": "1", "title": null}', 'an object with "qid" and "title"'),
    ],
)
def test_jsonl_topic_values_of_the_wrong_type_are_refused(tmp_path, record, expected):
    error = _refusal(read_topics, _file(tmp_path, record + "\n"), format="jsonl")
    assert (error.line_number, error.expected) == (1, expected)


def test_an_unclosed_topic_is_refused(tmp_path):
    path = _file(tmp_path, "<top>\n<num> 1\n<title> a\n</top>\n\n<top>\n<num> 2\n")
    error = _refusal(read_topics, path)
    assert (error.line_number, error.expected) == (6, "</top> closing this topic")


def test_topic_fields_drop_markup_and_labels(tmp_path):
    text = (
        "<TOP>\n<NUM> Number: 301 </num>\n<TITLE> International <b>Crime</b>\n"
        "<DESC> Description:\nFind <x> crime.\n<narr> Narrative: A <relevant> doc.\n</TOP>\n"
    )
    (topic,) = read_topics(_file(tmp_path, text))
    assert topic == TopicStatement("301", "International Crime", "Find crime.", "A doc.")


# --------------------------------------------------------------------------- linear time


@pytest.mark.parametrize(
    ("make", "n"),
    [
        (lambda n: "<top>" * n, 20_000),  # repeated unclosed openers
        (lambda n: "<top><num> 1 " + "<title>" * n + "</top>\n", 5_000),
        (lambda n: "<top><num> 1 <title>" + "<" * n + "</top>\n", 50_000),
        (lambda n: "<top><num>" + " " * n + "</top>\n", 200_000),  # long whitespace runs
        (lambda n: "<top><num> 1 <title>" + "</" * n + "</top>\n", 50_000),
        (lambda n: "<top>\n<num> 1\n</top>\n" * n, 5_000),  # many good topics...
        (lambda n: "1\t" + " " * n + "\n", 200_000),
        (lambda n: '{"qid": "1", "title": "' + " " * n + '"}\n', 200_000),
    ],
)
def test_topic_reading_is_linear_on_adversarial_input(tmp_path, make, n):
    assert growth(refused(read_topics, TrecFormatError), on_disk(tmp_path, make), n) < LINEAR_BOUND


@pytest.mark.parametrize(
    ("reader", "make", "n"),
    [
        (trec.read_runs, lambda n: "1 Q0 a 1 3 tag" + " " * n + "\n", 200_000),
        (trec.read_runs, lambda n: "1 Q0 a 1 3 tag\n" + "\n" * n, 200_000),
        (trec.read_runs, lambda n: "1 Q0 a 1 3 " + "t" * n + "\n", 200_000),
        (trec.read_runs, lambda n: "".join(f"1 Q0 d{i} {i} 3 t{i % 2}\n" for i in range(n)), 5_000),
        (partial(read_qrels, strict=True), lambda n: "1 0 a " + "9" * n + "\n", 200_000),
    ],
)
def test_run_and_qrels_reading_is_linear_on_adversarial_input(tmp_path, reader, make, n):
    assert growth(refused(reader, TrecFormatError), on_disk(tmp_path, make), n) < LINEAR_BOUND


def test_select_and_without_equal_qrels_made_from_the_dict_of_what_they_keep():
    rng = np.random.default_rng(5)
    lines = []
    for i in range(400):  # topics interleaved, so the grouped order differs from file order
        lines.append(f"q{rng.integers(0, 9)} {i % 3} D{i} {rng.integers(-1, 3)}")
    qrels = read_qrels(io.BytesIO("\n".join(lines).encode()))
    full = qrels.to_dict()
    topics = ["q7", "q2", "q0", "q5", "nowhere"]  # "nowhere" has no entries: it adds none

    chosen = qrels.select(topics)
    expected = Qrels.from_dict({q: full[q] for q in topics if q in full})
    assert chosen.topics() == expected.topics() == ["q7", "q2", "q0", "q5"]
    assert chosen.to_dict() == expected.to_dict()
    assert [list(chosen.topic(q)) for q in chosen.topics()] == [
        list(full[q]) for q in chosen.topics()
    ]
    assert chosen.grouped_hashes.tolist() == expected.grouped_hashes.tolist()

    removed = {"q2": set(list(full["q2"])[::2]), "q5": set(full["q5"]), "q0": {"not-judged"}}
    reduced = qrels.without(removed)
    kept = {
        q: {d: g for d, g in docs.items() if d not in removed.get(q, ())}
        for q, docs in full.items()
    }
    assert reduced.to_dict() == {q: docs for q, docs in kept.items() if docs}
    assert "q5" not in reduced  # every entry removed: the topic is gone
    assert len(reduced) == len(qrels) - len(removed["q2"]) - len(removed["q5"])
    # the iterations column follows its entries
    iteration_of = {(q, d): it for q, it, d, _ in qrels.entries()}
    assert all(iteration_of[q, d] == it for q, it, d, _ in reduced.entries())
    assert all(iteration_of[q, d] == it for q, it, d, _ in chosen.entries())
    # once computed, the docno hashes are carried over (equal to hashing the kept docnos)
    assert qrels.grouped_hashes is not None
    again, picked = qrels.without(removed), qrels.select(topics)
    for made, same in ((again, reduced), (picked, chosen)):
        assert "grouped_hashes" in made.__dict__
        assert made.grouped_hashes.tolist() == trec.docno_hash(made.grouped_docnos).tolist()
        assert made.to_dict() == same.to_dict()
    # every topic in the grouped order of grouped qrels: those qrels themselves
    assert reduced.select(reduced.topics()) is reduced
    assert qrels.select(qrels.topics()) is not qrels  # file order is not grouped: a copy
    assert qrels.select(qrels.topics()).to_dict() == qrels.to_dict()
    assert reduced.select(reduced.topics()[::-1]).topics() == reduced.topics()[::-1]
    # a docno judged twice (trec_eval's reading lets it through) goes with both its entries
    twice = read_qrels(io.BytesIO(b"1 0 a 1\n1 0 b 0\n1 0 a 2\n2 0 a 1\n"),
                       check_duplicates=False)  # fmt: skip
    assert list(twice.without({"1": {"a"}}).entries()) == [("1", "0", "b", 0), ("2", "0", "a", 1)]
