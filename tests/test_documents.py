"""Document readers: JSONL and TREC <DOC> SGML, good and malformed files."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from functools import partial

import pytest

from tests.cost import LINEAR_BOUND, growth, on_disk, refused
from workbench.documents import SizeLimits, SourceDocument, read_documents
from workbench.limits import IdLimits
from workbench.trec import TrecFormatError

SGML = """<DOC>
<DOCNO> FT911-1 </DOCNO>
<HEADLINE>Markets &amp; <B>money</B></HEADLINE>
<TEXT>
First paragraph.
</TEXT>
<TEXT>Second.</TEXT>
</DOC>

<DOC><DOCNO>FT911-2</DOCNO><TEXT>one line</TEXT></DOC>
<DOC>
<DOCNO>FT911-3</DOCNO>
</DOC>
"""


def test_jsonl_documents_keep_extra_fields(tmp_path):
    path = tmp_path / "docs.jsonl"
    rows = [
        {"docno": "d1", "title": "T1", "text": "body one", "url": "http://x"},
        {"docno": 2, "text": "body two"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    assert list(read_documents(path)) == [
        SourceDocument("d1", "T1", "body one", {"url": "http://x"}),
        SourceDocument("2", "", "body two", {}),
    ]


def test_trec_sgml_documents(tmp_path):
    path = tmp_path / "docs.sgml"
    path.write_text(SGML)
    assert list(read_documents(path)) == [
        SourceDocument("FT911-1", "Markets & money", "First paragraph.\n\nSecond."),
        SourceDocument("FT911-2", "", "one line"),
        SourceDocument("FT911-3", "", ""),
    ]


def test_format_is_guessed_from_content_and_gzip_is_read(tmp_path):
    path = tmp_path / "collection.gz"
    with gzip.open(path, "wt") as f:
        f.write(SGML)
    assert [d.docno for d in read_documents(path)] == ["FT911-1", "FT911-2", "FT911-3"]
    plain = tmp_path / "collection"
    plain.write_text('{"docno": "x", "text": "y"}\n')
    assert [d.docno for d in read_documents(plain)] == ["x"]


def test_documents_are_streamed(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"docno": "a"}\n{"docno": "b"}\nnot json\n')
    reader = read_documents(path)
    assert next(reader).docno == "a"  # the bad third line is not read yet
    assert next(reader).docno == "b"
    with pytest.raises(TrecFormatError):
        next(reader)


@pytest.mark.parametrize(
    ("name", "content", "line_number", "expected"),
    [
        ("bad.jsonl", '{"docno": "a"}\n{"docno": \n', 2, "a JSON object"),
        ("bad.jsonl", '{"docno": "a"}\n[1, 2]\n', 2, "a JSON object"),
        ("bad.jsonl", '{"title": "no docno"}\n', 1, 'a non-empty "docno"'),
        ("bad.sgml", "<DOC>\n<DOCNO>a</DOCNO>\n</DOC>\nstray text\n", 4, "<DOC>"),
        ("bad.sgml", "<DOC>\n<DOCNO>a</DOCNO>\n<DOC>\n", 3, "</DOC> before the next <DOC>"),
        ("bad.sgml", "<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>x</TEXT>\n", 1, "</DOC> closing"),
        ("bad.sgml", "<DOC>\n<TEXT>no docno</TEXT>\n</DOC>\n", 1, "<DOCNO>id</DOCNO>"),
    ],
)
def test_malformed_documents_name_file_line_and_expectation(
    tmp_path, name, content, line_number, expected
):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TrecFormatError) as caught:
        list(read_documents(path))
    assert caught.value.path == str(path)
    assert caught.value.line_number == line_number
    assert expected in caught.value.expected
    assert str(caught.value).startswith(f"{path}:{line_number}: expected ")


def test_unrecognisable_file_is_an_error(tmp_path):
    path = tmp_path / "mystery"
    path.write_text("hello\n")
    with pytest.raises(TrecFormatError, match="JSONL object or a TREC <DOC>"):
        list(read_documents(path))


@pytest.mark.parametrize(
    ("name", "content", "line_number"),
    [
        ("nul.jsonl", '{"docno": "a", "text": "x"}\n{"docno": "b", "text": "x\\u0000y"}\n', 2),
        ("nul-key.jsonl", '{"docno": "a", "x\\u0000": 1}\n', 1),
        ("nul.sgml", "<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>x\0y</TEXT>\n</DOC>\n", 3),
    ],
)
def test_nul_characters_are_format_errors(tmp_path, name, content, line_number):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TrecFormatError) as caught:
        list(read_documents(path))
    assert caught.value.line_number == line_number
    assert caught.value.expected == "text without NUL characters"


@pytest.mark.parametrize(
    ("name", "content", "line_number"),
    [
        ("long.jsonl", '{"docno": "abc"}\n\n{"docno": "abcd"}\n', 3),
        ("long.sgml", "<DOC><DOCNO>abc</DOCNO></DOC>\n<DOC>\n<DOCNO> abcd </DOCNO>\n</DOC>\n", 2),
    ],
)
def test_docnos_longer_than_the_limit_name_their_line(tmp_path, name, content, line_number):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TrecFormatError) as caught:
        list(read_documents(path, limits=IdLimits(docno=3)))
    assert caught.value.line_number == line_number
    assert caught.value.expected == "a docno of at most 3 characters"
    assert [d.docno for d in read_documents(path)] == ["abc", "abcd"]


# --------------------------------------------------------------------------- never guessing


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ('{"docno": true}', "a string or an integer as 'docno' (not a boolean)"),
        ('{"docno": {"id": 1}}', "a string or an integer as 'docno' (not an object)"),
        ('{"docno": [1]}', "a string or an integer as 'docno' (not an array)"),
        ('{"docno": 1.5}', "a string or an integer as 'docno' (not a number)"),
        ('{"docno": "a", "title": {"x": 1}}', "a string as 'title' (not an object)"),
        ('{"docno": "a", "text": 3}', "a string as 'text' (not a number)"),
        ('{"docno": "a", "text": false}', "a string as 'text' (not a boolean)"),
        ("[" * 100_000, "a JSON object nested less deep"),
    ],
)
def test_jsonl_values_of_the_wrong_type_are_refused(tmp_path, record, expected):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"docno": "ok", "text": "fine"}\n' + record + "\n")
    with pytest.raises(TrecFormatError) as caught:
        list(read_documents(path))
    assert (caught.value.line_number, caught.value.expected) == (2, expected)


def test_integer_docnos_and_null_fields_are_read(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"docno": 7, "title": null, "text": "x"}\n')
    assert list(read_documents(path)) == [SourceDocument("7", "", "x")]


@pytest.mark.parametrize(
    ("name", "content", "line_number"),
    [
        ("docs.jsonl", b'{"docno": "a"}\n{"docno": "b\xff"}\n', 2),
        ("docs.sgml", b"<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>caf\xe9</TEXT>\n</DOC>\n", 3),
        ("docs.sgml", b"<DOC>\n<DOCNO>\xc3</DOCNO>\n</DOC>\n", 2),
    ],
)
def test_bytes_that_are_not_utf8_are_refused(tmp_path, name, content, line_number):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(TrecFormatError) as caught:
        list(read_documents(path))
    assert (caught.value.line_number, caught.value.expected) == (line_number, "UTF-8 text")


# --------------------------------------------------------------------------- size limits


def test_a_document_larger_than_the_limit_is_refused(tmp_path):
    small = SizeLimits(document_bytes=1000)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text('{"docno": "a"}\n' + json.dumps({"docno": "b", "text": "x" * 2000}) + "\n")
    with pytest.raises(TrecFormatError, match=r"docs.jsonl:2: expected a document of at most 1000"):
        list(read_documents(jsonl, sizes=small))
    sgml = tmp_path / "docs.sgml"
    sgml.write_text("<DOC>\n<DOCNO>a</DOCNO>\n" + "<TEXT>words</TEXT>\n" * 100 + "</DOC>\n")
    with pytest.raises(TrecFormatError, match=r"docs.sgml:1: expected a document of at most 1000"):
        list(read_documents(sgml, sizes=small))
    assert [d.docno for d in read_documents(sgml, sizes=SizeLimits(document_bytes=3000))] == ["a"]


def test_limits_come_from_the_environment():
    env = {"WORKBENCH_MAX_DOCUMENT_BYTES": "5000", "WORKBENCH_MAX_GZIP_RATIO": "20"}
    assert SizeLimits.from_env(env) == SizeLimits(document_bytes=5000, gzip_ratio=20)
    assert SizeLimits.from_env({}) == SizeLimits()
    with pytest.raises(ValueError, match="WORKBENCH_MAX_DECOMPRESSED_BYTES must be a positive"):
        SizeLimits.from_env({"WORKBENCH_MAX_DECOMPRESSED_BYTES": "lots"})


def _gzip_of(path, piece: bytes, total: int) -> None:
    """A .gz of `piece` repeated to `total` bytes: one 16 MiB gzip member, compressed once
    and repeated (a .gz may hold several members, read as one stream)."""
    member_bytes = min(total, 16 << 20)
    member = gzip.compress(piece * (member_bytes // len(piece)), compresslevel=9)
    path.write_bytes(member * (total // member_bytes))


def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path):
    """A 1 MB .gz expanding to 1 GiB of one line: refused at the document limit (16 MiB),
    having held little more than that in memory."""
    bomb = tmp_path / "bomb.jsonl.gz"
    _gzip_of(bomb, b"a", 1 << 30)
    assert bomb.stat().st_size < 1_100_000
    tracemalloc.start()
    try:
        with pytest.raises(TrecFormatError, match=r"bomb\.jsonl\.gz:1: expected a document of at"):
            list(read_documents(bomb))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * SizeLimits().document_bytes


def test_a_gzip_expanding_beyond_its_ratio_or_size_is_refused(tmp_path):
    lines = tmp_path / "lines.jsonl.gz"  # 64 MiB of blank lines in about 64 KB
    _gzip_of(lines, b"\n", 64 << 20)
    assert lines.stat().st_size < 100_000
    with pytest.raises(
        TrecFormatError, match=r"expected a \.gz file expanding to at most 16777216"
    ):
        list(read_documents(lines, format="jsonl"))
    capped = SizeLimits(decompressed_bytes=1 << 20, gzip_ratio=10_000)
    with pytest.raises(TrecFormatError, match="expanding to at most 1048576 bytes"):
        list(read_documents(lines, format="jsonl", sizes=capped))
    small = tmp_path / "small.jsonl.gz"  # within the limits: read whole
    _gzip_of(small, b'{"docno": "a"}\n', 1 << 20)
    assert len(list(read_documents(small, sizes=SizeLimits(gzip_ratio=1000)))) == (1 << 20) // 15


def test_corrupt_or_truncated_gzip_is_a_clear_error(tmp_path):
    good = gzip.compress(b'{"docno": "a"}\n' * 1000)
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(TrecFormatError, match=r"cut\.jsonl\.gz:1: expected a complete, valid gzip"):
        list(read_documents(truncated))
    corrupt = tmp_path / "bad.jsonl.gz"
    corrupt.write_bytes(good[:20] + bytes(50) + good[70:])
    with pytest.raises(TrecFormatError, match="expected a complete, valid gzip"):
        list(read_documents(corrupt))
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_bytes(b'{"docno": "a"}\n')
    with pytest.raises(TrecFormatError, match=r"plain\.jsonl\.gz:1: expected a complete, valid"):
        list(read_documents(not_gzip))


# --------------------------------------------------------------------------- linear time


def _all_documents(path, format: str) -> object:  # type: ignore[no-untyped-def]
    return list(read_documents(path, format=format, sizes=SizeLimits(document_bytes=1 << 30)))


@pytest.mark.parametrize(
    ("make", "n"),
    [
        # an unclosed <DOCNO> followed by whitespace: cubic with <DOCNO>\s*(.*?)\s*</DOCNO>
        (lambda n: "<DOC>\n<DOCNO>" + " " * n + "\n</DOC>\n", 200_000),
        (lambda n: "<DOC>\n<DOCNO>" + " \n" * n + "</DOC>\n", 50_000),
        # 20,000 and more repeated unclosed openers: quadratic with <TEXT>(.*?)</TEXT>
        (lambda n: "<DOC>\n<DOCNO>d</DOCNO>" + "<TEXT>" * n + "\n</DOC>\n", 20_000),
        (lambda n: "<DOC>\n<DOCNO>d</DOCNO>" + "<HEADLINE>" * n + "\n</DOC>\n", 20_000),
        (lambda n: "<DOC>\n" + "<DOCNO>" * n + "\n</DOC>\n", 20_000),
        # markup that never closes, and character references without end
        (lambda n: "<DOC>\n<DOCNO>d</DOCNO><TEXT>" + "<" * n + "</TEXT>\n</DOC>\n", 50_000),
        (lambda n: "<DOC>\n<DOCNO>d</DOCNO><TEXT>&#" + "0" * n + "</TEXT>\n</DOC>\n", 50_000),
        (lambda n: "<DOC>\n<DOCNO>d</DOCNO><TEXT>" + "&#1" * n + "</TEXT>\n</DOC>\n", 5_000),
    ],
)
def test_sgml_reading_is_linear_on_adversarial_input(tmp_path, make, n):
    parse = refused(partial(_all_documents, format="trec"), TrecFormatError)
    assert growth(parse, on_disk(tmp_path, make), n) < LINEAR_BOUND


@pytest.mark.parametrize(
    ("make", "n"),
    [
        (lambda n: "[" * n + "\n", 20_000),
        (lambda n: '{"docno": "' + " " * n + "\n", 200_000),
        (lambda n: '{"docno": "a"}\n' + "\n" * n, 50_000),
    ],
)
def test_jsonl_reading_is_linear_on_adversarial_input(tmp_path, make, n):
    parse = refused(partial(_all_documents, format="jsonl"), TrecFormatError)
    assert growth(parse, on_disk(tmp_path, make), n) < LINEAR_BOUND
