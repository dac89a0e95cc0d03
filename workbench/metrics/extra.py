"""Measures of the course notes that trec_eval lacks; named variants, never trec_eval's names.

* ``F_beta``: F-beta over the retrieved set, (1 + b^2) P R / (b^2 P + R), any beta (trec_eval's
  ``set_F`` takes b^2 as its parameter and prints ``set_F``).
* ``judged_k``: fraction of the top k ranks holding a judged document (missing ranks count as
  unjudged), ir_measures' Judged@k.
* ``recip_rank_cut_k``: the reciprocal rank of the first relevant document if within the first
  k, else 0 (MS MARCO's MRR@k; Nguyen et al., "MS MARCO", 2016).
* ``dcg_notes_k`` / ``ndcg_notes_k``: Järvelin & Kekäläinen as in the course notes,
  DCG@k = rel_1 + sum_{i=2..k} rel_i / log2 i; NDCG against the ideal ordering of the judged
  grades (truncated at k).
* ``dcg_exp_k`` / ``ndcg_exp_k``: exponential gain, sum_{i<=k} (2^rel_i - 1) / log2(i + 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.metrics.measure_table import Family
from workbench.metrics.measures import Values, _safe_div, f_measure, ideal_order
from workbench.metrics.ranked import Ranked, discount

Gain = Callable[[np.ndarray], np.ndarray]


def _notes_discount(pos: np.ndarray) -> np.ndarray:
    """1 for rank 1, log2(i) after (the course notes' DCG)."""
    return np.where(pos <= 1, 1.0, np.log2(np.maximum(pos, 2)) if len(pos) else 1.0)


def _linear(g: np.ndarray) -> np.ndarray:
    return np.maximum(g, 0).astype(np.float64)


def _exponential(g: np.ndarray) -> np.ndarray:
    return np.power(2.0, np.maximum(g, 0)) - 1.0


def _dcg_pair(gain: Gain, disc: Callable[[np.ndarray], np.ndarray]):
    def values(r: Ranked, k: int) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(r.rel > 0)  # both gains are 0 exactly at grade 0 and below
        pos = r.pos_of(rows)
        top = pos <= k
        actual = r.per_topic_sum(rows[top], gain(r.rel[rows[top]]) / disc(pos[top]))
        gains, pos = ideal_order(r, gain(r.judged_rel))
        imask = (pos <= k) & (gains > 0)
        ideal = np.bincount(
            r.judged_topic[imask], weights=(gains / disc(pos))[imask], minlength=r.n_topics
        )
        return actual, ideal

    return values


_NOTES = _dcg_pair(_linear, _notes_discount)
_EXP = _dcg_pair(_exponential, discount)


def _family(
    name: str,
    pick: Callable[[Ranked, int], np.ndarray],
    help: str,
    aliases: tuple[str, ...] = (),
) -> Family:
    def compute(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
        return [(f"{name}_{k}", pick(r, k)) for k in cutoffs]

    return Family(name, compute, "cutoffs", [10], help=help, aliases=aliases)


def _recip_rank_cut(r: Ranked, k: int) -> np.ndarray:
    """1 / the rank of the first relevant document when it is within the first k, else 0."""
    topic, pos = r.rel_topic, r.rel_pos
    first = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1]))) if len(pos) else pos
    out = np.zeros(r.n_topics)
    within = pos[first] <= k
    out[topic[first][within]] = 1.0 / pos[first][within]
    return out


def _judged(r: Ranked, k: int) -> np.ndarray:
    rows = r.judged_rows
    return r.per_topic_count(rows[r.pos_of(rows) <= k]) / k


def _normalised(pair: Any) -> Callable[[Ranked, int], np.ndarray]:
    def pick(r: Ranked, k: int) -> np.ndarray:
        actual, ideal = pair(r, k)
        return _safe_div(actual, ideal)

    return pick


def _dcg_families(scheme: str, pair: Any, dcg_help: str, aliases: tuple[str, str]) -> list[Family]:
    """``dcg_<scheme>`` at cutoff k (``pair(r, k)``: actual and ideal DCG) and ``ndcg_<scheme>``,
    it over the ideal ranking's; ``aliases``: one for each."""
    return [
        _family(
            f"dcg_{scheme}",
            lambda r, k: pair(r, k)[0],
            help=f"{dcg_help} (not trec_eval's).",
            aliases=aliases[:1],
        ),
        _family(
            f"ndcg_{scheme}",
            _normalised(pair),
            help=f"dcg_{scheme} normalised by the ideal ranking's (not trec_eval's).",
            aliases=aliases[1:],
        ),
    ]


def _f_beta(r: Ranked, betas: list[float]) -> list[tuple[str, Values]]:
    return [(f"F_{beta:g}", f_measure(r, beta * beta)) for beta in betas]


EXTRA_FAMILIES = [
    Family(
        "F",
        _f_beta,
        "floats",
        [1.0],
        help=(
            "F-beta over the retrieved set, one value per beta (not trec_eval's; aliases F@beta, "
            "F1)."
        ),
        aliases=("F1",),
    ),
    _family(
        "recip_rank_cut",
        _recip_rank_cut,
        help=(
            "Reciprocal rank at cutoff k (MS MARCO's MRR@k, ir_measures' RR@k): 1 / the rank of "
            "the first relevant document if it is among the first k, else 0 (not trec_eval's)."
        ),
    ),
    _family(
        "judged",
        _judged,
        help=(
            "Judged@k: the fraction of the first k ranks whose document is judged (not "
            "trec_eval's)."
        ),
        aliases=("Judged",),
    ),
    *_dcg_families(
        "notes",
        _NOTES,
        "The course notes' DCG at cutoff k: rel_1 + sum over i >= 2 of rel_i / log2 i",
        aliases=("DCG", "nDCG_notes"),
    ),
    *_dcg_families(
        "exp",
        _EXP,
        "DCG at cutoff k with exponential gains (2^rel - 1) / log2(i + 1)",
        aliases=("expDCG", "nDCG_exp"),
    ),
]
