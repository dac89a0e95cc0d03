"""A seeded click simulator: query logs for tests and examples, made from qrels and runs.

No real query log is public offline, so this one is made up from what a campaign has.  Each
impression shows the top ``depth`` documents of one run (drawn uniformly, as in an A/B test of
the systems) for one topic, to one of ``n_users`` users, and clicks follow a click model:

* ``pbm`` (position-based model, Richardson et al. 2007; Craswell et al. 2008): the user
  examines rank p with probability exam(p) = (1 / p) ** eta and clicks an examined document of
  grade g with probability attract(g); examination and attraction are independent.
* ``cascade`` (Craswell, Zoeter, Taylor & Ramsey, WSDM 2008, with the dependent-click
  extension of Guo et al. 2009): the user reads top-down, clicks with attract(g), and after a
  click stops with probability satisfy(g); without a click they read on.

attract(g) = noise + (1 - 2 noise) g / g_max: a non-relevant document is clicked with
probability ``noise`` (snippets mislead) and the best one with 1 - noise.  satisfy(g) =
g / g_max * 0.8.  Click times follow the reading order (3 s per rank read); the dwell on a
clicked document is long (60 s) when it satisfies and short (5 s) otherwise, so the
dwell-time signal has something to find.  The query text is the topic's title as typed: some
users type it in capitals or with extra spaces, which normalisation undoes.

Usage: ``python examples/click_simulator.py QRELS TOPICS_TSV RUN... -o log.jsonl
[--model pbm|cascade] [--impressions 50] [--users 40] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.clicks import Click, Impression
from workbench.pooling import ranked_list, topic_rng
from workbench.trec import read_qrels, read_run

MODELS = ("pbm", "cascade")
START_TIME = 1_767_225_600.0  # 2026-01-01T00:00:00Z
READ_SECONDS = 3.0
SATISFIED_DWELL = 60.0
SHORT_DWELL = 5.0


@dataclass(frozen=True)
class ClickModel:
    """``model`` (pbm or cascade), exam(p) = (1/p)**eta, click noise, the top grade."""

    model: str = "pbm"
    eta: float = 1.0
    noise: float = 0.1
    max_grade: int = 1

    def examination(self, rank: int) -> float:
        return float((1.0 / rank) ** self.eta)

    def attraction(self, grade: int) -> float:
        g = min(max(grade, 0), self.max_grade) / self.max_grade
        return self.noise + (1 - 2 * self.noise) * g

    def satisfaction(self, grade: int) -> float:
        return 0.8 * min(max(grade, 0), self.max_grade) / self.max_grade


def _typed(title: str, rng: np.random.Generator) -> str:
    """The title as a user types it: as is, in capitals, or with doubled spaces."""
    choice = rng.integers(0, 4)
    if choice == 1:
        return title.upper()
    if choice == 2:
        return "  ".join(title.split()) + " "
    return title


def _clicks(
    shown: Sequence[str],
    grades: Mapping[str, int],
    model: ClickModel,
    rng: np.random.Generator,
    t0: float,
) -> tuple[list[Click], float]:
    """The clicks on one result list and the time the user leaves it."""
    clicks: list[Click] = []
    t = t0
    for rank, docno in enumerate(shown, 1):
        grade = grades.get(docno, 0)
        examined = model.model == "cascade" or rng.random() < model.examination(rank)
        t += READ_SECONDS
        if not examined or rng.random() >= model.attraction(grade):
            continue
        clicks.append(Click(docno, t))
        satisfied = rng.random() < model.satisfaction(grade)
        t += SATISFIED_DWELL if satisfied else SHORT_DWELL
        if model.model == "cascade" and satisfied:
            break
    return clicks, t


def simulate(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    titles: Mapping[str, str],
    *,
    model: ClickModel = ClickModel(),
    impressions_per_topic: int = 50,
    depth: int = 10,
    n_users: int = 40,
    seed: int = 1,
) -> list[Impression]:
    """Impressions for every topic in ``titles`` that some run retrieves, topic by topic;
    ``query`` is the text as typed, ``session`` one per impression, times increasing."""
    if model.model not in MODELS:
        raise ValueError(f"unknown click model {model.model!r}; expected one of {MODELS}")
    tags = sorted(runs)
    lists: dict[tuple[str, str], list[str]] = {}
    for tag in tags:
        for qid, scores in runs[tag].items():
            docnos = list(scores)
            lists[tag, qid] = list(
                ranked_list(docnos, np.array([scores[d] for d in docnos]), limit=depth).docnos
            )
    out: list[Impression] = []
    t = START_TIME
    for qid in titles:
        available = [tag for tag in tags if lists.get((tag, qid))]
        if not available:
            continue
        rng = topic_rng(seed, model.model, qid)
        grades = qrels.get(qid, {})
        for k in range(impressions_per_topic):
            shown = lists[available[rng.integers(0, len(available))], qid]
            user = f"user{rng.integers(0, n_users):03d}"
            clicks, leave = _clicks(shown, grades, model, rng, t)
            out.append(
                Impression(
                    _typed(titles[qid], rng),
                    tuple(shown),
                    tuple(clicks),
                    session=f"s-{qid}-{k}",
                    user=user,
                    time=t,
                )
            )
            t = leave + 1.0
    return out


def pair_order_accuracy(
    scores: Mapping[tuple[str, str], float], qrels: Mapping[str, Mapping[str, int]]
) -> float:
    """Share of (relevant, non-relevant) document pairs of a query, both scored, where the
    relevant one scores higher (ties count one half): how well a click signal orders documents
    as the assessors would.  Unjudged documents count as non-relevant."""
    by_query: dict[str, list[tuple[float, bool]]] = {}
    for (query, docno), score in scores.items():
        by_query.setdefault(query, []).append((score, qrels.get(query, {}).get(docno, 0) > 0))
    wins = pairs = 0.0
    for rows in by_query.values():
        relevant = [s for s, r in rows if r]
        other = np.array([s for s, r in rows if not r])
        for s in relevant:
            wins += float(np.sum(s > other) + 0.5 * np.sum(s == other))
            pairs += len(other)
    return wins / pairs if pairs else float("nan")


def to_json_line(imp: Impression) -> str:
    """One impression in the JSONL query-log format that ``workbench querylog import`` reads."""
    return json.dumps(
        {
            "session": imp.session,
            "user": imp.user,
            "query": imp.query,
            "time": imp.time,
            "results": [{"docno": d, "rank": r} for r, d in enumerate(imp.results, 1)],
            "clicks": [{"docno": c.docno, "time": c.time} for c in imp.clicks],
        },
        ensure_ascii=False,
    )


def write_log(impressions: Sequence[Impression], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for imp in impressions:
            f.write(to_json_line(imp) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels", type=Path)
    parser.add_argument("topics", type=Path, help="TSV: qid<TAB>title")
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--model", choices=MODELS, default="pbm")
    parser.add_argument("--impressions", type=int, default=50)
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    qrels = read_qrels(args.qrels).to_dict()
    titles = dict(
        line.split("\t", 1) for line in args.topics.read_text(encoding="utf-8").splitlines()
    )
    runs = {}
    for path in args.runs:
        run = read_run(path)
        runs[run.tag] = run.to_dict()
    max_grade = max((g for docs in qrels.values() for g in docs.values()), default=1) or 1
    impressions = simulate(
        qrels,
        runs,
        titles,
        model=ClickModel(args.model, noise=args.noise, max_grade=max_grade),
        impressions_per_topic=args.impressions,
        n_users=args.users,
        seed=args.seed,
    )
    write_log(impressions, args.output)
    print(f"{len(impressions)} impressions written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
