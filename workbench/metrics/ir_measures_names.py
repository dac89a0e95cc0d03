"""ir_measures' measure names (MacAvaney, Macdonald & Ounis, "Streamlining Evaluation with
ir-measures", ECIR 2022) mapped onto trec_eval's measures: ``nDCG@10``, ``AP(rel=2)``,
``P(rel=2)@5``, ``R@100``, ``RR``, ``Bpref``, ``Judged@10``, ``infAP``, ``NumRet(rel=1)`` ...

Syntax: ``NAME``, ``NAME@AT``, ``NAME(param=value, ...)``, ``NAME(...)@AT``; values are
integers, decimals, ``True``/``False``, quoted strings, or ``{grade: gain, ...}`` (gains).  The
``@`` value is the measure's cutoff (its recall level for ``IPrec``).  Each name becomes a trec_eval
measure (``P(rel=2)@5`` is ``P.5``) and the options that are not trec_eval parameters:
``rel`` (the relevance level, trec_eval's ``-l``), ``judged_only`` (``-J``) and nDCG's
``gains`` (the grades replaced by their gains in the qrels, as ir_measures' pytrec_eval
provider does).  A measure ir_measures has and trec_eval lacks is refused by name
(:data:`NOT_PROVIDED`); so is a parameter the measure does not take.  Our reading: ``RR@k``
is MS MARCO's MRR@k (the reciprocal rank of the first relevant document within the first k,
0 without one), computed by our ``recip_rank_cut`` family.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple


class UnmappedName(ValueError):
    """A name in ir_measures' syntax that cannot be mapped (reported as a MeasureError)."""


class Options(NamedTuple):
    """What an ir_measures name sets beyond trec_eval's parameters (None: the evaluation's)."""

    relevance_level: int | None = None
    judged_only: bool | None = None
    gains: tuple[tuple[int, int], ...] | None = None


class Mapped(NamedTuple):
    """An ir_measures name as a trec_eval measure (``trec``, in trec_eval's ``-m`` syntax),
    its options, and its canonical ir_measures spelling (``label``)."""

    trec: str
    options: Options
    label: str


class IrMeasure(NamedTuple):
    """One ir_measures measure we map: its trec_eval family (``trec``; with a cutoff
    ``trec_at``), what ``@`` sets (``at``: "cutoff", "recall" or None), whether ``@`` is
    required, and the other parameters it takes."""

    trec: str
    trec_at: str | None
    at: str | None
    at_required: bool
    params: tuple[str, ...]


_REL = ("rel", "judged_only")
MEASURES: dict[str, IrMeasure] = {
    "AP": IrMeasure("map", "map_cut", "cutoff", False, _REL),
    "P": IrMeasure("P", "P", "cutoff", True, _REL),
    "R": IrMeasure("recall", "recall", "cutoff", True, _REL),
    "RR": IrMeasure("recip_rank", "recip_rank_cut", "cutoff", False, _REL),
    "Rprec": IrMeasure("Rprec", None, None, False, _REL),
    "nDCG": IrMeasure("ndcg", "ndcg_cut", "cutoff", False, ("dcg", "gains", "judged_only")),
    "Bpref": IrMeasure("bpref", None, None, False, ("rel",)),
    "infAP": IrMeasure("infAP", None, None, False, ("rel",)),
    "Judged": IrMeasure("judged", "judged", "cutoff", True, ()),
    "NumRet": IrMeasure("num_ret", None, None, False, ("rel",)),
    "NumRel": IrMeasure("num_rel", None, None, False, ("rel",)),
    "NumQ": IrMeasure("num_q", None, None, False, ()),
    "SetP": IrMeasure("set_P", None, None, False, ("rel", "relative", "judged_only")),
    "SetR": IrMeasure("set_recall", None, None, False, ("rel",)),
    "SetF": IrMeasure("set_F", None, None, False, ("rel", "beta", "judged_only")),
    "SetAP": IrMeasure("set_map", None, None, False, _REL),
    "Success": IrMeasure("success", "success", "cutoff", True, _REL),
    "IPrec": IrMeasure("iprec_at_recall", "iprec_at_recall", "recall", True, _REL),
}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "MAP": ("AP", {}),
    "MRR": ("RR", {}),
    "NDCG": ("nDCG", {}),
    "Precision": ("P", {}),
    "Recall": ("R", {}),
    "BPref": ("Bpref", {}),
    "RPrec": ("Rprec", {}),
    "NumRelRet": ("NumRet", {"rel": 1}),
    "SetRelP": ("SetP", {"relative": True}),
}
NOT_PROVIDED: dict[str, str] = {
    "ERR": "expected reciprocal rank (Chapelle et al. 2009)",
    "NERR8": "normalised ERR (Moffat 2022)",
    "NERR9": "normalised ERR (Moffat 2022)",
    "NERR10": "normalised ERR (Moffat 2022)",
    "NERR11": "normalised ERR (Moffat 2022)",
    "alpha_nDCG": "alpha-nDCG, a diversity measure (Clarke et al. 2008)",
    "α_nDCG": "alpha-nDCG, a diversity measure (Clarke et al. 2008)",
    "alpha_DCG": "alpha-DCG, a diversity measure (Clarke et al. 2008)",
    "α_DCG": "alpha-DCG, a diversity measure (Clarke et al. 2008)",
    "ERR_IA": "intent-aware ERR, a diversity measure",
    "nERR_IA": "intent-aware normalised ERR, a diversity measure",
    "NRBP": "novelty- and rank-biased precision, a diversity measure",
    "nNRBP": "normalised NRBP, a diversity measure",
    "AP_IA": "intent-aware AP, a diversity measure",
    "MAP_IA": "intent-aware AP, a diversity measure",
    "P_IA": "intent-aware precision, a diversity measure",
    "StRecall": "subtopic recall, a diversity measure",
    "RBP": "ir_measures' rank-biased precision (trec_eval's differs: use rbp.p=0.8)",
    "SDCG": "scaled DCG (C/W/L framework)",
    "BPM": "the bejeweled player model (C/W/L framework)",
    "INST": "INST (C/W/L framework)",
    "INSQ": "INSQ (C/W/L framework)",
    "Compat": "compatibility with an ideal ranking (Clarke et al. 2020)",
    "Accuracy": "accuracy of pairwise preferences",
}

_SYNTAX = re.compile(r"^([A-Za-z_α][A-Za-z0-9_]*)(?:\((.*)\))?(?:@([^@()\s]+))?$", re.S)


def is_ir_measures_name(name: str) -> bool:
    """Whether the name's measure (before ``(`` or ``@``) is one ir_measures knows."""
    match = _SYNTAX.match(name.strip())
    if match is None:
        return False
    return any(match.group(1) in known for known in (MEASURES, ALIASES, NOT_PROVIDED))


def map_ir_measures_name(name: str) -> Mapped:
    """The trec_eval measure, options and canonical spelling of an ir_measures name; raises
    :class:`UnmappedName` saying what is wrong (unknown, not provided, a parameter not taken)."""
    match = _SYNTAX.match(name.strip())
    if not match:
        raise UnmappedName(f"{name!r} is not a measure name (NAME, NAME@k, NAME(param=value)@k)")
    base, args_text, at_text = match.groups()
    if base in NOT_PROVIDED:
        raise UnmappedName(
            f"{name!r}: workbench has no {base} ({NOT_PROVIDED[base]}); the ir_measures "
            f"measures it has: {', '.join(MEASURES)} (`workbench measures` lists them)"
        )
    params: dict[str, Any] = {}
    if base in ALIASES:
        base, preset = ALIASES[base]
        params.update(preset)
    if base not in MEASURES:
        raise UnmappedName(f"unknown measure {name!r}")
    measure = MEASURES[base]
    params.update(_arguments(name, args_text or ""))
    for key in params:
        if key not in measure.params:
            takes = ", ".join(measure.params) or "no parameters"
            raise UnmappedName(f"{name!r}: {base} does not take {key!r} (it takes {takes})")
    at = _at_value(name, measure, at_text)
    trec = _trec_name(name, base, measure, params, at)
    return Mapped(trec, _options(name, params), _label(base, params, at_text))


def _trec_name(
    name: str, base: str, measure: IrMeasure, params: dict[str, Any], at: str | None
) -> str:
    if base == "nDCG" and params.get("dcg", "log2") != "log2":
        raise UnmappedName(
            f"{name!r}: only nDCG's log2 DCG is mapped (trec_eval's); our exponential-gain "
            "variant nDCG_exp@k is not claimed equal to ir_measures' exp-log2"
        )
    if base == "SetP" and params.get("relative"):
        return "set_relative_P"
    if base == "SetF" and "beta" in params:
        return f"set_F.{_number(name, params['beta'])}"
    if base == "NumRet" and "rel" in params:
        return "num_rel_ret"
    if at is None:
        return measure.trec
    return f"{measure.trec_at}.{at}"


def _at_value(name: str, measure: IrMeasure, text: str | None) -> str | None:
    if text is None:
        if measure.at_required:
            raise UnmappedName(f"{name!r}: give its {measure.at} with @ (e.g. {name}@10)")
        return None
    if measure.at is None:
        raise UnmappedName(f"{name!r}: this measure takes no @ value")
    if measure.at == "recall":
        return _number(name, _literal(name, text))
    value = _literal(name, text)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise UnmappedName(f"{name!r}: the cutoff after @ must be a positive integer")
    return str(value)


def _options(name: str, params: dict[str, Any]) -> Options:
    rel = params.get("rel")
    if rel is not None and (not isinstance(rel, int) or isinstance(rel, bool)):
        raise UnmappedName(f"{name!r}: rel must be an integer grade")
    judged = params.get("judged_only")
    if judged is not None and not isinstance(judged, bool):
        raise UnmappedName(f"{name!r}: judged_only must be True or False")
    gains = params.get("gains")
    if gains is not None:
        if not isinstance(gains, dict) or not all(
            isinstance(k, int) and isinstance(v, int) and not isinstance(v, bool)
            for k, v in gains.items()
        ):
            raise UnmappedName(f"{name!r}: gains must map integer grades to integer gains")
        gains = tuple(sorted(gains.items()))
    return Options(rel, judged, gains)


def _label(base: str, params: dict[str, Any], at: str | None) -> str:
    """ir_measures' spelling: ``NAME(k=v,...)@at`` with the parameters in name order."""
    shown = [f"{key}={_show(params[key])}" for key in sorted(params)]
    return base + (f"({','.join(shown)})" if shown else "") + (f"@{at}" if at else "")


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _number(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnmappedName(f"{name!r}: expected a number, got {value!r}")
    return repr(value)


def _arguments(name: str, text: str) -> dict[str, Any]:
    """``key=value`` pairs separated by commas outside braces and quotes."""
    out: dict[str, Any] = {}
    for part in _split(text):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise UnmappedName(f"{name!r}: parameters are name=value, got {part.strip()!r}")
        if key in out:
            raise UnmappedName(f"{name!r}: {key} given twice")
        out[key] = _literal(name, value.strip())
    return out


def _split(text: str) -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def _literal(name: str, text: str) -> Any:
    """An integer, a decimal, True/False, a quoted string or ``{int: int, ...}``."""
    if text in ("True", "False"):
        return text == "True"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith("{") and text.endswith("}"):
        pairs: dict[Any, Any] = {}
        for item in _split(text[1:-1]):
            key, colon, value = item.partition(":")
            if not colon:
                raise UnmappedName(f"{name!r}: expected grade: gain pairs in {text!r}")
            pairs[_literal(name, key.strip())] = _literal(name, value.strip())
        return pairs
    raise UnmappedName(f"{name!r}: cannot read the value {text!r}")


_NAMED_BY_PRESET = {"num_rel_ret": ["NumRelRet", "NumRet(rel=l)"], "set_relative_P": ["SetRelP"]}


def ir_measures_names_of(family: str) -> list[str]:
    """The ir_measures names that map onto a trec_eval family (``k``: a cutoff, ``r``: a
    recall level), e.g. ``["AP@k"]`` for map_cut; empty when ir_measures has none."""
    names = []
    for name, measure in MEASURES.items():
        if measure.trec == family and not measure.at_required:
            names.append(name)
        if measure.trec_at == family and measure.at is not None:
            names.append(f"{name}@{'r' if measure.at == 'recall' else 'k'}")
    return names + _NAMED_BY_PRESET.get(family, [])
