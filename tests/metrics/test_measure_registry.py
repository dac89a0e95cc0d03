"""The measure registry: every family carries its help, typed parameters and aliases, and
``workbench trec-eval -h -m NAME`` prints them in trec_eval's shape."""

from __future__ import annotations

import io
import typing

import pytest

from workbench.metrics.extra import EXTRA_FAMILIES
from workbench.metrics.measure_table import OFFICIAL, PARAM_KINDS, ParamKind, families
from workbench.metrics.names import MeasureError, measure_help, parse_measure
from workbench.trec_eval_command import run_trec_eval

ALL = [*families(10), *EXTRA_FAMILIES]


def test_every_family_has_help_and_a_known_parameter_kind() -> None:
    assert set(PARAM_KINDS) == set(typing.get_args(ParamKind))
    for family in ALL:
        assert len(family.help) > 20, family.name
        assert family.params is None or family.params in PARAM_KINDS, family.name
        assert (family.params is None) == (family.default is None), family.name


def test_aliases_sit_beside_their_family_and_name_it() -> None:
    seen: dict[str, str] = {}
    for family in ALL:
        for alias in family.aliases:
            assert alias not in seen, f"{alias} names {seen[alias]} and {family.name}"
            seen[alias] = family.name
            assert parse_measure(alias).family.name == family.name
    assert seen["AP"] == seen["MAP"] == "map"
    assert seen["RR"] == seen["MRR"] == "recip_rank"
    assert parse_measure("nDCG@10").family.name == "ndcg_cut"  # with a cutoff: ndcg_cut
    assert parse_measure("R@100").params == [100]


def test_help_of_one_measure_in_trec_eval_shape() -> None:
    text = measure_help(["P.10"])
    lines = text.splitlines()
    start = lines.index("Individual measure documentation for requested measures")
    assert lines[start + 1] == "P"
    body = lines[start + 2 :]
    assert all(line.startswith("    ") for line in body)
    assert " ".join(line.strip() for line in body).startswith("Precision at cutoff k")
    assert "    Default param: -m P.5,10,15,20,30,100,200,500,1000" in lines
    assert "    Parameters: positive integer cutoffs, without duplicates (sorted)" in lines


def test_help_expands_nicknames_and_names_aliases() -> None:
    lines = measure_help(["official"]).splitlines()
    names = [line for line in lines[3:] if not line.startswith(" ")]
    assert names == OFFICIAL  # each family of the nickname once, in its order
    assert "    Also named: AP, MAP" in lines
    assert measure_help(["MAP", "map"]).count("\nmap\n") == 1  # one entry per family


def test_trec_eval_h_m_prints_the_measure_help() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_trec_eval(["-h", "-m", "P.10"], out, err) == 0
    assert out.getvalue().startswith("``workbench trec-eval")
    assert out.getvalue().endswith(measure_help(["P.10"]))
    out = io.StringIO()
    assert run_trec_eval(["-h"], out, err) == 0
    assert "Individual measure documentation" not in out.getvalue()
    status = run_trec_eval(["-h", "-m", "nosuch"], io.StringIO(), err)
    assert status == 1 and "unknown measure 'nosuch'" in err.getvalue()
    with pytest.raises(MeasureError):
        measure_help(["nosuch"])
