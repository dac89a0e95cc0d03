"""``workbench measures``: every measure listed with its names, and every ir_measures name it
lists is one that evaluation takes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from workbench import metrics
from workbench.cli import main
from workbench.metrics.names import family_order


def _listed(*args: str) -> str:
    result = CliRunner().invoke(main, ["measures", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_every_measure_is_listed_with_its_names() -> None:
    text = _listed()
    for name in family_order():
        assert f"\n{name}" in f"\n{text}"
    assert "map  (ir_measures: AP; also: AP, MAP)" in text
    assert "recip_rank_cut  (ir_measures: RR@k; not trec_eval's)" in text
    assert "dcg" not in _listed("--compat", "9").split()


def test_every_listed_ir_measures_name_evaluates() -> None:
    rows = json.loads(_listed("--format", "json"))["rows"]
    names = [n for row in rows for n in row["ir_measures"].split(", ") if n]
    assert "nDCG@k" in names and "IPrec@r" in names
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"a": 2.0, "b": 1.0}}
    for name in names:
        concrete = name.replace("@k", "@5").replace("@r", "@0.5").replace("rel=l", "rel=1")
        result = metrics.evaluate(qrels, run, [concrete])
        assert result.summary, name
