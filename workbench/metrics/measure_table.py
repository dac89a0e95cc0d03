"""trec_eval's measure table: each measure family (:class:`Family`) with its name, parameter
kind and defaults, summary, help and aliases, listed in trec_eval's output order
(``te_trec_measures``), and the measure sets (``official``, ``set``, ``all_trec``).

The computations the table names live in :mod:`workbench.metrics.measures`.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from workbench.metrics.measures import (
    _G,
    _P,
    Compute,
    _11pt,
    _binG,
    _bpref,
    _counts,
    _dcg,
    _gm_bpref,
    _gm_map,
    _ideal_dcg,
    _infap,
    _iprec,
    _map,
    _map_cut,
    _ndcg,
    _ndcg_cut,
    _ndcg_rel,
    _rbp,
    _rbp_resid,
    _recall,
    _recip_rank,
    _relative_P,
    _relstring,
    _rndcg,
    _rprec,
    _rprec_mult,
    _set_F,
    _set_map,
    _set_P,
    _set_recall,
    _set_relative_P,
    _success,
    _unj,
    _utility,
)

ParamKind = Literal["cutoffs", "floats", "float_list", "pairs"]
PARAM_KINDS: dict[str, str] = {
    "cutoffs": "positive integer cutoffs, without duplicates (sorted)",
    "floats": "numbers, without duplicates (sorted)",
    "float_list": "numbers, kept in the order given",
    "pairs": "level=gain pairs",
}


class Family(NamedTuple):
    """One trec_eval measure family (a NamedTuple: a frozen dataclass costs start-up time).

    ``params``: None (no parameters) or a :data:`ParamKind` (:data:`PARAM_KINDS` says what
    each accepts: cutoffs are positive integers, sorted, unique; floats sorted, unique;
    float_list kept in order, as utility, set_F, relstring; pairs ``level=gain``), with
    ``default`` the parameters used when none are given.  ``summary``: "mean", "sum", "gm"
    (geometric, trec_eval's epsilon), "none" (printed per topic only), "runid", "num_q".
    ``help``: what the measure is, for ``trec-eval -h -m NAME``; ``aliases``: the friendly
    names (ir_measures' convention, e.g. ``AP`` for map) that :mod:`.names` accepts for it.
    """

    name: str
    compute: Compute | None
    params: ParamKind | None = None
    default: Any = None
    summary: str = "mean"
    kind: str = "float"  # "float", "count", "string"
    per_topic: bool = True
    cutoff_format: str = "{}"
    help: str = ""
    aliases: tuple[str, ...] = ()


CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
RECALL_POINTS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def families(compat: int = 10) -> list[Family]:
    """trec_eval's measures in output order; ``compat=9`` gives 9.0.8's rounding."""
    rounding = "round" if compat >= 10 else "plus09"
    return [
        Family(
            "runid",
            None,
            summary="runid",
            kind="string",
            per_topic=False,
            help="The run's tag: the sixth field of the run's last line.",
        ),
        Family(
            "num_q",
            None,
            summary="num_q",
            kind="count",
            per_topic=False,
            help="The number of topics evaluated.",
        ),
        Family(
            "num_ret",
            _counts("num_ret"),
            summary="sum",
            kind="count",
            help="Documents retrieved for the topic (after the -M cut).",
        ),
        Family(
            "num_rel",
            _counts("num_rel"),
            summary="sum",
            kind="count",
            help="Relevant documents the qrels give the topic (grade >= the -l level).",
        ),
        Family(
            "num_rel_ret",
            _counts("num_rel_ret"),
            summary="sum",
            kind="count",
            help="Relevant documents retrieved.",
        ),
        Family(
            "map",
            _map,
            help=(
                "Average precision: the precision at the rank of each relevant document retrieved,"
                " summed and divided by the topic's number of relevant documents R; averaged over "
                "topics (mean average precision)."
            ),
            aliases=("AP", "MAP"),
        ),
        Family(
            "gm_map",
            _gm_map,
            summary="gm",
            per_topic=False,
            help=(
                "Average precision averaged over topics geometrically (values below 0.00001 taken "
                "as 0.00001), which weighs improvements on hard topics more."
            ),
            aliases=("gMAP",),
        ),
        Family(
            "Rprec",
            _rprec,
            help="Precision after R documents, R being the topic's number of relevant documents.",
        ),
        Family(
            "bpref",
            _bpref,
            help=(
                "Binary preference: each relevant document retrieved scores 1 - (judged "
                "nonrelevant documents above it, at most R) / min(R, judged nonrelevant); summed "
                "and divided by R. Unjudged documents count for nothing."
            ),
        ),
        Family(
            "recip_rank",
            _recip_rank,
            help=(
                "The reciprocal of the rank of the first relevant document (0 when none is "
                "retrieved)."
            ),
            aliases=("RR", "MRR"),
        ),
        Family(
            "iprec_at_recall",
            _iprec(rounding),
            "floats",
            RECALL_POINTS,
            help=(
                "Interpolated precision at recall levels: the highest precision at any rank where "
                "recall reaches the level."
            ),
        ),
        Family(
            "P",
            _P,
            "cutoffs",
            CUTOFFS,
            help=(
                "Precision at cutoff k: relevant documents among the first k, divided by k (a "
                "ranking shorter than k counts its missing ranks as nonrelevant)."
            ),
        ),
        Family(
            "relstring",
            _relstring,
            "float_list",
            [10.0],
            summary="none",
            kind="string",
            help=(
                "The relevance of the top-ranked documents, one character a rank (printed per "
                "topic only)."
            ),
        ),
        Family(
            "recall",
            _recall,
            "cutoffs",
            CUTOFFS,
            help="Recall at cutoff k: relevant documents among the first k, divided by R.",
            aliases=("R",),
        ),
        Family(
            "infAP",
            _infap,
            help=(
                "Inferred average precision: average precision estimated when only a sample of the"
                " pool was judged (qrels value -1: pooled but not judged)."
            ),
        ),
        Family(
            "gm_bpref",
            _gm_bpref,
            summary="gm",
            per_topic=False,
            help="bpref averaged over topics geometrically (as gm_map).",
        ),
        Family(
            "Rprec_mult",
            _rprec_mult,
            "floats",
            [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0],
            help="Precision after m x R documents, for each multiplier m.",
        ),
        Family(
            "utility",
            _utility,
            "float_list",
            [1.0, -1.0, 0.0, 0.0],
            help=(
                "Set utility a*relret + b*nonrelret + c*relnotret + d*nonrelnotret, with the "
                "coefficients a,b,c,d as parameters (-N gives the collection size)."
            ),
        ),
        Family(
            "11pt_avg",
            _11pt(rounding),
            "floats",
            RECALL_POINTS,
            help=(
                "Interpolated precision averaged over recall levels (by default the eleven levels "
                "0.0, 0.1, ..., 1.0)."
            ),
        ),
        Family(
            "binG",
            _binG,
            help=(
                "Each relevant document retrieved gains 1 / log2(2 + the nonrelevant documents "
                "above it); summed and divided by R."
            ),
        ),
        Family(
            "G",
            _G,
            "pairs",
            {},
            help=(
                "Gain at the retrieved ranks with gains per relevance level (level=gain "
                "parameters), normalised by the ideal ranking's."
            ),
        ),
        *(
            [
                Family(
                    "dcg",
                    _dcg,
                    "pairs",
                    {},
                    help=(
                        "Discounted cumulative gain: gain(grade) / log2(rank + 1) summed over the "
                        "ranking; gains per level as level=gain parameters (by default the grade "
                        "itself)."
                    ),
                ),
                Family(
                    "ideal_dcg",
                    _ideal_dcg,
                    "pairs",
                    {},
                    help="The DCG of the ideal ranking: every judged document by descending gain.",
                ),
            ]
            if compat >= 10
            else []
        ),
        Family(
            "ndcg",
            _ndcg,
            "pairs",
            {},
            help=(
                "Normalised DCG: the run's DCG divided by the ideal ranking's DCG (gains as in "
                "dcg)."
            ),
            aliases=("nDCG",),
        ),
        Family(
            "ndcg_rel",
            _ndcg_rel,
            "pairs",
            {},
            help=(
                "Normalised DCG averaged over the ranks of the relevant documents (gains as in "
                "dcg)."
            ),
        ),
        Family(
            "Rndcg",
            _rndcg,
            "pairs",
            {},
            help=(
                "Normalised DCG averaged over the ranks where the ideal gain changes level (gains "
                "as in dcg)."
            ),
        ),
        Family(
            "ndcg_cut",
            _ndcg_cut,
            "cutoffs",
            CUTOFFS,
            help="Normalised DCG at cutoff k: both rankings cut after k documents.",
        ),
        Family(
            "map_cut",
            _map_cut,
            "cutoffs",
            CUTOFFS,
            help=(
                "Average precision at cutoff k: only the first k documents count, still divided by"
                " R."
            ),
        ),
        Family(
            "relative_P",
            _relative_P,
            "cutoffs",
            CUTOFFS,
            help=(
                "Precision at cutoff k relative to the best possible: relevant among the first k, "
                "divided by min(k, R)."
            ),
        ),
        Family(
            "success",
            _success,
            "cutoffs",
            [1, 5, 10],
            help="Success at cutoff k: 1 when a relevant document is among the first k, else 0.",
        ),
        Family(
            "set_P",
            _set_P,
            help="Precision of the whole retrieved set: relevant retrieved / retrieved.",
        ),
        Family(
            "set_relative_P",
            _set_relative_P,
            help=(
                "Set precision relative to the best possible: relevant retrieved / min(retrieved, "
                "R)."
            ),
        ),
        Family(
            "set_recall",
            _set_recall,
            help="Recall of the whole retrieved set: relevant retrieved / R.",
        ),
        Family(
            "set_map",
            _set_map,
            help="Set precision times set recall, computed as relret * relret / (retrieved * R).",
        ),
        Family(
            "set_F",
            _set_F,
            "float_list",
            [1.0],
            help=(
                "F-measure of the retrieved set: (beta^2 + 1) P R / (beta^2 P + R), one value per "
                "beta parameter."
            ),
        ),
        Family(
            "num_nonrel_judged_ret",
            _counts("num_nonrel_judged_ret"),
            summary="sum",
            kind="count",
            help="Judged nonrelevant documents retrieved.",
        ),
        *(
            [
                Family(
                    "rbp",
                    _rbp,
                    "pairs",
                    {},
                    help=(
                        "Rank-biased precision (Moffat and Zobel): (1 - p) sum of gain_i p^(i-1), "
                        "gains scaled to [0, 1]; the persistence p as parameter p=."
                    ),
                ),
                Family(
                    "rbp_resid",
                    _rbp_resid,
                    help=(
                        "Rank-biased precision's residual (p = 0.9): the weight of the unjudged "
                        "ranks and of the ranks past the end."
                    ),
                ),
                Family(
                    "unj",
                    _unj,
                    "cutoffs",
                    [5, 10, 20],
                    help="The fraction of the first k ranks that hold no judged document.",
                ),
            ]
            if compat >= 10
            else []
        ),
    ]


NOT_IN_ALL_TREC = {"dcg", "ideal_dcg"}
OFFICIAL = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
]
SET = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
]
