"""Hostile input: any byte string given to an importer is imported or refused with one clear
error (TrecFormatError for the file's format, ServiceError for a request the store refuses),
never another exception; a refused import leaves every table of the store unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.hardening.conftest import row_counts
from tests.property_examples import examples
from workbench import trec
from workbench.documents import read_documents
from workbench.services import (
    campaigns,
    document_imports,
    qrels_imports,
    run_imports,
    topic_imports,
)
from workbench.services.errors import ServiceError
from workbench.store import Store
from workbench.store.models import Campaign, QrelsSet, Topic

CLEAR_ERRORS = (trec.TrecFormatError, ServiceError)
FUZZ = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TOKENS = [
    "1",
    "2",
    "301",
    "Q0",
    "0",
    "-1",
    "3.5",
    "1e309",
    "nan",
    "inf",
    "-0",
    "99999999999999999999",
    "D1",
    "D2",
    "doc-é",
    "run",
    "tag",
    "\t",
    " ",
    "  ",
    "\r",
    "\x00",
    "\ufeff",
    "é",
    "\u2028",
    "<top>",
    "</top>",
    "<num>",
    "Number:",
    "<title>",
    "<desc>",
    "<narr>",
    "<DOC>",
    "</DOC>",
    "<DOCNO>",
    "</DOCNO>",
    "<TEXT>",
    "</TEXT>",
    "{",
    "}",
    "[",
    "]",
    '"qid"',
    '"docno"',
    '"title"',
    '"text"',
    ":",
    ",",
    '"1"',
    '"x"',
    "null",
    "true",
    "{}",
    '{"qid": 1}',
    '{"qid": "1", "title": "t"}',
    '{"docno": "D1", "text": 5}',
    '{"docno": ""}',
]
# Lines stay short of the column lengths (qid 100, qrels iteration 40): over-long values
# have their own test, test_overlong_identifiers_are_refused_clearly.
line = st.lists(st.sampled_from(TOKENS), max_size=8).map(lambda tokens: " ".join(tokens)[:99])
text_files = st.lists(line, max_size=12).map(lambda lines: "\n".join(lines).encode("utf-8"))
short_lines = st.binary(max_size=400).map(
    lambda data: b"\n".join(data[i : i + 39] for i in range(0, len(data), 39))
)
byte_strings = st.one_of(short_lines, text_files)


@pytest.fixture
def campaign_store(store: Store) -> Iterator[Store]:
    """The store with campaign 'fuzz' holding topics 1, 2 and 301."""
    with store.session() as session:
        campaign = campaigns.create_campaign(session, "fuzz")
        session.add_all(
            [
                Topic(campaign_id=campaign.id, qid=qid, title=f"topic {qid}")
                for qid in ("1", "2", "301")
            ]
        )
    yield store


Importer = Callable[[Session, Campaign, Path], object]
IMPORTERS: dict[str, Importer] = {
    "topics-guessed": lambda s, c, p: topic_imports.import_topics(s, c, p),
    "topics-trec": lambda s, c, p: topic_imports.import_topics(s, c, p, format="trec"),
    "topics-tsv": lambda s, c, p: topic_imports.import_topics(s, c, p, format="tsv"),
    "topics-jsonl": lambda s, c, p: topic_imports.import_topics(s, c, p, format="jsonl"),
    "documents-guessed": lambda s, c, p: document_imports.import_documents(s, c, [p]),
    "documents-jsonl": lambda s, c, p: document_imports.import_documents(s, c, [p], format="jsonl"),
    "documents-sgml": lambda s, c, p: document_imports.import_documents(s, c, [p], format="trec"),
    "runs": lambda s, c, p: run_imports.import_runs(s, c, [p], replace=True),
    "qrels": lambda s, c, p: qrels_imports.import_qrels(s, c, p, name=None),
}


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_importer_accepts_or_refuses_clearly_and_changes_nothing_on_refusal(
    campaign_store: Store, tmp_path: Path, kind: str
) -> None:
    importer = IMPORTERS[kind]
    path = tmp_path / "upload.txt"
    outcomes: dict[str, int] = {"imported": 0, "refused": 0}

    @FUZZ
    @given(data=byte_strings)
    def check(data: bytes) -> None:
        path.write_bytes(data)
        with campaign_store.session() as session:
            before = row_counts(session)
        try:
            with campaign_store.session() as session:
                campaign = campaigns.get_campaign(session, "fuzz")
                importer(session, campaign, path)
            outcomes["imported"] += 1
        except CLEAR_ERRORS as error:
            assert str(error), "an error without a message"
            outcomes["refused"] += 1
            with campaign_store.session() as session:
                assert row_counts(session) == before
        finally:
            # a qrels set is named after its file: drop it so the next example can import
            with campaign_store.session() as session:
                for qrels_set in session.scalars(select(QrelsSet)):
                    session.delete(qrels_set)

    check()
    assert outcomes["refused"] > 0


NUL_FILES = {
    "topics-trec": b"<top>\n<num> Number: 7\n<title> a\x00b\n</top>\n",
    "topics-tsv": b"8\ta\x00b\n",
    "topics-jsonl": b'{"qid": "9", "title": "a\\u0000b"}\n',
    "documents-jsonl": b'{"docno": "D1", "text": "a\\u0000b"}\n',
    "documents-sgml": b"<DOC>\n<DOCNO>D2</DOCNO>\n<TEXT>a\x00b</TEXT>\n</DOC>\n",
    "runs": b"1 Q0 D\x001 1 1.0 r\n",
    "qrels": b"1 0 D\x001 1\n",
}
NUL_IMPORTERS = {
    "topics-trec": IMPORTERS["topics-guessed"],
    "topics-tsv": IMPORTERS["topics-tsv"],
    "topics-jsonl": IMPORTERS["topics-guessed"],
    "documents-jsonl": IMPORTERS["documents-guessed"],
    "documents-sgml": IMPORTERS["documents-guessed"],
    "runs": IMPORTERS["runs"],
    "qrels": IMPORTERS["qrels"],
}


@pytest.mark.parametrize("kind", sorted(NUL_FILES))
def test_nul_characters_are_a_format_error(
    campaign_store: Store, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "upload.txt"
    path.write_bytes(NUL_FILES[kind])
    with campaign_store.session() as session:
        before = row_counts(session)
    with (
        pytest.raises(trec.TrecFormatError, match=r"upload\.txt:[1-9]"),
        campaign_store.session() as session,
    ):
        NUL_IMPORTERS[kind](session, campaigns.get_campaign(session, "fuzz"), path)
    with campaign_store.session() as session:
        assert row_counts(session) == before


READERS: dict[str, Callable[[Path], object]] = {
    "read_run": trec.read_run,
    "read_qrels": trec.read_qrels,
    "read_qrels_jg": trec.read_qrels_jg,
    "read_prefs": trec.read_prefs,
    "read_topics": trec.read_topics,
    "read_documents": lambda path: list(read_documents(path)),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_trec_readers_raise_only_trec_format_error(tmp_path: Path, name: str) -> None:
    reader = READERS[name]
    path = tmp_path / "input.txt"

    @settings(max_examples=examples(100), deadline=None)
    @given(data=byte_strings)
    def check(data: bytes) -> None:
        path.write_bytes(data)
        try:
            reader(path)
        except trec.TrecFormatError as error:
            assert error.args and str(error)

    check()


@pytest.mark.parametrize("kind", ["topics", "documents", "runs", "qrels"])
def test_web_upload_of_any_bytes_is_a_message_never_a_500(app, world, kind: str) -> None:  # type: ignore[no-untyped-def]
    """Through the admin's upload form: a 400 showing the campaign page with an error
    message and nothing changed, or a 303 back to the campaign with the import's summary."""
    import io

    from tests.web.conftest import client_factory, get_store_of

    admin = client_factory(app)("admin")
    url = f"/admin/campaigns/{world.campaign_id}/upload/{kind}"

    @settings(max_examples=examples(15), deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=byte_strings)
    def check(data: bytes) -> None:
        with get_store_of(app).session() as session:
            before = row_counts(session)
        response = admin.post(
            url,
            data={"files": (io.BytesIO(data), "upload.txt"), "name": "fuzzed"},
            content_type="multipart/form-data",
        )
        assert response.status_code in (303, 400)
        refused = response.status_code == 400
        page = response.text if refused else admin.get(response.location).text
        with get_store_of(app).session() as session:
            after = row_counts(session)
        assert ('class="flash error' in page) == refused
        if refused:
            assert after == before
        else:
            assert 'class="flash info' in page
        with get_store_of(app).session() as session:  # let the next qrels upload reuse the name
            for qrels_set in session.scalars(select(QrelsSet)):
                session.delete(qrels_set)

    check()


LONG = "x" * 250
OVERLONG: dict[str, tuple[bytes, Callable[[Session, Campaign, Path], object]]] = {
    "topics-tsv qid": (f"{LONG}\ttitle\n".encode(), IMPORTERS["topics-tsv"]),
    "topics-trec qid": (
        f"<top>\n<num> Number: {LONG}\n<title> a\n</top>\n".encode(),
        IMPORTERS["topics-trec"],
    ),
    "documents docno": (
        b'{"docno": "%s", "text": "a"}\n' % LONG.encode(),
        IMPORTERS["documents-jsonl"],
    ),
    "runs tag": (f"1 Q0 D1 1 1.0 {LONG}\n".encode(), IMPORTERS["runs"]),
    "runs docno": (f"1 Q0 {LONG} 1 1.0 r\n".encode(), IMPORTERS["runs"]),
    "qrels iteration": (f"1 {LONG[:50]} D1 1\n".encode(), IMPORTERS["qrels"]),
    "qrels docno": (f"1 0 {LONG} 1\n".encode(), IMPORTERS["qrels"]),
    "qrels name": (b"1 0 D1 1\n", lambda s, c, p: qrels_imports.import_qrels(s, c, p, name=LONG)),
    "runs group": (
        b"1 Q0 D1 1 1.0 r\n",
        lambda s, c, p: run_imports.import_runs(s, c, [p], group=LONG),
    ),
    "campaign name": (b"", lambda s, c, p: campaigns.create_campaign(s, LONG)),
    "scale label": (
        b"",
        lambda s, c, p: campaigns.create_campaign(s, "m", scale=f"0:{LONG}:0,1:b:1"),
    ),
}


@pytest.mark.parametrize("case", sorted(OVERLONG))
def test_overlong_identifiers_are_refused_clearly(
    campaign_store: Store, tmp_path: Path, case: str
) -> None:
    data, importer = OVERLONG[case]
    path = tmp_path / "upload.txt"
    path.write_bytes(data)
    with campaign_store.session() as session:
        before = row_counts(session)
    with pytest.raises(CLEAR_ERRORS) as refusal, campaign_store.session() as session:
        importer(session, campaigns.get_campaign(session, "fuzz"), path)
    assert "of at most" in str(refusal.value)
    if isinstance(refusal.value, trec.TrecFormatError):
        assert refusal.value.path == str(path)
        assert LONG[:50] in refusal.value.line  # the line holding the value
    with campaign_store.session() as session:
        assert row_counts(session) == before
