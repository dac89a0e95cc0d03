"""Runs given as files (the commands taking QRELS RUN [RUN ...]): each run under its tag, or its
file name when it has none, and each run's per-topic score for one measure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.trec import Qrels, Run, read_qrels, read_run


class DuplicateRunTag(ValueError):
    """Two run files carry the same tag: their scores would be merged under one name."""


@dataclass(frozen=True)
class ScoredRuns:
    """The qrels, the runs by tag, and score[tag][qid] of the measure printed as `measure`."""

    qrels: Qrels
    runs: dict[str, Run]
    measure: str
    per_topic: dict[str, dict[str, float]]


def runs_by_tag(paths: Sequence[str]) -> dict[str, Run]:
    """The runs of `paths` by tag (the file name for an untagged run), in the given order;
    raises DuplicateRunTag when two files carry one tag."""
    runs: dict[str, Run] = {}
    for path in paths:
        run = read_run(path)
        tag = run.tag or Path(path).name
        if tag in runs:
            raise DuplicateRunTag(f"{path}: run tag {tag!r} appears twice")
        runs[tag] = run
    return runs


def score_runs(
    qrels_path: str, run_paths: Sequence[str], measure: str, *, relevance_level: int
) -> ScoredRuns:
    """Read the qrels and the runs, and score every run per topic with `measure` (one measure,
    trec_eval's conventions: the topics of the run, relevant when grade >= relevance_level).
    Raises TrecFormatError, MeasureError (also for a measure without per-topic scores, such
    as runid or num_q) or DuplicateRunTag."""
    from workbench.metrics import MeasureError, evaluate

    qrels = read_qrels(qrels_path)
    runs = runs_by_tag(run_paths)
    name = measure
    per_topic: dict[str, dict[str, float]] = {}
    for tag, run in runs.items():
        result = evaluate(qrels, run, [measure], relevance_level=relevance_level)
        names = [line.name for line in result.lines if line.per_topic]
        if not names:
            raise MeasureError(f"measure {measure!r} has no score per topic to compare runs by")
        name = names[0]
        per_topic[tag] = {qid: float(values[name]) for qid, values in result.per_topic.items()}
    return ScoredRuns(qrels, runs, name, per_topic)
