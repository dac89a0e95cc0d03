"""The longest value each store column takes, in characters: one home for each limit.

The store's ``String(n)`` columns use these numbers; the import path checks them first so an
over-long value is one clear error (file, line, limit) instead of a database error.  The file
readers apply them only when asked (``limits=STORE_LIMITS``): ``workbench trec-eval`` accepts
ids of any length, as trec_eval does.
"""

from __future__ import annotations

from typing import NamedTuple

QID = 100
DOCNO = 200
RUN_TAG = 200
RUN_GROUP = 200
QRELS_ITERATION = 40
CAMPAIGN_NAME = 120
QRELS_SET_NAME = 120
GRADE_LABEL = 80
GRADE_KEY = 8
USERNAME = 80
POOL_NAME = 120
QUERY_LOG_NAME = 120
MACHINE_JUDGE_NAME = 120
MACHINE_MODEL = 200
FILE_NAME = 500
USERNAME_KEY = 4 * USERNAME
"""A username's case-folded form (``str.casefold`` may lengthen a name, at most threefold)."""
PASSWORD = 1024
COMMENT = 10_000
CANNOT_JUDGE = 1_000
CLIENT_ID = 64
DESCRIPTION = 20_000
"""A campaign's description."""
REASON = 10_000
"""An adjudicator's reason."""
EVIDENCE_SPANS = 20
"""The most evidence passages an assessor marks in one document."""

API_BODY_BYTES = 64 * 1024
"""The largest request body of the JSON API (a judgement is a few hundred bytes)."""
FORM_BODY_BYTES = 1024 * 1024
"""The largest body of any form that is not a file upload."""
UPLOAD_BODY_BYTES = 512 * 1024 * 1024
"""The default largest upload (runs, documents, topics, qrels): ``MAX_CONTENT_LENGTH``,
``$WORKBENCH_MAX_UPLOAD_MB`` for `workbench serve`."""
JSON_DEPTH = 32
"""The deepest nesting of arrays and objects a JSON body may have."""
INT32_MAX = 2**31 - 1
"""The largest integer column value every store takes (PostgreSQL's INTEGER)."""


class IdLimits(NamedTuple):
    """Longest qid, docno, run tag and qrels iteration a reader accepts (None: any length)."""

    qid: int | None = None
    docno: int | None = None
    tag: int | None = None
    iteration: int | None = None


STORE_LIMITS = IdLimits(qid=QID, docno=DOCNO, tag=RUN_TAG, iteration=QRELS_ITERATION)
NO_LIMITS = IdLimits()


def at_most(what: str, limit: int) -> str:
    """What a value must be: 'a docno of at most 200 characters'."""
    article = "an" if what[:1] in ("a", "e", "i", "o", "u") else "a"
    return f"{article} {what} of at most {limit} characters"


def length_error(what: str, value: str, limit: int) -> str:
    """The message for an over-long value given as an argument (a name, label or group)."""
    shown = value if len(value) <= 40 else value[:37] + "..."
    return f"{at_most(what, limit)} is expected; got {len(value)} characters ({shown!r})"
