"""trec_eval's measures (the ``all_trec`` set and the rest), computed over all topics at once.

Each measure family's computation is a :data:`Compute`: a function from
:class:`~workbench.metrics.ranked.Ranked` and the parameters to ``[(printed name, per-topic
values)]``; the table of families that names them (:class:`~.measure_table.Family`, in
trec_eval's output order) is :mod:`workbench.metrics.measure_table`.  R is the number of
relevant documents (rel >= level), ranks start at 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from workbench.metrics.ranked import NONPOOL, UNJUDGED, Ranked, discount

MIN_GEO_MEAN = 0.00001
UNDEFINED = -math.nan  # x86's 0.0/0.0: a NaN with the sign bit set (printed "-nan")
INFAP_EPSILON = 0.00001

Values = np.ndarray | list[str]
Compute = Callable[[Ranked, Any], list[tuple[str, Values]]]


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


# ------------------------------------------------------------------ building blocks


def rel_in_top(r: Ranked, k: int | np.ndarray) -> np.ndarray:
    """Relevant documents among the first k (k per topic or a constant)."""
    topic = r.rel_topic
    limit = k if np.isscalar(k) else np.asarray(k)[topic]
    return np.bincount(topic[r.rel_pos <= limit], minlength=r.n_topics).astype(np.int64)


def average_precision(r: Ranked, cutoff: int | None = None) -> np.ndarray:
    """sum over relevant retrieved docs (within cutoff) of rel_so_far / rank, over R."""
    rows = r.rel_rows if cutoff is None else r.rel_rows[r.rel_pos <= cutoff]
    total = r.per_topic_sum(rows, r.rel_so_far(rows) / r.pos_of(rows))
    return _safe_div(total, r.num_rel)


def bpref(r: Ranked) -> np.ndarray:
    """Sum at each relevant doc of 1 - min(nonrel_above, R) / min(N, R); over R."""
    nonrel_rows = r.judged_rows[~r.is_rel[r.judged_rows]]
    rows = r.rel_rows
    topic = r.rel_topic
    # judged nonrelevant rows above each relevant row, within its topic (sorted rows: counts)
    nonrel_above = np.searchsorted(nonrel_rows, rows) - np.searchsorted(
        nonrel_rows, r.offsets[topic]
    )
    R = r.num_rel[topic]
    den = np.minimum(r.num_nonrel[topic], R)
    penalty = _safe_div(np.minimum(nonrel_above, R), den)
    contrib = np.where(nonrel_above > 0, 1.0 - penalty, 1.0)
    return _safe_div(r.per_topic_sum(rows, contrib), r.num_rel)


def interpolated_precision(r: Ranked, points: list[float], rounding: str) -> np.ndarray:
    """(topics, points): max precision at or after the rank of the c-th relevant doc.

    c = lround(p R) (trec_eval 10, ``rounding="round"``) or (long)(p R + 0.9) (9.0.8).
    c beyond the relevant retrieved docs gives 0; c = 0 the maximum precision overall, which
    is num_rel_ret / num_ret = 0/0 = NaN on an empty ranking (``-J``), as in trec_eval.
    """
    out = np.zeros((r.n_topics, len(points)))
    empty = r.num_ret == 0
    if empty.any():
        for j, p in enumerate(points):
            out[empty & (_relevant_cutoff(p, r.num_rel, rounding) == 0), j] = UNDEFINED
    rel_rows = r.rel_rows
    if not len(rel_rows):
        return out
    prec = r.rel_so_far(rel_rows) / r.rel_pos
    topic = r.rel_topic
    best = _segment_reverse_max(prec, topic)
    first = np.searchsorted(topic, np.arange(r.n_topics))
    n_rr = r.num_rel_ret
    for j, p in enumerate(points):
        c = _relevant_cutoff(p, r.num_rel, rounding)
        ok = (c <= n_rr) & (n_rr > 0)
        idx = first + np.maximum(c - 1, 0)
        out[ok, j] = best[idx[ok]]
    return out


def _relevant_cutoff(p: float, num_rel: np.ndarray, rounding: str) -> np.ndarray:
    """The cutoff in relevant documents: lround(p R), or (long)(p R + 0.9) for 9.0.8."""
    if rounding == "round":  # C's lround: halves away from zero, exactly
        x = p * num_rel
        whole = np.trunc(x)
        return (whole + (x - whole >= 0.5)).astype(np.int64)
    return np.floor(p * num_rel + 0.9).astype(np.int64)


def _segment_reverse_max(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """For each element, the max of values from it to the end of its (sorted) segment."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    uniq = ordered[new]
    code = np.empty(len(values), dtype=np.int64)
    code[order] = np.cumsum(new) - 1
    span = len(uniq) + 1
    biased = code.astype(np.int64) + (segment.max() - segment).astype(np.int64) * span
    rev = np.maximum.accumulate(biased[::-1])[::-1]
    return uniq[rev - (segment.max() - segment).astype(np.int64) * span]


def gain_table(r: Ranked, pairs: dict[int, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """(judged ranked rows, their gains).

    Default gain is the grade; ``pairs`` override it per grade.  Unjudged rows gain 0.
    """
    pairs = pairs or {}
    top = max([int(r.rel.max()) if len(r.rel) else 0, *(pairs or [0])])
    table = np.arange(top + 1, dtype=np.float64)
    for level, g in pairs.items():
        if 0 <= level <= top:
            table[level] = g
    rows = r.judged_rows
    return rows, table[r.rel[rows]]


def ideal_order(r: Ranked, judged_gain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Judged gains sorted descending within topic; returns (gains, 1-based pos).

    The grades are already descending within topic, so gains that keep their order (the
    default, gain = grade) need no sort.
    """
    topic = r.judged_topic
    if np.all((judged_gain[1:] <= judged_gain[:-1]) | (topic[1:] != topic[:-1])):
        return judged_gain, r.judged_pos
    order = np.lexsort((-judged_gain, topic))
    return judged_gain[order], r.judged_pos


def dcg(r: Ranked, rows: np.ndarray, gains: np.ndarray, cutoff: int | None = None) -> np.ndarray:
    """sum of gain / log2(rank + 1) over the judged ranked ``rows`` (within cutoff)."""
    keep = gains != 0
    topic = r.topic_of(rows)
    pos = rows - r.offsets[topic] + 1
    if cutoff is not None:
        keep &= pos <= cutoff
    weights = gains[keep] / discount(pos[keep])
    return np.bincount(topic[keep], weights=weights, minlength=r.n_topics)


def ideal_dcg(r: Ranked, cutoff: int | None = None) -> np.ndarray:
    """The ideal ranking's DCG per topic (gain = grade): every judged document by descending
    grade, within ``cutoff``.  Kept in ``r.judged_memo``: every run ranked on the same qrels,
    topics and level shares it."""
    key = ("ideal_dcg", cutoff)
    if key in r.judged_memo:
        return r.judged_memo[key]
    gains, pos = r.judged_rel.astype(np.float64), r.judged_pos  # grades descend in each topic
    mask = gains > 0
    if cutoff is not None:
        mask &= pos <= cutoff
    w = np.where(mask, gains / discount(pos), 0.0)
    result = np.bincount(r.judged_topic[mask], weights=w[mask], minlength=r.n_topics)
    result.flags.writeable = False
    r.judged_memo[key] = result
    return result


# ------------------------------------------------------------------ per-family computations


def _counts(name: str) -> Compute:
    def compute(r: Ranked, _: Any) -> list[tuple[str, Values]]:
        values = {
            "num_ret": r.num_ret,
            "num_rel": r.num_rel,
            "num_rel_ret": r.num_rel_ret,
            "num_nonrel_judged_ret": r.per_topic_count(r.judged_rows[~r.is_rel[r.judged_rows]]),
        }[name]
        return [(name, values)]

    return compute


def _map(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("map", average_precision(r))]


def _gm_map(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("gm_map", average_precision(r))]


def _rprec(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("Rprec", _safe_div(rel_in_top(r, r.num_rel), r.num_rel))]


def _bpref(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("bpref", bpref(r))]


def _gm_bpref(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("gm_bpref", bpref(r))]


def _recip_rank(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    rows = r.rel_rows
    out = np.zeros(r.n_topics)
    topic = r.rel_topic  # non-decreasing: the first relevant row of each topic starts a run
    first = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1]))) if len(rows) else rows
    topics = topic[first]
    out[topics] = 1.0 / r.rel_pos[first]
    return [("recip_rank", out)]


def _iprec(rounding: str) -> Compute:
    def compute(r: Ranked, points: list[float]) -> list[tuple[str, Values]]:
        values = interpolated_precision(r, points, rounding)
        return [(f"iprec_at_recall_{p:3.2f}", values[:, j]) for j, p in enumerate(points)]

    return compute


def _P(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    return [(f"P_{k}", rel_in_top(r, k) / k) for k in cutoffs]


def _relstring(r: Ranked, params: list[float]) -> list[tuple[str, Values]]:
    length = int(params[0])
    strings = []
    for t in range(r.n_topics):
        chars = []
        for v in r.topic_rels(t)[: max(length, 0)].tolist():
            if v > 9:
                chars.append(">")
            elif v >= 0:
                chars.append(str(v))
            elif v == NONPOOL:
                chars.append("-")
            elif v == UNJUDGED:
                chars.append(".")
            else:
                chars.append("<")
        strings.append("".join(chars))
    return [("relstring", strings)]


def _recall(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    return [(f"recall_{k}", _safe_div(rel_in_top(r, k), r.num_rel)) for k in cutoffs]


def _infap(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    out = np.zeros(r.n_topics)
    for t in range(r.n_topics):
        rels = r.topic_rels(t).tolist()
        nonrel = rel_so_far = unjudged = 0
        total = 0.0
        for j, v in enumerate(rels):
            if v == NONPOOL:
                continue
            if v == UNJUDGED:
                unjudged += 1
                continue
            if 0 <= v < r.level:
                nonrel += 1
                continue
            rel_so_far += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (rel_so_far - 1 + nonrel + unjudged) / fj
                ) * (
                    (rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel + 2 * INFAP_EPSILON)
                )
        out[t] = total / r.num_rel[t] if r.num_rel[t] else total
    return [("infAP", out)]


def _rprec_mult(r: Ranked, multipliers: list[float]) -> list[tuple[str, Values]]:
    out: list[tuple[str, Values]] = []
    for m in multipliers:
        cut = np.floor(m * r.num_rel + 0.9).astype(np.int64)
        out.append((f"Rprec_mult_{m:3.2f}", _safe_div(rel_in_top(r, cut), cut)))
    return out


def _utility(r: Ranked, c: list[float]) -> list[tuple[str, Values]]:
    a = r.num_rel_ret
    value = (
        c[0] * a
        + c[1] * (r.num_ret - a)
        + c[2] * (r.num_rel - a)
        + c[3] * (r.n_docs_in_collection + a - r.num_ret - r.num_rel)
    )
    return [("utility", value.astype(np.float64))]


def _11pt(rounding: str) -> Compute:
    def compute(r: Ranked, points: list[float]) -> list[tuple[str, Values]]:
        values = interpolated_precision(r, points, rounding)
        total = np.zeros(r.n_topics)
        for j in reversed(range(len(points))):  # trec_eval adds from the highest cutoff down
            total = total + values[:, j]
        return [("11pt_avg", total / len(points))]

    return compute


def _binG(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    rows = r.rel_rows
    total = r.per_topic_sum(rows, 1.0 / discount(r.rel_pos - r.rel_so_far(rows) + 1))
    return [("binG", np.where(r.num_rel_ret > 0, _safe_div(total, r.num_rel), 0.0))]


def _level_gains(r: Ranked, t: int, pairs: dict[int, float]) -> list[tuple[int, float, int]]:
    """trec_eval's setup_gains: (level, gain, count) sorted by increasing gain."""
    judged = r.topic_judged(t)
    n_levels = int(judged.max()) + 1 if len(judged) else 0
    counts = np.bincount(judged, minlength=n_levels).tolist() if n_levels else []
    gains = [[level, float(g), 0] for level, g in pairs.items()]
    for level in range(n_levels):
        for entry in gains:
            if entry[0] == level:
                entry[2] = counts[level]
                break
        else:
            gains.append([level, float(level), counts[level]])
    gains = glibc_merge_sort(gains, lambda a, b: _c_int(a[1] - b[1]))
    return [(int(a), b, int(c)) for a, b, c in gains]


def _c_int(x: float) -> int:
    """C's (int) conversion of a double: truncation toward zero."""
    return int(x)


def glibc_merge_sort(items: list, compare: Callable[[Any, Any], int]) -> list:
    """glibc's qsort for small arrays (a top-down merge sort), comparator and all.

    trec_eval sorts gain levels with ``(int)(g1 - g2)``, which calls gains less than 1 apart
    equal; such an inconsistent comparator gives an order only this exact algorithm repeats.
    """
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left = glibc_merge_sort(items[:half], compare)
    right = glibc_merge_sort(items[half:], compare)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _ideal_sequence(levels: list[tuple[int, float, int]]) -> list[float]:
    """The positive ideal gains in rank order (highest gain level first).

    As trec_eval walks its levels: the top level's gain is checked even when no document has
    it; below it, levels without documents are skipped and the first gain <= 0 stops.
    """
    out: list[float] = []
    if not levels or levels[-1][1] <= 0:
        return out
    for _level, gain, count in reversed(levels):
        if count == 0:
            continue
        if gain <= 0:
            break
        out.extend([gain] * count)
    return out


def _topic_gains(
    r: Ranked, pairs: dict[int, float]
) -> Iterator[tuple[int, dict[int, float], list[float]]]:
    """Per topic ``t``: ``(t, grade -> gain, the ideal gain sequence)``, the gains as trec_eval's
    G and ndcg_rel look them up (a grade listed twice: its last gain)."""
    for t in range(r.n_topics):
        levels = _level_gains(r, t, pairs)
        yield t, {level: g for level, g, _ in levels}, _ideal_sequence(levels)


def _G(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    out = np.zeros(r.n_topics)
    for t, lookup, ideal in _topic_gains(r, pairs):
        sum_results = sum_cost = results_g = 0.0
        for i, v in enumerate(r.topic_rels(t).tolist()):
            g = lookup.get(v, 0.0)
            sum_results += g
            ig = ideal[i] if i < len(ideal) else 0.0
            sum_cost += ig if ig >= 1.0 else 1.0
            if g != 0:
                results_g += g / math.log2(2 + sum_cost - sum_results)
        sum_ideal = sum(ideal)
        out[t] = results_g / sum_ideal if sum_ideal > 0 else 0.0
    return [("G", out)]


def _dcg(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    """trec_eval 10's dcg: sum of gain / log2(rank + 1) over the whole ranking."""
    rows, gains = gain_table(r, pairs)
    return [("dcg", dcg(r, rows, gains))]


def _ideal_dcg(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    """trec_eval 10's ideal_dcg: the dcg of the judged documents in gain order."""
    return [("ideal_dcg", _ideal(r, pairs))]


def _ideal_dcg_by_levels(r: Ranked, pairs: dict[int, float]) -> np.ndarray:
    """Ideal DCG from trec_eval's sorted gain levels (differs from sorting the gains when
    gain parameters lie less than 1 apart: see :func:`glibc_merge_sort`)."""
    out = np.zeros(r.n_topics)
    for t in range(r.n_topics):
        total = 0.0
        for i, g in enumerate(_ideal_sequence(_level_gains(r, t, pairs))):
            total += g / math.log2(i + 2)
        out[t] = total
    return out


def _ideal(r: Ranked, pairs: dict[int, float]) -> np.ndarray:
    return _ideal_dcg_by_levels(r, pairs) if pairs else ideal_dcg(r)


def _ndcg(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    rows, gains = gain_table(r, pairs)
    return [("ndcg", _safe_div(dcg(r, rows, gains), _ideal(r, pairs)))]


def _ndcg_rel(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    out = np.zeros(r.n_topics)
    for t, lookup, ideal in _topic_gains(r, pairs):
        rels = r.topic_rels(t).tolist()
        results_dcg = ideal_dcg_v = total = 0.0
        num_rel_ret = 0
        for i in range(max(len(rels), len(ideal))):
            if i < len(rels):
                g = lookup.get(rels[i], 0.0)
                if g != 0:
                    results_dcg += g / math.log2(i + 2)
            else:
                g = 0.0
            if i < len(ideal):
                ideal_dcg_v += ideal[i] / math.log2(i + 2)
            if g > 0:
                total += results_dcg / ideal_dcg_v
                num_rel_ret += 1
        num_rel = len(ideal)
        total += (num_rel - num_rel_ret) * results_dcg / ideal_dcg_v if ideal_dcg_v else 0.0
        out[t] = total / num_rel if total > 0 else 0.0
    return [("ndcg_rel", out)]


def _rndcg(r: Ranked, pairs: dict[int, float]) -> list[tuple[str, Values]]:
    """Mean of ndcg at each rank where the ideal gain changes (trec_eval's R levels).

    0 when the topic has no relevant document; NaN (0/0, as trec_eval) when the ideal gain
    never changes at a positive ideal DCG (e.g. every judged document has grade 0 and ``-l 0``).
    """
    out = np.zeros(r.n_topics)
    for t in range(r.n_topics):
        if r.num_rel[t] == 0:
            continue
        levels = _level_gains(r, t, pairs)
        out[t] = _rndcg_topic(r.topic_rels(t).tolist(), levels)
    return [("Rndcg", out)]


def _rndcg_topic(rels: list[int], levels: list[tuple[int, float, int]]) -> float:
    lookup = {level: g for level, g, _ in reversed(levels)}  # the first level listed wins
    cur = len(levels) - 1
    ideal_gain = levels[cur][1] if cur >= 0 else 0.0
    old_gain = ideal_gain
    at_level = changes = i = 0
    total = results_dcg = ideal_dcg = 0.0
    n = len(rels)

    def step_ideal() -> None:
        nonlocal at_level, cur, ideal_gain, old_gain, total, changes
        at_level += 1
        while cur >= 0 and at_level > levels[cur][2]:
            at_level = 1
            cur -= 1
            ideal_gain = levels[cur][1] if cur >= 0 else 0.0
        if old_gain != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old_gain = ideal_gain

    while i < n and ideal_gain > 0.0:
        gain = lookup.get(rels[i], 0.0)
        step_ideal()
        if gain != 0:
            results_dcg += gain / math.log2(i + 2)
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            gain = lookup.get(rels[i], 0.0)
            if gain != 0:
                results_dcg += gain / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
    while ideal_gain > 0.0:
        step_ideal()
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / math.log2(i + 2)
        i += 1
    return total / changes if changes else UNDEFINED


def _ndcg_cut(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    rows, gains = gain_table(r, None)
    return [(f"ndcg_cut_{k}", _safe_div(dcg(r, rows, gains, k), ideal_dcg(r, k))) for k in cutoffs]


def _map_cut(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    return [(f"map_cut_{k}", average_precision(r, k)) for k in cutoffs]


def _relative_P(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    return [
        (f"relative_P_{k}", _safe_div(rel_in_top(r, k), np.minimum(r.num_rel, k))) for k in cutoffs
    ]


def _success(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    return [(f"success_{k}", (rel_in_top(r, k) > 0).astype(np.float64)) for k in cutoffs]


def _set_P(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("set_P", _safe_div(r.num_rel_ret, r.num_ret))]


def _set_relative_P(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("set_relative_P", _safe_div(r.num_rel_ret, np.minimum(r.num_ret, r.num_rel)))]


def _set_recall(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    return [("set_recall", _safe_div(r.num_rel_ret, r.num_rel))]


def _set_map(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    """rel_ret * rel_ret / (ret * rel), as trec_eval (not P * recall: the last bit differs)."""
    rel_ret = r.num_rel_ret.astype(np.float64)
    return [("set_map", _safe_div(rel_ret * rel_ret, r.num_ret * r.num_rel.astype(np.float64)))]


def f_measure(r: Ranked, beta_squared: float) -> np.ndarray:
    """(x + 1) P R / (x P + R) over the whole retrieved set (x = beta^2); 0 if undefined."""
    p = _safe_div(r.num_rel_ret, r.num_ret)
    rc = _safe_div(r.num_rel_ret, r.num_rel)
    ok = (r.num_ret > 0) & (r.num_rel > 0)
    return np.where(ok, _safe_div((beta_squared + 1.0) * p * rc, beta_squared * p + rc), 0.0)


def _set_F(r: Ranked, params: list[float]) -> list[tuple[str, Values]]:
    return [("set_F", f_measure(r, params[0]))]


def _rbp_gains(r: Ranked, t: int, pairs: dict[str, float]) -> dict[int, float]:
    levels = _level_gains(r, t, {int(k): v for k, v in pairs.items() if k != "p"})
    gains = {level: g for level, g, _ in levels}
    if gains:
        low, high = min(gains.values()), max(gains.values())
        if (low < 0 or high > 1) and high > low:
            gains = {k: (g - low) / (high - low) for k, g in gains.items()}
    return gains


def _rbp(r: Ranked, pairs: dict[str, float]) -> list[tuple[str, Values]]:
    """Moffat & Zobel: (1 - p) sum_i gain_i p^(i-1), gains scaled to [0, 1]."""
    p = pairs.get("p", 0.9)
    out = np.zeros(r.n_topics)
    for t in range(r.n_topics):
        gains = _rbp_gains(r, t, pairs)
        total, weight = 0.0, 1.0
        for v in r.topic_rels(t).tolist():
            g = gains.get(v, 0.0)
            if g != 0:
                total += g * weight
            weight *= p
        out[t] = (1.0 - p) * total
    return [("rbp", out)]


def _rbp_resid(r: Ranked, _: Any) -> list[tuple[str, Values]]:
    """RBP's residual (p = 0.9): weight of the unjudged ranks plus that past the end.

    0 when the ranking holds no unjudged document (as trec_eval).
    """
    p = 0.9
    out = np.zeros(r.n_topics)
    for t in range(r.n_topics):
        total, weight, unjudged = 0.0, 1.0, 0
        for v in r.topic_rels(t).tolist():
            if v < 0:
                unjudged += 1
                total += weight
            weight *= p
        out[t] = weight + (1.0 - p) * total if unjudged else 0.0
    return [("rbp_resid", out)]


def _unj(r: Ranked, cutoffs: list[int]) -> list[tuple[str, Values]]:
    unjudged = np.flatnonzero(r.rel < 0)
    pos = r.pos_of(unjudged)
    return [(f"unj_{k}", r.per_topic_count(unjudged[pos <= k]) / k) for k in cutoffs]
