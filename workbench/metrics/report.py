"""trec_eval's text output: one line formatter, per-topic blocks, summary, z-scores (``-Z``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

from workbench.metrics.evaluation import Evaluation, summarise
from workbench.trec.errors import TrecFormatError
from workbench.trec.scan import Source, text_lines


def format_line(name: str, qid: str, value: int | float | str) -> str:
    """``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts, ``%s`` for strings), as trec_eval prints."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, int | bool):
        text = str(int(value))
    elif value != value:  # NaN: glibc prints its sign ("-nan" for x86's 0.0/0.0)
        text = f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    else:
        text = f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{text}\n"


MISSING_ZSCORE = -1000000.0


class ZScores(NamedTuple):
    """Per (qid, measure) mean and standard deviation, from trec_eval's ``-Z`` file."""

    table: dict[tuple[str, str], tuple[float, float]]

    def z(self, qid: str, name: str, value: float) -> float:
        """(value - mean) / stddev; trec_eval's MISSING (-1e6) when unknown or undefined."""
        entry = self.table.get((qid, name))
        if entry is None:
            return MISSING_ZSCORE
        mean, std = entry
        if std:
            return (value - mean) / std
        return 0.0 if value == mean else MISSING_ZSCORE


def read_zscores(source: Source) -> ZScores:
    """Lines ``qid measure mean stddev``."""
    path = str(source)
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for number, text, fields in text_lines(source):
        if len(fields) != 4:
            raise TrecFormatError(path, number, text, "exactly 4 fields (qid measure mean stddev)")
        try:
            table[(fields[0], fields[1])] = (float(fields[2]), float(fields[3]))
        except ValueError:
            raise TrecFormatError(path, number, text, "numbers as fields 3 and 4") from None
    return ZScores(table)


def report_lines(
    evaluation: Evaluation,
    *,
    per_topic: bool,
    summary: bool = True,
    zscores: ZScores | None = None,
) -> Iterator[str]:
    """The lines trec_eval prints for one run (``-q`` per topic, ``-n`` no summary, ``-Z``)."""
    hidden = set(evaluation.hidden)
    shown = [q for q in evaluation.per_topic if q not in hidden]
    lines = [line for line in evaluation.lines if line.per_topic]
    z_topic: dict[str, dict[str, float]] = {q: {} for q in evaluation.per_topic}
    if zscores is not None:
        for q, values in evaluation.per_topic.items():
            for line in evaluation.lines:
                if line.kind != "string" and line.name in values:
                    z_topic[q][line.name] = zscores.z(q, line.name, float(values[line.name]))
    if per_topic:
        for q in shown:
            values = evaluation.per_topic[q]
            for line in lines:
                value = values[line.name]
                if line.kind == "string" and line.name.startswith("relstring"):
                    yield format_line(line.name, q, f"'{value}'")
                elif zscores is not None and line.kind != "string":
                    yield "Z" + format_line(line.name, q, z_topic[q][line.name])
                else:
                    yield format_line(line.name, q, value)
    if not summary:
        return
    n = len(evaluation.per_topic)
    for line in evaluation.lines:
        if line.summary == "none":
            continue
        value = evaluation.summary[line.name]
        if zscores is None or line.summary == "runid":
            yield format_line(line.name, "all", value)
        elif line.summary == "num_q":
            yield "Z" + format_line(line.name, "all", float(value))
        else:
            zs = [z_topic[q][line.name] for q in evaluation.per_topic]
            # counts' z-scores are summed like the counts (as floats), the rest averaged
            total = summarise(zs, "mean", 1 if line.summary == "sum" else n)
            if line.summary == "gm":
                total = summarise(zs, "gm", n)
            yield "Z" + format_line(line.name, "all", float(total))
