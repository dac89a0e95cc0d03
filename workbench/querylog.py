"""Query logs: the JSONL and TSV readers, query normalisation and anonymisation (pure).

A log holds one *impression* per line: the session and user ids, the query exactly as typed,
its timestamp, the result list (docnos with their ranks) and the clicked docnos with their
click times.

JSONL (``.jsonl``), one object per line::

    {"session": "s1", "user": "u7", "query": "Parallel languages", "time": 1767225600,
     "results": [{"docno": "D3", "rank": 1}, {"docno": "D9", "rank": 2}],
     "clicks": [{"docno": "D9", "time": 1767225604.5}]}

``time`` is seconds since the epoch or an ISO 8601 string (UTC when it has no offset); a
click's ``time`` may be null or absent.  Ranks are the integers 1..n, each once.  Other keys are
ignored.  TSV (``.tsv``) starts with the header line ``session user time query results
clicks`` (tab-separated); ``results`` lists the docnos in rank order separated by spaces,
``clicks`` the clicked docnos as ``docno`` or ``docno@time``.

Every line is checked: UTF-8 (strict), no NUL, at most :data:`MAX_LINE_BYTES` bytes,
:data:`MAX_RESULTS` results, ids and docnos within their store columns; a bad line raises
:class:`~workbench.trec.TrecFormatError` naming the file and line.  The reader streams: one
line in memory at a time.

Anonymisation (Croft, Metzler & Strohman §6.3 on the privacy of logs; the AOL log of 2006 as
the warning): user and session ids become keyed hashes (HMAC-SHA-256 with a key that never
leaves the server), e-mail addresses, URLs and long digit runs in query text are masked, and
queries issued by fewer than k distinct users are dropped (k-anonymity of the query text).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import limits
from workbench.clicks import Click
from workbench.trec import WITHOUT_NUL, TrecFormatError, has_nul

FORMATS = ("jsonl", "tsv")
TSV_HEADER = ("session", "user", "time", "query", "results", "clicks")
MAX_LINE_BYTES = 1 << 20
MAX_RESULTS = 1000
MAX_QUERY = 1000  # characters of query text
MAX_ID = 200  # characters of a session or user id as logged
HASH_HEX = 32  # hex digits kept of a keyed hash (128 bits)
DEFAULT_MIN_USERS = 5
MIN_DIGITS = 6
KEY_ENV = "WORKBENCH_QUERYLOG_KEY"
KEY_FILE = "querylog_key"
SESSION_PREFIX = "session:"  # sessions hash apart from users: a session named like a user differs

_SPACE = re.compile(r"\s+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+")
"""An e-mail address. Linear time: an address starts only where a run of its characters starts
(the look-behind), and possessive runs never give back what they took, so a long run without
'@' (``a.a.a...``) is read once, not once per starting position (which took quadratic time)."""
_URL = re.compile(r"(?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://|\bwww\.)\S+", re.IGNORECASE)
"""A URL: a scheme and ``://``, or ``www.``, then everything up to white space; linear for the
same reasons as `_EMAIL`."""
_DIGIT_GAP = r"[\s.,/_\-\u2010-\u2015\u2212]{0,3}"
"""What may stand between the digits of a masked number: up to three white space characters,
dots, commas, slashes, underscores or dashes (``4111 1111``, ``123,456,789``, ``12/34/56``,
``0171  234-5678``)."""
_DIGITS = re.compile(rf"\d(?:{_DIGIT_GAP}\d){{{MIN_DIGITS - 1},}}")
EMAIL_MASK, URL_MASK, NUMBER_MASK = "[email]", "[url]", "[number]"


def normalise_query(text: str) -> str:
    """The key that matches a query to a topic: Unicode NFKC, case folded, runs of white space
    made one space, no leading or trailing space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class LoggedImpression:
    """One line of a log as read (nothing anonymised yet)."""

    line: int
    session: str
    user: str
    query: str
    time: float
    results: tuple[str, ...]
    clicks: tuple[Click, ...]


def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown query-log format {format!r}; expected one of {FORMATS}")
        return format
    suffix = path.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise TrecFormatError(str(path), 0, path.name, "a .jsonl or .tsv file, or a format given")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, text) of each non-blank line: bounded, strict UTF-8, without NUL."""
    with path.open("rb") as stream:
        number = 0
        while True:
            raw = stream.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                shown = raw[:60].decode("utf-8", "replace")
                raise TrecFormatError(
                    str(path), number, shown, f"a line of at most {MAX_LINE_BYTES} bytes"
                )
            try:
                text = raw.decode("utf-8", "strict").rstrip("\r\n")
            except UnicodeDecodeError:
                raise TrecFormatError(
                    str(path), number, raw[:60].decode("utf-8", "replace"), "UTF-8 text"
                ) from None
            if "\0" in text:
                raise TrecFormatError(str(path), number, text, WITHOUT_NUL)
            if text.strip():
                yield number, text


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from a number or an ISO 8601 string (UTC without offset);
    None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return number if math.isfinite(number) else None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.timestamp()
    return None


class _Line:
    """Checks of one line's values, each failing with the file, line and what was expected."""

    def __init__(self, path: str, number: int, text: str) -> None:
        self.path, self.number, self.text = path, number, text

    def fail(self, expected: str) -> TrecFormatError:
        return TrecFormatError(self.path, self.number, self.text, expected)

    def identifier(self, value: Any, what: str, limit: int) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"a non-empty string as {what}")
        if len(value) > limit:
            raise self.fail(limits.at_most(what, limit))
        return value

    def query(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail("a non-empty query text")
        if len(value) > MAX_QUERY:
            raise self.fail(limits.at_most("query", MAX_QUERY))
        return value

    def time(self, value: Any, what: str) -> float:
        seconds = parse_time(value)
        if seconds is None:
            raise self.fail(f"seconds since the epoch or an ISO 8601 time as {what}")
        return seconds

    def results(self, docnos: list[Any]) -> tuple[str, ...]:
        if not docnos:
            raise self.fail("at least one result")
        if len(docnos) > MAX_RESULTS:
            raise self.fail(f"at most {MAX_RESULTS} results")
        out = tuple(self.identifier(d, "docno", limits.DOCNO) for d in docnos)
        if len(set(out)) != len(out):
            raise self.fail("each docno once in the results")
        return out

    def clicks(self, clicks: list[Click], shown: tuple[str, ...]) -> tuple[Click, ...]:
        if len(clicks) > MAX_RESULTS:
            raise self.fail(f"at most {MAX_RESULTS} clicks")
        unshown = set(shown)
        for click in clicks:
            if click.docno not in unshown:
                raise self.fail(f"clicks on shown documents only (not {click.docno!r})")
        timed = [c.time for c in clicks if c.time is not None]
        if timed and len(timed) != len(clicks):
            raise self.fail("a time on every click or on none")
        return tuple(sorted(clicks, key=lambda c: c.time or 0.0) if timed else clicks)


def _jsonl(path: Path) -> Iterator[LoggedImpression]:
    for number, text in _lines(path):
        line = _Line(str(path), number, text)
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise line.fail("a JSON object") from None
        keys = ("session", "user", "query", "time", "results", "clicks")
        if not isinstance(obj, dict) or any(k not in obj for k in keys):
            raise line.fail("an object with " + ", ".join(f'"{k}"' for k in keys))
        if has_nul(obj):
            raise line.fail(WITHOUT_NUL)
        results = obj["results"]
        if not isinstance(results, list) or not all(
            isinstance(r, dict)
            and isinstance(r.get("rank"), int)
            and not isinstance(r.get("rank"), bool)
            for r in results
        ):
            raise line.fail('"results" as a list of {"docno": ..., "rank": integer}')
        ranked = sorted(results, key=lambda r: r["rank"])
        if [r["rank"] for r in ranked] != list(range(1, len(ranked) + 1)):
            raise line.fail("ranks 1..n, each once")
        shown = line.results([r.get("docno") for r in ranked])
        raw_clicks = obj["clicks"]
        if not isinstance(raw_clicks, list) or not all(isinstance(c, dict) for c in raw_clicks):
            raise line.fail('"clicks" as a list of {"docno": ..., "time": ...}')
        clicks = [
            Click(
                line.identifier(c.get("docno"), "clicked docno", limits.DOCNO),
                None if c.get("time") is None else line.time(c["time"], "click time"),
            )
            for c in raw_clicks
        ]
        yield LoggedImpression(
            number,
            line.identifier(obj["session"], "logged session id", MAX_ID),
            line.identifier(obj["user"], "logged user id", MAX_ID),
            line.query(obj["query"]),
            line.time(obj["time"], "time"),
            shown,
            line.clicks(clicks, shown),
        )


def _tsv(path: Path) -> Iterator[LoggedImpression]:
    header = True
    for number, text in _lines(path):
        line = _Line(str(path), number, text)
        fields = text.split("\t")
        if header:
            if tuple(f.strip() for f in fields) != TSV_HEADER:
                raise line.fail("the header line " + "<TAB>".join(TSV_HEADER))
            header = False
            continue
        if len(fields) != len(TSV_HEADER):
            raise line.fail(f"{len(TSV_HEADER)} tab-separated fields ({' '.join(TSV_HEADER)})")
        session, user, time, query, results, clicked = fields
        shown = line.results(results.split())
        clicks = []
        for token in clicked.split():
            docno, at, when = token.rpartition("@") if "@" in token else (token, "", "")
            clicks.append(
                Click(
                    line.identifier(docno, "clicked docno", limits.DOCNO),
                    line.time(when, "click time") if at else None,
                )
            )
        yield LoggedImpression(
            number,
            line.identifier(session, "logged session id", MAX_ID),
            line.identifier(user, "logged user id", MAX_ID),
            line.query(query),
            line.time(time, "time"),
            shown,
            line.clicks(clicks, shown),
        )


def read_log(
    path: str | os.PathLike[str], *, format: str | None = None
) -> Iterator[LoggedImpression]:
    """Stream the impressions of a log file; ``format`` 'jsonl' or 'tsv' (else the suffix).
    An empty log is an error."""
    path = Path(path)
    reader = _jsonl if _format_of(path, format) == "jsonl" else _tsv
    empty = True
    for impression in reader(path):
        empty = False
        yield impression
    if empty:
        raise TrecFormatError(str(path), 0, "", "at least one impression")


def read_query_mapping(path: str | os.PathLike[str]) -> dict[str, str]:
    """A mapping file: ``qid<TAB>query`` lines; {normalised masked query: qid}.  A query
    mapped to two topics is an error; a topic may have several queries."""
    path = Path(path)
    mapping: dict[str, str] = {}
    for number, text in _lines(path):
        line = _Line(str(path), number, text)
        qid, tab, query = text.partition("\t")
        if not tab:
            raise line.fail("qid<TAB>query")
        qid = line.identifier(qid.strip(), "qid", limits.QID)
        key = query_key(line.query(query))
        if mapping.get(key, qid) != qid:
            raise line.fail(f"each query mapped to one topic ({key!r} is topic {mapping[key]})")
        mapping[key] = qid
    if not mapping:
        raise TrecFormatError(str(path), 0, "", "at least one qid<TAB>query line")
    return mapping


# --------------------------------------------------------------------------- anonymisation


@dataclass(frozen=True)
class MaskedQuery:
    """A query in Unicode NFKC form with its white space runs made one space, and e-mail
    addresses, URLs and runs of >= 6 digits (up to three separators between them: phone,
    card and account numbers) replaced by masks."""

    text: str
    emails: int
    urls: int
    numbers: int


def canonical_query(text: str) -> str:
    """The query as typed, in Unicode NFKC form (fullwidth and compatibility characters made
    plain: ``＠`` is ``@``, no-break and thin spaces are spaces, ``４`` is ``4``), its runs of
    white space made one space, without leading or trailing space. Masking reads this form,
    so that no compatibility character hides an address or a number from it."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def mask_query(text: str) -> MaskedQuery:
    """Mask e-mail addresses, then URLs, then long digit runs (in that order, so an address's
    domain is not read as a URL) in the query's canonical form (`canonical_query`): normalise
    first, mask after. Each pattern takes time linear in the text."""
    text, emails = _EMAIL.subn(EMAIL_MASK, canonical_query(text))
    text, urls = _URL.subn(URL_MASK, text)
    text, numbers = _DIGITS.subn(NUMBER_MASK, text)
    return MaskedQuery(text, emails, urls, numbers)


def query_key(text: str) -> str:
    """The masked, normalised query: what k-anonymity counts and topics are matched on."""
    return normalise_query(mask_query(text).text)


def keyed_hash(key: bytes, value: str) -> str:
    """HMAC-SHA-256 of the value under the key, the first 32 hex digits: stable for one key,
    not reversible or linkable without it."""
    return hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()[:HASH_HEX]


def key_fingerprint(key: bytes) -> str:
    """What the store records of the key: a hash that tells keys apart, not the key."""
    return keyed_hash(key, "workbench query-log key fingerprint")


def load_or_create_key(folder: str | os.PathLike[str]) -> bytes:
    """The anonymisation key: $WORKBENCH_QUERYLOG_KEY (hex), else ``querylog_key`` in the
    instance folder, created once (mode 0600).  It is never stored in the database nor
    exported, so hashed ids cannot be recomputed from an export."""
    env = os.environ.get(KEY_ENV)
    if env:
        return bytes.fromhex(env.strip())
    path = Path(folder) / KEY_FILE
    if path.is_file():
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    path.touch(mode=0o600)
    path.write_text(key.hex(), encoding="ascii")
    return key


@dataclass(frozen=True)
class AnonymisedImpression(LoggedImpression):
    """An impression as stored: hashed session and user ids, the masked query text (as typed
    otherwise, in its canonical form: `mask_query`) and its key (`normalise_query` of the
    masked text)."""

    query_key: str


@dataclass(frozen=True)
class RuleEffect:
    """What one rule did: ``action`` ('replaced', 'masked', 'dropped') on so many impressions,
    users and queries.  For a mask: the impressions, users and distinct query texts (as typed)
    it changed; for the k rule: the impressions dropped, the users left with no impression
    and the distinct (masked, normalised) queries dropped."""

    rule: str
    action: str
    impressions: int
    users: int
    queries: int


@dataclass(frozen=True)
class AnonymisationReport:
    min_users: int
    read: tuple[int, int, int]  # impressions, users, distinct queries (normalised, masked)
    kept: tuple[int, int, int]
    rules: tuple[RuleEffect, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_users": self.min_users,
            "read": dict(zip(("impressions", "users", "queries"), self.read, strict=True)),
            "kept": dict(zip(("impressions", "users", "queries"), self.kept, strict=True)),
            "rules": [vars(r) for r in self.rules],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnonymisationReport:
        def triple(d: Mapping[str, int]) -> tuple[int, int, int]:
            return d["impressions"], d["users"], d["queries"]

        return cls(
            data["min_users"],
            triple(data["read"]),
            triple(data["kept"]),
            tuple(RuleEffect(**r) for r in data["rules"]),
        )


@dataclass
class _Tally:
    impressions: int = 0
    users: set[str] = field(default_factory=set)
    queries: set[str] = field(default_factory=set)

    def add(self, user: str, query: str) -> None:
        self.impressions += 1
        self.users.add(user)
        self.queries.add(query)


class LogAnonymiser:
    """Two passes over the same impressions: :meth:`observe` counts the users of each query,
    :meth:`keep` yields the anonymised impressions of queries with at least ``min_users``
    distinct users; then :meth:`report` says what each rule did."""

    def __init__(self, key: bytes, *, min_users: int = DEFAULT_MIN_USERS) -> None:
        if min_users < 1:
            raise ValueError(f"k (minimum distinct users per query) must be >= 1, got {min_users}")
        if len(key) < 16:
            raise ValueError("the anonymisation key must have at least 16 bytes")
        self.key, self.min_users = key, min_users
        self._users_of: dict[str, set[str]] = {}
        self._read = _Tally()
        self._masked = {kind: _Tally() for kind in ("emails", "urls", "numbers")}
        self._dropped = _Tally()
        self._kept = _Tally()

    def observe(self, impressions: Iterable[LoggedImpression]) -> None:
        """Count each query's distinct users, up to k (all the rule needs: memory grows with
        the distinct queries, not with the impressions)."""
        for imp in impressions:
            user = keyed_hash(self.key, imp.user)
            masked = mask_query(imp.query)
            key = normalise_query(masked.text)
            users = self._users_of.setdefault(key, set())
            if len(users) < self.min_users:
                users.add(user)
            self._read.add(user, key)
            for kind in self._masked:
                if getattr(masked, kind):
                    self._masked[kind].add(user, imp.query)

    def keep(self, impressions: Iterable[LoggedImpression]) -> Iterator[AnonymisedImpression]:
        for imp in impressions:
            user = keyed_hash(self.key, imp.user)
            masked = mask_query(imp.query).text
            key = normalise_query(masked)
            if len(self._users_of.get(key, ())) < self.min_users:
                self._dropped.add(user, key)
                continue
            self._kept.add(user, key)
            session = keyed_hash(self.key, SESSION_PREFIX + imp.session)
            yield AnonymisedImpression(
                imp.line, session, user, masked, imp.time, imp.results, imp.clicks, query_key=key
            )

    def report(self) -> AnonymisationReport:
        read, kept, dropped = self._read, self._kept, self._dropped
        labels = {
            "emails": "e-mail addresses masked",
            "urls": "URLs masked",
            "numbers": f"digit runs of {MIN_DIGITS} or more masked",
        }
        rules = [
            RuleEffect(
                "user and session ids replaced by keyed hashes (HMAC-SHA-256)",
                "replaced",
                read.impressions,
                len(read.users),
                0,
            ),
            *(
                RuleEffect(labels[kind], "masked", t.impressions, len(t.users), len(t.queries))
                for kind, t in self._masked.items()
            ),
            RuleEffect(
                f"queries issued by fewer than {self.min_users} distinct users dropped",
                "dropped",
                dropped.impressions,
                len(read.users - kept.users),
                len(dropped.queries),
            ),
        ]
        return AnonymisationReport(
            self.min_users,
            (read.impressions, len(read.users), len(read.queries)),
            (kept.impressions, len(kept.users), len(kept.queries)),
            tuple(rules),
        )
