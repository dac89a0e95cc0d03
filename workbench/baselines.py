"""Simple lexical rankers, to make realistic runs for examples, simulations and benchmarks.

Not a search engine: an in-memory inverted index over a few thousand documents. Terms are
lower-cased alphanumeric tokens minus the stopwords, with no stemming. For a query q and a
document d of length |d| (avgdl the mean length, N documents, df(t) the document frequency,
tf(t, d) the term frequency, cf(t) the collection frequency, |C| the collection length):

- ``bm25``:  sum_t idf(t) * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl)),
  idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))  (Robertson & Zaragoza 2009, the Lucene form);
- ``tfidf``: sum_t (1 + ln tf) * ln(N / df), divided by the document's Euclidean norm of those
  weights (lnc.ltc-like cosine without query-side normalisation);
- ``ql``:    sum_t qtf * ln((tf + mu cf / |C|) / (|d| + mu))  (query likelihood, Dirichlet
  smoothing, Zhai & Lafferty 2001), over the query terms that occur in the collection;
- ``title``: bm25 over document titles only, a deliberately weak system.

A run keeps the top `depth` documents with a positive match per query; ties are left to
trec_eval's order (score descending, docno descending) when written.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> list[str]:
    """Lower-cased alphanumeric tokens that are not stopwords."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in stopwords]


@dataclass(frozen=True)
class Ranker:
    """One configuration: its run tag, model and parameters."""

    tag: str
    model: str  # "bm25", "tfidf", "ql"
    field: str = "body"  # "body" (title and text) or "title"
    k1: float = 1.2
    b: float = 0.75
    mu: float = 2000.0


DEFAULT_RANKERS: tuple[Ranker, ...] = (
    Ranker("bm25", "bm25"),
    Ranker("bm25-b0.3", "bm25", k1=0.9, b=0.3),
    Ranker("tfidf", "tfidf"),
    Ranker("ql-dir", "ql", mu=300.0),
    Ranker("title-bm25", "bm25", field="title"),
)


class Index:
    """Term frequencies per document, document frequencies and lengths."""

    def __init__(self, documents: Mapping[str, str], stopwords: frozenset[str] = frozenset()):
        self.stopwords = stopwords
        self.postings: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        for docno, text in documents.items():
            counts = Counter(tokenize(text, stopwords))
            self.lengths[docno] = sum(counts.values())
            for term, tf in counts.items():
                self.postings.setdefault(term, {})[docno] = tf
        self.size = len(self.lengths)
        self.total_length = sum(self.lengths.values())
        self.avgdl = self.total_length / self.size if self.size else 0.0
        self._norms: dict[str, float] | None = None

    def _tfidf_norms(self) -> dict[str, float]:
        if self._norms is None:
            squares: dict[str, float] = dict.fromkeys(self.lengths, 0.0)
            for postings in self.postings.values():
                idf = math.log(self.size / len(postings))
                for docno, tf in postings.items():
                    squares[docno] += ((1 + math.log(tf)) * idf) ** 2
            self._norms = {d: math.sqrt(s) or 1.0 for d, s in squares.items()}
        return self._norms

    def score(self, query: str, ranker: Ranker) -> dict[str, float]:
        """Scores of the documents that match at least one query term."""
        terms = Counter(t for t in tokenize(query, self.stopwords) if t in self.postings)
        scores: dict[str, float] = {}
        if ranker.model == "bm25":
            for term, qtf in terms.items():
                postings = self.postings[term]
                df = len(postings)
                idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
                for docno, tf in postings.items():
                    norm = ranker.k1 * (1 - ranker.b + ranker.b * self.lengths[docno] / self.avgdl)
                    scores[docno] = scores.get(docno, 0.0) + qtf * idf * tf * (ranker.k1 + 1) / (
                        tf + norm
                    )
        elif ranker.model == "tfidf":
            norms = self._tfidf_norms()
            for term, qtf in terms.items():
                postings = self.postings[term]
                idf = math.log(self.size / len(postings))
                for docno, tf in postings.items():
                    weight = (1 + math.log(tf)) * idf / norms[docno]
                    scores[docno] = scores.get(docno, 0.0) + qtf * idf * weight
        elif ranker.model == "ql":
            matched = {d for term in terms for d in self.postings[term]}
            for term, qtf in terms.items():
                postings = self.postings[term]
                background = ranker.mu * sum(postings.values()) / self.total_length
                for docno in matched:
                    tf = postings.get(docno, 0)
                    smoothed = (tf + background) / (self.lengths[docno] + ranker.mu)
                    scores[docno] = scores.get(docno, 0.0) + qtf * math.log(smoothed)
        else:
            raise ValueError(f"unknown model {ranker.model!r}; expected bm25, tfidf or ql")
        return scores


def rank(
    documents: Mapping[str, tuple[str, str]],
    queries: Sequence[tuple[str, str]],
    rankers: Iterable[Ranker] = DEFAULT_RANKERS,
    *,
    depth: int = 100,
    stopwords: frozenset[str] = frozenset(),
) -> dict[str, dict[str, dict[str, float]]]:
    """{tag: {qid: {docno: score}}}: the top `depth` matches of each query for each ranker.

    `documents` maps a docno to (title, text); `queries` are (qid, query text) pairs.
    """
    indexes: dict[str, Index] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for ranker in rankers:
        if ranker.field not in indexes:
            texts = {
                d: title if ranker.field == "title" else f"{title}\n{text}"
                for d, (title, text) in documents.items()
            }
            indexes[ranker.field] = Index(texts, stopwords)
        index = indexes[ranker.field]
        run: dict[str, dict[str, float]] = {}
        for qid, query in queries:
            scores = index.score(query, ranker)
            top = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:depth]
            if top:
                run[qid] = dict(top)
        runs[ranker.tag] = run
    return runs
