"""Measure names: trec_eval's ``name.params`` syntax, nicknames and friendly names.

``parse_measure("P.5,10")``, ``parse_measure("ndcg.1=3,2=9")``,
``parse_measure("iprec_at_recall..10,.20")``, ``parse_measure("nDCG@10")`` ...
Friendly names (ir_measures' convention): ``AP``/``MAP`` -> map, ``gMAP`` -> gm_map,
``P@k`` -> P_k, ``R@k`` -> recall_k, ``RR``/``MRR`` -> recip_rank, ``nDCG@k`` -> ndcg_cut_k,
``nDCG`` -> ndcg, ``Rprec``, ``bpref``, ``Judged@k`` -> judged_k (the fraction of the top k
that is judged; a short ranking counts its missing ranks as unjudged), ``F@beta``/``F1`` ->
F_beta (F-beta over the retrieved set), ``DCG@k``/``nDCG_notes@k``
(the course notes' DCG: rel_1 + sum_{i>=2} rel_i / log2 i), ``expDCG@k``/``nDCG_exp@k``
((2^rel - 1) / log2(i + 1)).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any, NamedTuple

from workbench.metrics.extra import EXTRA_FAMILIES
from workbench.metrics.ir_measures_names import (
    Options,
    UnmappedName,
    ir_measures_names_of,
    is_ir_measures_name,
    map_ir_measures_name,
)
from workbench.metrics.measure_table import (
    NOT_IN_ALL_TREC,
    OFFICIAL,
    PARAM_KINDS,
    SET,
    Family,
    families,
)

SHARED_GAINS = ("dcg", "ideal_dcg", "ndcg")  # one PARAMS object in trec_eval 10's m_ndcg.c


class MeasureError(ValueError):
    """An unknown measure or malformed measure parameters."""


class Measure(NamedTuple):
    """A measure family with its parameters; ``param_text`` is set when given explicitly.

    A measure named in ir_measures' syntax also has ``options`` (its relevance level,
    judged-only flag and gains when it sets them) and ``label``, its ir_measures spelling,
    under which it is reported when its options change the evaluation's."""

    family: Family
    params: Any
    param_text: str | None = None
    options: Options = Options()
    label: str | None = None

    @property
    def name(self) -> str:
        return self.family.name

    @property
    def trec_text(self) -> str:
        """The measure in trec_eval's ``-m`` syntax."""
        return self.name if self.param_text is None else f"{self.name}.{self.param_text}"

    def rename(self, printed: str) -> str:
        """The printed name of an output (single-valued families carry explicit params)."""
        if self.param_text is not None and self.family.params in ("float_list", "pairs"):
            return f"{printed}_{self.param_text}"
        if self.param_text is not None and self.family.name == "11pt_avg":
            return f"{printed}_{self.param_text}"
        return printed


@cache
def _families(compat: int) -> dict[str, Family]:
    table = {f.name: f for f in families(compat)}
    table.update({f.name: f for f in EXTRA_FAMILIES})
    return table


def family_order(compat: int = 10) -> list[str]:
    return [f.name for f in families(compat)] + [f.name for f in EXTRA_FAMILIES]


def nickname(name: str, compat: int = 10) -> list[str] | None:
    """The families of a trec_eval nickname (``official``, ``all_trec``, ``set``), or None."""
    if name == "official":
        return list(OFFICIAL)
    if name == "all_trec":
        return [f.name for f in families(compat) if f.name not in NOT_IN_ALL_TREC]
    if name == "set":
        return list(SET)
    return None


@cache
def _friendly(compat: int) -> tuple[re.Pattern[str], dict[str, str]]:
    """The friendly-name pattern and each alias's family, from the families' ``aliases``
    (``P``, ``Rprec``, ``bpref`` and ``F`` are friendly names as they are);
    compiled on first use."""
    families_of = {"P": "P", "Rprec": "Rprec", "bpref": "bpref", "F": "F"}
    for family in _families(compat).values():
        families_of.update(dict.fromkeys(family.aliases, family.name))
    names = "|".join(sorted(map(re.escape, families_of), key=len, reverse=True))
    return re.compile(rf"^({names})(?:@([0-9.]+))?$"), families_of


def parse_measure(name: str, compat: int = 10, *, drop_in: bool = False) -> Measure:
    """A :class:`Measure` from trec_eval syntax, a friendly name or (unless ``drop_in``, the
    names ``workbench trec-eval`` takes) ir_measures' syntax."""
    try:
        return _parse_trec_eval(name, compat)
    except MeasureError:
        if drop_in or not is_ir_measures_name(name):
            raise
    try:
        mapped = map_ir_measures_name(name)
    except UnmappedName as error:
        raise MeasureError(str(error)) from None
    measure = _parse_trec_eval(mapped.trec, compat)
    return measure._replace(options=mapped.options, label=mapped.label)


def _parse_trec_eval(name: str, compat: int) -> Measure:
    table = _families(compat)
    pattern, families_of = _friendly(compat)
    friendly = pattern.match(name)
    if friendly and name not in table:
        base, param = friendly.groups()
        if base == "nDCG":
            return _parse(table["ndcg_cut"], param, name) if param else Measure(table["ndcg"], {})
        if base == "F1":
            return _parse(table["F"], "1", name)
        family = table[families_of[base]]
        if param is None:
            return Measure(family, family.default)
        return _parse(family, param, name)
    base, dot, param = name.partition(".")
    if base not in table:
        raise MeasureError(f"unknown measure {name!r}")
    family = table[base]
    if not dot or family.params is None:
        if dot and param:
            raise MeasureError(f"measure {base!r} takes no parameters (got {name!r})")
        return Measure(family, family.default)
    return _parse(family, param, name)


def _parse(family: Family, text: str, name: str) -> Measure:
    items = text.split(",")
    try:
        if family.params == "cutoffs":
            return Measure(family, parse_cutoffs(text, name), text)
        if family.params == "floats":
            return Measure(family, parse_distinct_floats(text, name), text)
        if family.params == "float_list":
            floats = [float(t) for t in items]
            if family.name == "utility" and len(floats) != 4:
                raise MeasureError(f"{name!r}: utility takes 4 coefficients")
            return Measure(family, floats, text)
        if family.params == "pairs":
            pairs: dict[Any, float] = {}
            for t in items:
                key, eq, value = t.partition("=")
                if not eq:
                    raise MeasureError(f"{name!r}: expected level=gain pairs")
                pairs[key if key == "p" else _atol(key)] = float(value)
            return Measure(family, pairs, text)
    except ValueError as error:
        if isinstance(error, MeasureError):
            raise
        raise MeasureError(f"{name!r}: malformed parameters ({error})") from None
    raise MeasureError(f"measure {family.name!r} takes no parameters (got {name!r})")


def parse_cutoffs(text: str, name: str) -> list[int]:
    """``5,10,...`` read as trec_eval reads cutoffs (C's ``atol``): sorted, positive, distinct;
    ``name`` is the measure as asked, for the error."""
    values = sorted(_atol(t) for t in text.split(","))
    if values[0] <= 0 or len(set(values)) != len(values):
        raise MeasureError(f"{name!r}: cutoffs must be positive and distinct")
    return values


def parse_distinct_floats(text: str, name: str) -> list[float]:
    """``0.5,1.0,...``: sorted, distinct numbers; ``name`` is the measure as asked."""
    try:
        values = sorted(float(t) for t in text.split(","))
    except ValueError as error:
        raise MeasureError(f"{name!r}: malformed parameters ({error})") from None
    if len(set(values)) != len(values):
        raise MeasureError(f"{name!r}: parameters must be distinct")
    return values


def _atol(text: str) -> int:
    """C's atol: the leading integer of the text ("23.4" -> 23)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    if not match:
        raise MeasureError(f"not an integer: {text!r}")
    return int(match.group(1))


def resolve(
    names: list[str] | tuple[str, ...],
    compat: int = 10,
    *,
    check_gains: bool = True,
    drop_in: bool = False,
) -> list[Measure]:
    """Measures for a list of names/nicknames, in trec_eval's output order (then our own
    families and the ir_measures names with options, in the order given).

    ``drop_in`` (``workbench trec-eval``): trec_eval's names and the friendly ones, and a
    family named twice keeps the first parameters given (as trec_eval's ``-m``: a later
    ``-m P.5`` or a plain ``-m P`` changes nothing once ``-m P.10`` is given).  Otherwise
    ir_measures' names too, and a family named twice with cutoffs (or recall levels) gets
    them all: ``P@5`` and ``P@10`` are ``P.5,10``.  With ``check_gains=False`` the caller
    calls :func:`refuse_shared_gains` itself, at the point where trec_eval would crash.
    """
    measures = list(_resolve(tuple(names), compat, drop_in))
    if check_gains:
        refuse_shared_gains(measures)
    return measures


def refuse_shared_gains(measures: Sequence[Measure]) -> None:
    """MeasureError when two of dcg, ideal_dcg and ndcg are chosen and one has gains: trec_eval
    10 keeps one gain table for the three, frees it twice at exit and crashes (after it has
    reported any error in the files), so its output for such a call is lost."""
    shared = [m for m in measures if m.name in SHARED_GAINS]
    if len(shared) > 1 and any(m.param_text is not None for m in shared):
        raise MeasureError(
            "dcg, ideal_dcg and ndcg share one set of gain parameters in trec_eval 10, which "
            "then frees them twice and crashes: give gains to one of them per call"
        )


@lru_cache(maxsize=64)  # one parse for the many runs of one command
def _resolve(names: tuple[str, ...], compat: int, drop_in: bool) -> tuple[Measure, ...]:
    chosen: dict[str, Measure] = {}
    extra: dict[str, Measure] = {}
    for name in names:
        group = nickname(name, compat)
        if group is not None:
            for base in group:
                if base not in chosen:
                    chosen[base] = parse_measure(base, compat)
            continue
        measure = parse_measure(name, compat, drop_in=drop_in)
        if measure.options != Options():
            extra.setdefault(f"label:{measure.label}", measure)
        elif measure.family in EXTRA_FAMILIES:
            key = f"{measure.name}:{measure.param_text}"
            extra[key] = _merged(extra[key], measure) if key in extra else measure
        elif measure.name not in chosen or chosen[measure.name].param_text is None:
            chosen[measure.name] = measure
        elif not drop_in:
            chosen[measure.name] = _merged(chosen[measure.name], measure)
    order = family_order(compat)
    ordered = _share_gains(sorted(chosen.values(), key=lambda m: order.index(m.name)))
    return (*ordered, *extra.values())


def _merged(first: Measure, later: Measure) -> Measure:
    """A family named twice outside the drop-in: cutoffs and recall levels are joined
    (``P.5`` and ``P.10`` give ``P.5,10``); other parameters must agree."""
    if later.param_text is None or later.param_text == first.param_text:
        return first
    if first.family.params in ("cutoffs", "floats"):
        text = f"{first.param_text},{later.param_text}"
        values = sorted(set(first.params) | set(later.params))
        return first._replace(params=values, param_text=text)
    raise MeasureError(
        f"{first.trec_text} and {later.trec_text}: {first.name} named twice with different "
        "parameters; evaluate them separately"
    )


def _share_gains(ordered: list[Measure]) -> list[Measure]:
    """trec_eval 10's one gain table for dcg, ideal_dcg and ndcg: each measure, initialised in
    table order, writes its gains into the shared table and is named after what the table
    holds at that moment; all three then compute with the gains written last. (Its output
    is then lost in a crash at exit, see :func:`refuse_shared_gains`, except the lines it
    prints before an error in the files.)"""
    given = [m for m in ordered if m.name in SHARED_GAINS and m.param_text is not None]
    if not given:
        return ordered
    shared: Measure | None = None
    out = []
    for measure in ordered:
        if measure.name in SHARED_GAINS:
            if measure.param_text is not None:
                shared = measure
            measure = Measure(
                measure.family, given[-1].params, shared.param_text if shared else None
            )
        out.append(measure)
    return out


def measure_help(names: list[str], compat: int = 10) -> str:
    """trec_eval's ``-h -m NAME`` section: each named family (nicknames expanded), its help,
    aliases, parameters and default parameters, in the shape trec_eval prints it."""
    chosen: dict[str, Family] = {}
    for name in names:
        bases = nickname(name, compat)
        for base in bases if bases is not None else [name]:
            family = parse_measure(base, compat, drop_in=True).family
            chosen.setdefault(family.name, family)
    lines = ["", "-" * 23, "Individual measure documentation for requested measures"]
    for family in chosen.values():
        lines.append(family.name)
        lines += textwrap.wrap(family.help, 76, initial_indent="    ", subsequent_indent="    ")
        if family.aliases:
            lines.append(f"    Also named: {', '.join(family.aliases)}")
        if family.params is not None:
            lines.append(f"    Parameters: {PARAM_KINDS[family.params]}")
            default = _param_text(family.default)
            if default:
                lines.append(f"    Default param: -m {family.name}.{default}")
    return "\n".join(lines) + "\n"


def _param_text(default: Any) -> str:
    """Default parameters as ``-m`` writes them: ``5,10``, ``0,0.1``, ``1=3,2=9``."""
    if isinstance(default, dict):
        return ",".join(f"{k}={v:g}" for k, v in default.items())
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default or [])


class MeasureEntry(NamedTuple):
    """One line of the measure catalogue (``workbench measures``)."""

    name: str  # trec_eval's name (ours for the families trec_eval lacks)
    ir_measures: list[str]  # the ir_measures names that map onto it
    aliases: list[str]  # the friendly names
    parameters: str  # what its parameters are, and the default ones
    help: str
    trec_eval: bool  # one of trec_eval's measures (else one of ours)


def measure_catalogue(compat: int = 10) -> list[MeasureEntry]:
    """Every measure family, in trec_eval's order then ours, with its names and help."""
    ours = {f.name for f in EXTRA_FAMILIES}
    entries = []
    for name in family_order(compat):
        family = _families(compat)[name]
        parameters = ""
        if family.params is not None:
            parameters = PARAM_KINDS[family.params]
            default = _param_text(family.default)
            parameters += f"; default {name}.{default}" if default else ""
        entries.append(
            MeasureEntry(
                name,
                ir_measures_names_of(name),
                list(family.aliases),
                parameters,
                family.help,
                name not in ours,
            )
        )
    return entries
