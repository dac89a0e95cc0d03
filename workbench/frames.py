"""pandas DataFrames in and out, with the column names PyTerrier and ir_measures use.

Runs: ``qid, docno, score[, rank]`` (PyTerrier) or ``query_id, doc_id, score`` (ir_measures);
qrels: ``qid, docno, label`` or ``query_id, doc_id, relevance`` (an ``iteration`` column is
kept when there is one).  Ids may be strings or integers (written as text, as in a file).
A frame becomes the same :class:`~workbench.trec.Run` or :class:`~workbench.trec.Qrels` a file
with the same lines gives, so evaluation gives the same numbers; what a file reader refuses is
refused here too, naming the row (counted from 1): a docno twice in a topic, a missing value,
a score that is not a number, a grade that is not an integer.  Both conventions' columns in
one frame is refused rather than guessed between.

Out: :func:`run_frame`, :func:`qrels_frame` and :func:`evaluation_frame` (per topic, long:
one row per topic and measure, as ir_measures' ``iter_calc`` and PyTerrier's ``perquery``)
in either convention (``style="pyterrier"`` or ``"ir_measures"``).  pandas is the optional
extra ``pandas``: ``pip install 'workbench-ir[pandas]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from workbench.trec.errors import TrecFormatError
from workbench.trec.keys import docno_hash, first_duplicate, group_keys, group_segments
from workbench.trec.qrels import Qrels
from workbench.trec.runs import Run

if TYPE_CHECKING:
    import pandas as pd

    from workbench.metrics.evaluation import Evaluation

Style = Literal["pyterrier", "ir_measures"]
RUN_COLUMNS = {
    "pyterrier": ("qid", "docno", "score"),
    "ir_measures": ("query_id", "doc_id", "score"),
}
QRELS_COLUMNS = {
    "pyterrier": ("qid", "docno", "label"),
    "ir_measures": ("query_id", "doc_id", "relevance"),
}


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (checked without importing pandas)."""
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def run_from_frame(frame: pd.DataFrame, *, tag: str = "run") -> Run:
    """A run from a DataFrame of either convention; ``rank`` is kept when present (evaluation
    ignores it, as trec_eval: documents are ordered by score, ties by docno descending)."""
    what = "run DataFrame"
    qids, docnos, scores = _read(frame, RUN_COLUMNS, what, integer=False)
    ranks = (
        _numbers(frame, "rank", what, integer=True)
        if "rank" in frame.columns
        else np.zeros(len(frame), dtype=np.int64)
    )
    starts = np.flatnonzero(np.concatenate(([True], qids[1:] != qids[:-1]))[: len(qids)])
    topics, order, offsets = group_segments(
        starts.tolist(), [bytes(q) for q in qids[starts]], len(qids)
    )
    rows = np.arange(len(qids)) if order is None else order
    hashes = docno_hash(docnos[rows])
    run = Run(topics, offsets, docnos[rows], scores[rows], ranks[rows], tag, docno_hashes=hashes)
    topic_of = np.repeat(np.arange(len(topics)), np.diff(offsets))
    dup = first_duplicate(
        lambda: group_keys(hashes, topic_of), run.docnos, lambda row: int(topic_of[row])
    )
    if dup is not None:
        raise _duplicate(what, int(rows[dup]), topics[topic_of[dup]], run.docnos[dup], "docno")
    return run


def qrels_from_frame(frame: pd.DataFrame) -> Qrels:
    """Qrels from a DataFrame of either convention (grades must be integers)."""
    what = "qrels DataFrame"
    qids, docnos, rels = _read(frame, QRELS_COLUMNS, what, integer=True)
    iterations = (
        _ids(frame, "iteration", what)
        if "iteration" in frame.columns
        else np.full(len(frame), b"0", dtype="S1")
    )
    codes: dict[bytes, int] = {}
    groups = np.array([codes.setdefault(bytes(q), len(codes)) for q in qids], dtype=np.int64)
    dup = first_duplicate(
        lambda: group_keys(docno_hash(docnos), groups), docnos, lambda row: int(groups[row])
    )
    if dup is not None:
        raise _duplicate(what, dup, qids[dup].decode(), docnos[dup], "judgment")
    return Qrels(qids, iterations, docnos, rels)


def run_frame(run: Run, *, style: Style = "pyterrier") -> pd.DataFrame:
    """The run's lines, topic after topic in the file's order of topics: ``qid, docno,
    score, rank`` or ``query_id, doc_id, score``."""
    import pandas as pd

    qid, docno, score = RUN_COLUMNS[style]
    counts = np.diff(run.offsets)
    data: dict[str, Any] = {
        qid: np.repeat(np.array(run.topics(), dtype=object), counts),
        docno: _text(run.docnos),
        score: run.scores,
    }
    if style == "pyterrier":
        data["rank"] = run.ranks
    return pd.DataFrame(data)


def qrels_frame(qrels: Qrels, *, style: Style = "pyterrier") -> pd.DataFrame:
    """The qrels' judgments in file order: ``qid, docno, label`` or ``query_id, doc_id,
    relevance``, and ``iteration``."""
    import pandas as pd

    qid, docno, label = QRELS_COLUMNS[style]
    return pd.DataFrame(
        {
            qid: _text(qrels.qids),
            "iteration": _text(qrels.iterations),
            docno: _text(qrels.docnos),
            label: qrels.rels,
        }
    )


def _text(values: np.ndarray) -> np.ndarray:
    return np.char.decode(values, "utf-8", "surrogateescape").astype(object)


def evaluation_frame(
    evaluation: Evaluation, *, style: Style = "ir_measures", summary: bool = False
) -> pd.DataFrame:
    """Per-topic values, one row per (topic, measure): ``query_id, measure, value``
    (ir_measures' iter_calc) or ``qid, measure, value`` (PyTerrier's perquery); with
    ``summary``, one row per measure: ``measure, value``.  Measures without per-topic
    values (gm_map, num_q, runid) appear only in the summary."""
    import pandas as pd

    if summary:
        return pd.DataFrame(
            {"measure": list(evaluation.summary), "value": list(evaluation.summary.values())}
        )
    qid = "query_id" if style == "ir_measures" else "qid"
    per_topic = [line.name for line in evaluation.lines if line.per_topic]
    rows = [
        (topic, measure, values[measure])
        for topic, values in evaluation.per_topic.items()
        if topic not in evaluation.hidden
        for measure in per_topic
        if measure in values
    ]
    return pd.DataFrame(rows, columns=[qid, "measure", "value"])


def _read(
    frame: pd.DataFrame, conventions: dict[str, tuple[str, str, str]], what: str, *, integer: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qids, docnos, values) of a frame of either convention."""
    qid, docno, value = _columns(frame, conventions, what)
    values = _numbers(frame, value, what, integer=integer)
    return _ids(frame, qid, what), _ids(frame, docno, what), values


def _columns(
    frame: pd.DataFrame, conventions: dict[str, tuple[str, str, str]], what: str
) -> tuple[str, str, str]:
    """The frame's columns of one convention; both or neither is an error saying which."""
    if not is_frame(frame):
        raise TypeError(f"a {what} must be a pandas DataFrame, got {type(frame).__name__}")
    present = set(map(str, frame.columns))
    found = [names for names in conventions.values() if set(names) <= present]
    if len(found) == 1:
        return found[0]
    wanted = " or ".join(", ".join(names) for names in conventions.values())
    if found:
        raise ValueError(f"the {what} has the columns of both conventions ({wanted}): drop one")
    raise ValueError(f"the {what} needs the columns {wanted}; it has {', '.join(sorted(present))}")


def _ids(frame: pd.DataFrame, column: str, what: str) -> np.ndarray:
    """A column of ids (strings or integers) as UTF-8 bytes ('S')."""
    series = frame[column]
    missing = np.flatnonzero(series.isna().to_numpy())
    if len(missing):
        row = int(missing[0])
        raise TrecFormatError(what, row + 1, _row(frame, row), f"a value in column {column!r}")
    values = series.to_numpy(dtype=object)
    wrong = [
        row
        for row, value in enumerate(values)
        if isinstance(value, bool) or not isinstance(value, str | int | np.integer)
    ]
    if wrong:  # a float id would print as "1.0" and match nothing
        expected = f"a string or integer id in column {column!r}"
        raise TrecFormatError(what, wrong[0] + 1, _row(frame, wrong[0]), expected)
    if not len(values):
        return np.zeros(0, dtype="S1")
    return np.char.encode(np.asarray([str(v) for v in values], dtype=str), "utf-8")


def _numbers(frame: pd.DataFrame, column: str, what: str, *, integer: bool) -> np.ndarray:
    series = frame[column]
    kind = "an integer" if integer else "a number"
    try:
        values = np.asarray(series.to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        values = np.array([_float(v) for v in series.to_numpy(dtype=object)])
    bad = np.isnan(values) if not integer else ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.argmax(bad))
        raise TrecFormatError(what, row + 1, _row(frame, row), f"{kind} in column {column!r}")
    return values.astype(np.int64) if integer else values


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _row(frame: pd.DataFrame, row: int) -> str:
    return " ".join(str(v) for v in frame.iloc[row].tolist())


def _duplicate(what: str, row: int, qid: str, docno: bytes, kind: str) -> TrecFormatError:
    text = docno.decode("utf-8", "surrogateescape")
    expected = (
        f"each docno at most once per topic (docno {text!r} repeats in topic {qid!r})"
        if kind == "docno"
        else f"one judgment per (qid, docno) (topic {qid!r}, docno {text!r} repeats)"
    )
    return TrecFormatError(what, row + 1, f"{qid} ... {text} ...", expected)
