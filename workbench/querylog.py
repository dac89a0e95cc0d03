"""Query logs: the JSONL and TSV readers, query normalisation and anonymisation (pure).
"""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")


def normalise_query(text: str) -> str:
    """The key that matches a query to a topic: Unicode NFKC, case folded, runs of white space
    made one space, no leading or trailing space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
