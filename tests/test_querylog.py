"""Query-log reading (JSONL, TSV), masking, keyed hashes and the k-users rule."""

from __future__ import annotations

import json
import re

import pytest

from tests.cost import LINEAR_BOUND, growth
from workbench.clicks import Click
from workbench.querylog import (
    AnonymisationReport,
    LogAnonymiser,
    RuleEffect,
    key_fingerprint,
    keyed_hash,
    load_or_create_key,
    mask_query,
    normalise_query,
    parse_time,
    query_key,
    read_log,
    read_query_mapping,
)
from workbench.trec import TrecFormatError

KEY = bytes(range(32))


def impression(**over):
    line = {
        "session": "s1",
        "user": "alice@example.org",
        "query": "Parallel  Languages",
        "time": "2026-01-01T00:00:00Z",
        "results": [{"docno": "D2", "rank": 2}, {"docno": "D1", "rank": 1}],
        "clicks": [{"docno": "D2", "time": 1767225610}],
    }
    line.update(over)
    return json.dumps(line, ensure_ascii=False)


def write(tmp_path, name, *lines):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_reads_a_jsonl_impression(tmp_path):
    path = write(tmp_path, "log.jsonl", impression(), "", impression(clicks=[], time=5))
    first, second = list(read_log(path))
    assert first.line == 1 and second.line == 3
    assert first.results == ("D1", "D2")  # by rank
    assert first.time == 1767225600.0 and first.query == "Parallel  Languages"
    assert first.clicks == (Click("D2", 1767225610.0),)
    assert second.clicks == () and second.time == 5.0


def test_reads_the_tsv_variant(tmp_path):
    path = write(
        tmp_path,
        "log.tsv",
        "session\tuser\ttime\tquery\tresults\tclicks",
        "s1\tu1\t100\tparallel languages\tD1 D2 D3\tD3@110 D1@105",
        "s2\tu2\t2026-01-01T00:00:00+01:00\tq\tD1\t",
    )
    first, second = list(read_log(path))
    assert first.results == ("D1", "D2", "D3")
    assert first.clicks == (Click("D1", 105.0), Click("D3", 110.0))  # time order
    assert second.time == 1767222000.0 and second.clicks == ()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("not json", "a JSON object"),
        (json.dumps({"session": "s"}), '"session", "user"'),
        (impression(results=[]), "at least one result"),
        (impression(results=[{"docno": "D1", "rank": 2}]), "ranks 1..n"),
        (
            impression(results=[{"docno": "D1", "rank": 1}, {"docno": "D1", "rank": 2}]),
            "each docno once",
        ),
        (impression(results=[{"docno": "D1", "rank": True}]), '"rank": integer'),
        (impression(clicks=[{"docno": "D9"}]), "clicks on shown documents only"),
        (impression(clicks=[{"docno": "D1", "time": 3}, {"docno": "D2"}]), "on every click"),
        (impression(time="yesterday"), "ISO 8601 time as time"),
        (impression(user=""), "a non-empty string as logged user id"),
        (impression(user="u" * 201), "a logged user id of at most 200 characters"),
        (impression(query="  "), "a non-empty query text"),
        (impression(query="q\u0000"), "without NUL"),
        (impression(results=[{"docno": "D" * 201, "rank": 1}]), "a docno of at most 200"),
    ],
)
def test_bad_jsonl_lines_name_file_and_line(tmp_path, line, expected):
    path = write(tmp_path, "log.jsonl", impression(), line)
    with pytest.raises(TrecFormatError, match=r"log\.jsonl:2: expected") as error:
        list(read_log(path))
    assert expected in str(error.value)


def test_bytes_that_are_not_utf8_are_refused(tmp_path):
    path = tmp_path / "log.jsonl"
    latin = impression(query="caf\u00e9").encode("latin-1")
    path.write_bytes(impression().encode() + b"\n" + latin)
    with pytest.raises(TrecFormatError, match=r"log\.jsonl:2: expected UTF-8 text"):
        list(read_log(path))


def test_lines_are_bounded(tmp_path, monkeypatch):
    import workbench.querylog as querylog

    monkeypatch.setattr(querylog, "MAX_LINE_BYTES", 100)
    path = write(tmp_path, "log.jsonl", impression())
    with pytest.raises(TrecFormatError, match=re.escape("log.jsonl:1: expected a line of at")):
        list(read_log(path))


def test_empty_files_headers_and_formats_are_errors(tmp_path):
    with pytest.raises(TrecFormatError, match="at least one impression"):
        list(read_log(write(tmp_path, "empty.jsonl", "")))
    with pytest.raises(TrecFormatError, match=re.escape("log.tsv:1: expected the header line")):
        list(read_log(write(tmp_path, "log.tsv", "s1\tu1\t100\tq\tD1\t")))
    bad = write(
        tmp_path,
        "bad.tsv",
        "\t".join(("session", "user", "time", "query", "results", "clicks")),
        "s1\tu1\t100\tq\tD1",
    )
    with pytest.raises(TrecFormatError, match=re.escape("bad.tsv:2: expected 6 tab-separated")):
        list(read_log(bad))
    with pytest.raises(TrecFormatError, match=re.escape("a .jsonl or .tsv file")):
        list(read_log(write(tmp_path, "log.txt", impression())))
    assert len(list(read_log(write(tmp_path, "log.txt", impression()), format="jsonl"))) == 1


def test_parse_time():
    assert parse_time(12) == 12.0
    assert parse_time("1970-01-01T00:01:00") == 60.0
    assert parse_time("1970-01-01T01:00:00+01:00") == 0.0
    assert parse_time("60.5") == 60.5
    assert parse_time(True) is None and parse_time(float("nan")) is None and parse_time([]) is None


def test_normalise_and_mask():
    assert normalise_query("  Ｐａｒａｌｌｅｌ\tLANGUAGES ") == "parallel languages"
    masked = mask_query("mail jo.doe+x@mail.example.com about www.site.org/x and 0171 234-5678")
    assert masked.text == "mail [email] about [url] and [number]"
    assert (masked.emails, masked.urls, masked.numbers) == (1, 1, 1)
    assert mask_query("see https://a.b/c?d=1 in 1984").text == "see [url] in 1984"
    assert mask_query("order 12345 or 123456").text == "order 12345 or [number]"
    assert query_key("Call 555 123 4567  NOW") == "call [number] now"


def test_keyed_hash_is_hmac_sha256():
    import hashlib
    import hmac

    expected = hmac.new(KEY, b"alice", hashlib.sha256).hexdigest()[:32]
    assert keyed_hash(KEY, "alice") == expected
    assert keyed_hash(KEY, "alice") != keyed_hash(bytes(32), "alice")
    assert key_fingerprint(KEY) != key_fingerprint(bytes(32))


def test_key_is_created_once_outside_the_store(tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_QUERYLOG_KEY", raising=False)
    key = load_or_create_key(tmp_path)
    assert len(key) == 32 and load_or_create_key(tmp_path) == key
    assert (tmp_path / "querylog_key").stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("WORKBENCH_QUERYLOG_KEY", KEY.hex())
    assert load_or_create_key(tmp_path) == KEY


def test_query_mapping(tmp_path):
    mapping = read_query_mapping(write(tmp_path, "map.tsv", "7\tParallel Languages", "7\tpl"))
    assert mapping == {"parallel languages": "7", "pl": "7"}
    with pytest.raises(TrecFormatError, match=re.escape("map.tsv:2: expected each query mapped")):
        read_query_mapping(write(tmp_path, "map.tsv", "7\tpl", "8\tPL"))
    with pytest.raises(TrecFormatError, match=re.escape("map.tsv:1: expected qid<TAB>query")):
        read_query_mapping(write(tmp_path, "map.tsv", "7 pl"))


# Variants that reached the stored query in clear while masking ran before NFKC normalisation
# (or did not allow the separator): (query as typed, its stored masked text).
MASKING_CORPUS = [
    ("mail jane.roe\uff20example.org", "mail [email]"),  # fullwidth @
    ("jane\uff0eroe\uff20example\uff0eorg", "[email]"),  # fullwidth dots too
    ("\uff4a\uff41\uff4e\uff45@example.org now", "[email] now"),  # fullwidth letters
    ("card 4111\u00a01111\u00a01111\u00a01111", "card [number]"),  # no-break spaces
    ("card 4111\u20091111\u20091111\u20091111", "card [number]"),  # thin spaces
    ("card 4111\u202f1111\u202f1111\u202f1111", "card [number]"),  # narrow no-break spaces
    ("id 4111\u30001111", "id [number]"),  # an ideographic space
    ("\uff14\uff11\uff11\uff11\uff11\uff11 fullwidth digits", "[number] fullwidth digits"),
    ("born 12/03/1987", "born [number]"),
    ("acct 123_456_789", "acct [number]"),
    ("total 123,456,789 votes", "total [number] votes"),
    ("call 0171  234  5678", "call [number]"),  # double spaces between the groups
    ("call 0171 - 234 - 5678", "call [number]"),
    ("call 0171\u2013234\u20135678", "call [number]"),  # en dashes
    ("iban DE44 5001 0517 5407 3249 31", "iban DE[number]"),
    ("see https\uff1a\uff0f\uff0fexample.com/x", "see [url]"),  # fullwidth :// (NFKC)
    ("visit \uff57\uff57\uff57.example.com", "visit [url]"),
]


@pytest.mark.parametrize(("typed", "stored"), MASKING_CORPUS)
def test_masking_reads_the_normalised_query(tmp_path, typed, stored):
    """Normalise first (NFKC, white space), mask after: no compatibility character, no-break
    space or separator lets an address or a number through, in the stored text or its key."""
    assert mask_query(typed).text == stored
    path = tmp_path / "log.jsonl"
    path.write_text(impression(query=typed) + "\n", encoding="utf-8")
    anonymiser = LogAnonymiser(KEY, min_users=1)
    anonymiser.observe(read_log(path))
    (kept,) = anonymiser.keep(read_log(path))
    assert kept.query == stored and kept.query_key == normalise_query(stored)
    for text in (kept.query, kept.query_key):
        assert "@" not in text and not re.search(r"\d[^a-z]*\d[^a-z]*\d[^a-z]*\d", text)


@pytest.mark.parametrize(
    "text",
    ["order 12345 or 123456 in 1984", "v1.2.3 release", "page 12-34", "a@b, c.d"],
)
def test_masking_leaves_short_numbers_and_non_addresses(text):
    masked = mask_query(text)
    assert masked.text == text.replace("123456", "[number]")
    assert masked.emails == masked.urls == 0


@pytest.mark.parametrize(
    ("make", "n"),
    [
        (lambda n: "a." * n, 1_000),  # an address's characters without '@': was quadratic
        (lambda n: "a" * n, 2_000),
        (lambda n: "a@" * n, 2_000),
        (lambda n: "a@b." * n, 1_000),
        (lambda n: "http:/" * n, 1_000),  # a scheme's characters without '://'
        (lambda n: "12345x" * n, 1_000),  # digit runs one short of a number
        (lambda n: "1 " * n, 2_000),
        (lambda n: "1" + " ,/" * n, 2_000),
    ],
)
def test_masking_is_linear_on_adversarial_queries(make, n):
    """The e-mail pattern took quadratic time on 'a.a.a...' (1,000 characters: 11 ms; a 1 MiB
    upload held a request thread 14 s): the growth of processor time over a 16x larger input
    (tests/cost.py) stays linear for every pattern."""
    assert growth(mask_query, make, n) < LINEAR_BOUND


def test_anonymiser_hashes_masks_and_drops_rare_queries(tmp_path):
    lines = [
        impression(user="u1", query="rare query"),
        impression(user="u1", query="Common Query"),
        impression(user="u2", query="common   query"),
        impression(user="u2", query="common query"),
        impression(user="u3", query="mail a@b.org"),
        impression(user="u4", query="mail c@d.org"),  # same key as the line above
        impression(user="u5", query="loner 1234567"),
    ]
    path = write(tmp_path, "log.jsonl", *lines)
    anonymiser = LogAnonymiser(KEY, min_users=2)
    anonymiser.observe(read_log(path))
    kept = list(anonymiser.keep(read_log(path)))
    assert [k.line for k in kept] == [2, 3, 4, 5, 6]
    assert kept[0].user == keyed_hash(KEY, "u1")
    assert kept[0].session == keyed_hash(KEY, "session:s1") != keyed_hash(KEY, "s1")
    assert kept[0].query == "Common Query" and kept[0].query_key == "common query"
    assert kept[3].query == "mail [email]" and kept[3].query_key == "mail [email]"
    report = anonymiser.report()
    assert report.read == (7, 5, 4)  # rare, common, mail [email], loner [number]
    assert report.kept == (5, 4, 2)
    assert report.rules == (
        RuleEffect(
            "user and session ids replaced by keyed hashes (HMAC-SHA-256)", "replaced", 7, 5, 0
        ),
        RuleEffect("e-mail addresses masked", "masked", 2, 2, 2),
        RuleEffect("URLs masked", "masked", 0, 0, 0),
        RuleEffect("digit runs of 6 or more masked", "masked", 1, 1, 1),
        RuleEffect("queries issued by fewer than 2 distinct users dropped", "dropped", 2, 1, 2),
    )
    assert AnonymisationReport.from_dict(report.to_dict()) == report
    with pytest.raises(ValueError):
        LogAnonymiser(KEY, min_users=0)
    with pytest.raises(ValueError):
        LogAnonymiser(b"short")
