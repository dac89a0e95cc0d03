"""Word forms for highlighting: each word's Snowball stem, so that a query term matches
'recycle', 'recycling' and 'recycled' alike (Porter's English Snowball stemmer).

The judging page highlights a word of a document when its stem equals the stem of a topic or
assessor term; the stems of both sides come from here, the page only compares them.
"""

from __future__ import annotations

import re

import snowballstemmer

LANGUAGE = "english"
_WORD = re.compile(r"[^\W_]+")  # letters and digits, as the page's \p{L}\p{N}


def words(text: str) -> list[str]:
    """The distinct lower-cased words of `text`, in order of first appearance."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


def stems(text: str) -> dict[str, str]:
    """word -> stem for every distinct word of `text` (linear in its length)."""
    found = words(text)
    stemmer = snowballstemmer.stemmer(LANGUAGE)  # one per call: stemmers keep state
    return dict(zip(found, stemmer.stemWords(found), strict=True))
