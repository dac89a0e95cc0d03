"""Synthetic TREC workloads for the metric-module benchmarks (issue 2, "Performance").

Two workloads, deterministic for a given seed and written as plain TREC files:

- W-marco: one run of 6,980 queries x 1,000 documents, about 1.1 relevant documents per
  query (binary), MS MARCO-like numeric qids and docnos drawn from 8.8 million.
- W-adhoc: 50 topics ("401".."450"), 100 runs x 1,000 documents per topic, about 1,500
  judged documents per topic graded 0-2 (about 10 % relevant); the judged documents are the
  pool of the runs' top ranks, so runs share documents at the top and differ in quality.

Runs are ``qid Q0 docno rank score tag`` with scores descending, printed with four decimals
(so some adjacent scores tie); qrels are ``qid 0 docno rel``. Files are cached under
``out_dir`` in a directory named after the parameters and regenerated only when absent.

Usage: ``python benchmarks/workloads.py marco|adhoc [OUT_DIR]`` (default ``benchmarks/data``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

DEFAULT_SEED = 20261121
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data"

MARCO_QUERIES = 6_980
MARCO_DEPTH = 1_000
MARCO_COLLECTION = 8_841_823
MARCO_QID_SPACE = 1_102_432

ADHOC_COLLECTION = 528_155
ADHOC_JUDGED_PER_TOPIC = 1_500
# Truly relevant candidates per topic; about 150 of them end up in the judged pool (10 %).
ADHOC_RELEVANT_PER_TOPIC = 240
ADHOC_RELEVANCE_SHIFT = 3.0
ADHOC_UNIVERSE_PER_TOPIC = 20_000
_COMPLETE = ".complete"
# Part of every cache key: bump it whenever the generated data change.
GENERATOR_VERSION = 2


def _score_columns(rng: np.random.Generator, shape: tuple[int, int], top: float) -> np.ndarray:
    """Descending scores per row: ``top`` (jittered) minus cumulative exponential gaps.

    Rounded to four decimals, so a few adjacent scores are equal (ties).
    """
    n_rows, depth = shape
    gaps = rng.exponential(scale=0.02, size=(n_rows, depth))
    gaps[:, 0] = 0.0
    start = top + rng.normal(0.0, 2.0, size=(n_rows, 1))
    return np.round(start - np.cumsum(gaps, axis=1), 4)


def _run_lines(qids: list[str], docnos: np.ndarray, scores: np.ndarray, tag: str) -> Iterable[str]:
    """TREC run lines for ``docnos[i, j]`` at rank ``j + 1`` of query ``qids[i]``."""
    depth = docnos.shape[1]
    ranks = [str(r) for r in range(1, depth + 1)]
    for qid, row_docs, row_scores in zip(qids, docnos.tolist(), scores.tolist(), strict=True):
        head = f"{qid} Q0 "
        yield "".join(
            f"{head}{d} {r} {s:.4f} {tag}\n"
            for d, r, s in zip(row_docs, ranks, row_scores, strict=True)
        )


def _write(path: Path, chunks: Iterable[str]) -> None:
    with path.open("w", encoding="ascii", newline="\n") as handle:
        for chunk in chunks:
            handle.write(chunk)


def _prepare(cache_dir: Path) -> bool:
    """True when ``cache_dir`` already holds a complete workload; else empty it for writing."""
    if (cache_dir / _COMPLETE).exists():
        return True
    if cache_dir.exists():
        shutil.rmtree(cache_dir)
    cache_dir.mkdir(parents=True)
    return False


def _distinct_rows(rng: np.random.Generator, n_rows: int, width: int, space: int) -> np.ndarray:
    """``n_rows`` x ``width`` integers from ``[0, space)`` with no repeat inside a row."""
    rows = rng.integers(0, space, size=(n_rows, width), dtype=np.int64)
    ordered = np.sort(rows, axis=1)
    clashing = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    for i in clashing:
        rows[i] = rng.choice(space, size=width, replace=False)
    return rows


def generate_marco(
    out_dir: Path = DEFAULT_DATA_DIR, *, seed: int = DEFAULT_SEED
) -> tuple[Path, Path]:
    """Write (or reuse) W-marco under ``out_dir``; return ``(run, qrels)``."""
    cache = Path(out_dir) / f"marco-v{GENERATOR_VERSION}-q{MARCO_QUERIES}-d{MARCO_DEPTH}-s{seed}"
    run_path, qrels_path = cache / "run.txt", cache / "qrels.txt"
    if _prepare(cache):
        return run_path, qrels_path
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(MARCO_QID_SPACE, size=MARCO_QUERIES, replace=False))
    docs = _distinct_rows(rng, MARCO_QUERIES, MARCO_DEPTH, MARCO_COLLECTION)

    # 1 relevant document per query, 2 or 3 for about 9 %: mean about 1.1.
    n_rel = 1 + (rng.random(MARCO_QUERIES) < 0.09) + (rng.random(MARCO_QUERIES) < 0.01)
    rel_docs = _distinct_rows(rng, MARCO_QUERIES, 3, MARCO_COLLECTION)
    # The first relevant document is retrieved for 90 % of queries, at a log-uniform rank
    # (like BM25 on MS MARCO: MRR about 0.16, recall@100 about 0.6, recall@1000 0.9).
    found = rng.random(MARCO_QUERIES) < 0.9
    rank = np.exp(rng.uniform(0.0, np.log(MARCO_DEPTH), size=MARCO_QUERIES)).astype(np.int64) - 1
    rows = np.flatnonzero(found)
    clash = (docs[rows, :, None] == rel_docs[rows, None, :]).any(axis=(1, 2))
    keep = ~clash
    docs[rows[keep], rank[rows[keep]]] = rel_docs[rows[keep], 0]

    qid_strs = [str(q) for q in qids.tolist()]
    scores = _score_columns(rng, docs.shape, top=24.0)
    _write(run_path, _run_lines(qid_strs, docs, scores, "bm25-marco"))
    _write(
        qrels_path,
        (
            "".join(f"{qid} 0 {d} 1\n" for d in rel_docs[i, : n_rel[i]].tolist())
            for i, qid in enumerate(qid_strs)
        ),
    )
    (cache / _COMPLETE).touch()
    return run_path, qrels_path


def _adhoc_docno(index: int) -> str:
    """A TREC disks 4-5 style docno for collection index ``index`` (FT, LA, FBIS, FR)."""
    source, n = index % 4, index // 4
    if source == 0:
        return f"FT9{n % 4 + 31}-{n % 99991 + 1}"
    if source == 1:
        return f"LA{n % 12 + 1:02d}{n % 28 + 1:02d}90-{n % 9973:04d}"
    if source == 2:
        return f"FBIS{n % 2 + 3}-{n + 1}"
    return f"FR94{n % 12 + 1:02d}{n % 28 + 1:02d}-{n % 3}-{n:05d}"


def _adhoc_docnos() -> list[str]:
    """Distinct docnos for the whole synthetic collection (a few clash; they are renamed)."""
    names = [_adhoc_docno(i) for i in range(ADHOC_COLLECTION)]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            name = f"{name}-{i}"
            names[i] = name
        seen.add(name)
    return names


def generate_adhoc(
    out_dir: Path = DEFAULT_DATA_DIR,
    *,
    seed: int = DEFAULT_SEED,
    n_runs: int = 100,
    n_topics: int = 50,
    depth: int = 1000,
) -> tuple[list[Path], Path]:
    """Write (or reuse) W-adhoc under ``out_dir``; return ``(runs, qrels)``.

    Per topic, a universe of candidate documents carries a latent relevance (high for the
    truly relevant ones); run ``r`` scores each document ``quality_r * latent + noise`` and
    keeps its top ``depth``. The judged set is the ``ADHOC_JUDGED_PER_TOPIC`` documents with
    the best rank in any run (a pool of the top ranks), graded 2/1 when truly relevant (about
    a third highly) and 0 otherwise.
    """
    cache = Path(out_dir) / f"adhoc-v{GENERATOR_VERSION}-r{n_runs}-t{n_topics}-d{depth}-s{seed}"
    run_paths = [cache / f"run{r + 1:03d}.txt" for r in range(n_runs)]
    qrels_path = cache / "qrels.txt"
    if _prepare(cache):
        return run_paths, qrels_path
    rng = np.random.default_rng(seed)
    docnos = np.array(_adhoc_docnos(), dtype=object)
    universe = max(ADHOC_UNIVERSE_PER_TOPIC, 2 * depth)
    quality = rng.uniform(0.3, 2.0, size=(n_runs, 1))
    qids = [str(401 + t) for t in range(n_topics)]
    run_docs = np.empty((n_runs, n_topics, depth), dtype=object)
    qrels_chunks: list[str] = []

    for t, qid in enumerate(qids):
        candidates = rng.choice(ADHOC_COLLECTION, size=universe, replace=False)
        relevant = np.zeros(universe, dtype=bool)
        relevant[:ADHOC_RELEVANT_PER_TOPIC] = True
        latent = np.where(relevant, ADHOC_RELEVANCE_SHIFT, 0.0) + rng.normal(
            0.0, 1.0, size=universe
        )
        noise = rng.gumbel(0.0, 1.0, size=(n_runs, universe))
        run_scores = quality * latent + noise
        top = np.argpartition(-run_scores, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(run_scores, top, axis=1), axis=1)
        ranked = np.take_along_axis(top, order, axis=1)
        run_docs[:, t, :] = docnos[candidates[ranked]]

        best_rank = np.full(universe, depth, dtype=np.int64)
        np.minimum.at(best_rank, ranked.ravel(), np.tile(np.arange(depth), n_runs))
        hits = np.bincount(ranked[:, : depth // 10].ravel(), minlength=universe)
        judged = np.lexsort((-hits, best_rank))[:ADHOC_JUDGED_PER_TOPIC]
        grade = np.where(relevant[judged], 1 + (rng.random(judged.size) < 0.35), 0)
        qrels_chunks.append(
            "".join(
                f"{qid} 0 {d} {g}\n"
                for d, g in zip(docnos[candidates[judged]].tolist(), grade.tolist(), strict=True)
            )
        )

    for r, path in enumerate(run_paths):
        scores = _score_columns(rng, (n_topics, depth), top=15.0)
        _write(path, _run_lines(qids, run_docs[r], scores, f"run{r + 1:03d}"))
    _write(qrels_path, qrels_chunks)
    (cache / _COMPLETE).touch()
    return run_paths, qrels_path


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"marco", "adhoc"} or len(argv) > 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out_dir = Path(argv[1]) if len(argv) == 2 else DEFAULT_DATA_DIR
    if argv[0] == "marco":
        run, qrels = generate_marco(out_dir)
        print(f"run   {run}\nqrels {qrels}")
    else:
        runs, qrels = generate_adhoc(out_dir)
        print(f"runs  {runs[0].parent}/run001.txt .. {runs[-1].name}\nqrels {qrels}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
