"""Document readers: JSONL and TREC <DOC> SGML, good and malformed files."""

from __future__ import annotations

import gzip
import json

import pytest

from workbench.documents import SourceDocument, read_documents
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
