"""Presentation orders: the order in which one assessor sees one topic's pooled documents
(a judging concern; the pool itself is `pooling`'s). Pure: the seeded permutation uses
`pooling.topic_rng`, so it depends on the seed and the keys alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.pooling import topic_rng

PRESENTATION_ORDERS = ("random", "docno", "priority")


def presentation_order(
    docnos: Sequence[str],
    *,
    mode: str = "random",
    seed: int,
    pool_id: int,
    qid: str,
    assessor_id: int,
    builds: Sequence[int] | None = None,
    priorities: Sequence[float] | None = None,
) -> list[str]:
    """The order in which one assessor sees one topic's pooled documents.

    Documents of earlier builds always come first, so extending a pool never moves what an
    assessor has already seen. Within a build: 'random' is a permutation of the docno-sorted
    documents seeded by (seed, pool, topic, assessor, build); 'docno' sorts by docno;
    'priority' by priority descending, ties by docno. Rank and system never enter.
    """
    if mode not in PRESENTATION_ORDERS:
        raise ValueError(f"unknown order {mode!r}; expected one of {PRESENTATION_ORDERS}")
    n = len(docnos)
    builds = list(builds) if builds is not None else [0] * n
    if mode == "priority" and priorities is None:
        raise ValueError("the 'priority' order needs the documents' priorities")
    if len(builds) != n or (priorities is not None and len(priorities) != n):
        raise ValueError("docnos, builds and priorities must have the same length")
    by_build: dict[int, list[int]] = {}
    for i, build in enumerate(builds):
        by_build.setdefault(build, []).append(i)
    ordered: list[str] = []
    for build in sorted(by_build):
        members = sorted(by_build[build], key=lambda i: docnos[i])
        if mode == "random":
            rng = topic_rng(seed, "present", pool_id, qid, assessor_id, build)
            members = [members[i] for i in rng.permutation(len(members))]
        elif mode == "priority" and priorities is not None:  # None was refused above
            members.sort(key=lambda i: -priorities[i])
        ordered.extend(docnos[i] for i in members)
    return ordered
