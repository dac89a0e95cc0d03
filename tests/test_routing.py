"""The assignment policies (`workbench.routing`): the registry, each planner's invariants
(every document gets the judges the policy wants, nobody twice, balanced loads), incremental
planning, adaptive redundancy and gold documents in a queue."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property_examples import examples
from workbench import routing

NAMES = ["ann", "ben", "cat", "dan", "eve"]


def topics(*sizes: int) -> dict[str, list[str]]:
    return {f"T{i + 1}": [f"T{i + 1}-d{j:03d}" for j in range(n)] for i, n in enumerate(sizes)}


def judges_per_document(plan: routing.Plan) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for route in plan.routes:
        for docno in route.docnos:
            found[route.qid, docno].append(route.assessor)
    return found


def test_the_registry_parses_every_policy_and_generates_one_option_per_parameter() -> None:
    assert list(routing.POLICIES) == ["topics", "primary", "overlap", "adaptive"]
    for policy in routing.POLICIES.values():
        params = policy.parse({})
        assert params.describe()
        recorded = policy.record(params, 7)
        assert recorded["policy"] == policy.name and recorded["seed"] == 7
        assert policy.parse(recorded) == params  # the pool's record reads back
        assert routing.describe(recorded).startswith(f"{policy.name}: ")
    options = {f.name: f for f in routing.option_fields()}
    assert set(options) == {f.name for p in routing.POLICIES.values() for f in p.fields()}
    assert options["chunk"].policies == ("overlap", "adaptive")
    assert options["secondary_share"].kind is float and options["secondary_share"].maximum == 1.0


@pytest.mark.parametrize(
    ("policy", "values", "message"),
    [
        ("topics", {"judges_per_topic": "0"}, "between 1"),
        ("topics", {"judges_per_topic": "two"}, "an integer"),
        ("topics", {"judges_per_topic": 2.5}, "an integer"),
        ("topics", {"judges_per_topic": True}, "a number"),
        ("primary", {"secondary_share": "1.5"}, "between 0.0 and 1.0"),
        ("primary", {"secondary_share": "nan"}, "finite"),
        ("adaptive", {"max_judges": "1"}, "between 2"),
        ("nope", {}, "unknown assignment policy 'nope'"),
    ],
)
def test_bad_parameters_are_refused_with_a_message(policy, values, message) -> None:
    with pytest.raises(routing.RoutingError, match=message):
        routing.plan(policy, values, routing.Situation(topics(3)), NAMES)


def test_topics_policy_gives_each_topic_j_judges_largest_first_to_the_least_loaded() -> None:
    plan = routing.plan(
        "topics",
        {"judges_per_topic": 2},
        routing.Situation(topics(10, 6, 4)),
        ["ann", "ben", "cat"],
    )
    pairs = [(r.qid, r.assessor) for r in plan.routes]
    # T1 (10) to ann, ben; T2 (6) to cat and then ann/ben tie -> ann; T3 (4) to ben, cat
    assert pairs == [
        ("T1", "ann"),
        ("T1", "ben"),
        ("T2", "cat"),
        ("T2", "ann"),
        ("T3", "cat"),
        ("T3", "ben"),
    ]
    assert all(r.whole for r in plan.routes)
    assert plan.load() == {"ann": 16, "ben": 14, "cat": 10}
    with pytest.raises(routing.RoutingError, match="at least 4 assessors; got 3"):
        routing.plan(
            "topics", {"judges_per_topic": 4}, routing.Situation(topics(2)), ["ann", "ben", "cat"]
        )


@pytest.mark.parametrize("share", [0.0, 0.1, 0.25, 1.0])
def test_primary_policy_one_primary_per_topic_and_a_secondary_on_the_seeded_share(share) -> None:
    docs = topics(40, 23, 7)
    plan = routing.plan(
        "primary", {"secondary_share": share}, routing.Situation(docs), NAMES, seed=3
    )
    judges = judges_per_document(plan)
    for qid, docnos in docs.items():
        primaries = {r.assessor for r in plan.routes if r.qid == qid and r.role == "primary"}
        secondaries = [r for r in plan.routes if r.qid == qid and r.role == "secondary"]
        assert len(primaries) == 1
        assert all(judges[qid, d][0] in primaries for d in docnos)
        sampled = {d for r in secondaries for d in r.docnos}
        assert len(sampled) == math.ceil(share * len(docnos) - 1e-9)
        assert sampled == set(routing.topic_sample(3, qid, docnos, share))
        assert all(len(set(judges[qid, d])) == len(judges[qid, d]) for d in docnos)
        assert not (primaries & {r.assessor for r in secondaries})
    again = routing.plan(
        "primary", {"secondary_share": share}, routing.Situation(docs), NAMES, seed=3
    )
    assert again == plan  # seeded
    if 0 < share < 1:
        other = routing.plan(
            "primary", {"secondary_share": share}, routing.Situation(docs), NAMES, seed=4
        )
        assert judges_per_document(other) != judges  # another seed, another sample


@settings(max_examples=examples(60), deadline=None)
@given(
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=6),
    k=st.integers(1, 3),
    chunk=st.integers(1, 30),
    assessors=st.integers(3, 7),
)
def test_overlap_gives_every_document_k_distinct_judges_and_balances_loads(
    sizes, k, chunk, assessors
) -> None:
    names = [f"a{i}" for i in range(assessors)]
    docs = topics(*sizes)
    plan = routing.plan(
        "overlap",
        {"judges_per_document": k, "chunk": chunk},
        routing.Situation(docs),
        names,
        seed=1,
    )
    judges = judges_per_document(plan)
    assert set(judges) == {(q, d) for q, ds in docs.items() for d in ds}
    assert all(len(j) == k and len(set(j)) == k for j in judges.values())
    assert not plan.short
    loads = [plan.load().get(n, 0) for n in names]
    # greedy LPT over chunks: the spread stays within one chunk of each other
    assert max(loads) - min(loads) <= chunk


def test_planning_is_incremental_and_never_gives_a_document_twice_or_to_a_barred_judge() -> None:
    docs = topics(12)
    first = routing.plan(
        "overlap",
        {"judges_per_document": 2, "chunk": 4},
        routing.Situation(docs),
        ["ann", "ben", "cat"],
    )
    holders = {k: frozenset(v) for k, v in judges_per_document(first).items()}
    # the pool was extended by 3 documents; ann already judged one of them elsewhere
    extended = {"T1": [*docs["T1"], "new1", "new2", "new3"]}
    situation = routing.Situation(
        extended,
        holders=holders,
        barred={("T1", "new1"): frozenset({"ann"})},
        load=first.load(),
    )
    second = routing.plan(
        "overlap", {"judges_per_document": 2, "chunk": 4}, situation, ["ann", "ben", "cat"]
    )
    added = judges_per_document(second)
    assert set(added) == {("T1", "new1"), ("T1", "new2"), ("T1", "new3")}
    assert all(len(set(v)) == 2 for v in added.values())
    assert "ann" not in added["T1", "new1"]
    # with only two assessors and ann barred, new1 is one judge short, and says so
    short = routing.plan(
        "overlap", {"judges_per_document": 2, "chunk": 4}, situation, ["ann", "ben"]
    )
    assert short.short == {("T1", "new1"): 1}


@pytest.mark.parametrize(
    ("grades", "judges", "distance", "max_judges", "wanted"),
    [
        ([1, 1], 2, 0, 3, False),
        ([0, 1], 2, 0, 3, True),
        ([0, 1], 2, 1, 3, False),  # within the distance
        ([0, 2], 2, 1, 3, True),
        ([0, 1, 1], 3, 0, 3, False),  # the maximum is reached
        ([0, 1, 2], 3, 0, 4, True),
        ([1], 2, 0, 3, False),  # one grade, one 'cannot judge': nothing to compare
    ],
)
def test_adaptive_redundancy_wants_another_judge_only_on_disagreement(
    grades, judges, distance, max_judges, wanted
) -> None:
    params = routing.AdaptiveParams(distance=distance, max_judges=max_judges)
    assert routing.needs_another_judge(grades, judges, params) is wanted


def test_adaptive_policy_starts_with_two_judges_per_document() -> None:
    plan = routing.plan("adaptive", {}, routing.Situation(topics(30)), NAMES)
    assert Counter(len(j) for j in judges_per_document(plan).values()) == {2: 30}


def test_gold_documents_join_a_queue_at_seeded_places_without_moving_the_others() -> None:
    own = [f"d{i}" for i in range(20)]
    assert routing.gold_count(20, 0.0) == 0
    assert routing.gold_count(18, 0.1) == 2  # 2 of 20: a tenth of the queue
    assert routing.gold_count(45, 0.1) == 5
    candidates = ["g1", "g2", "g3", "g4", "d3"]  # d3 is the assessor's own: never gold
    chosen = routing.gold_for_queue(own, candidates, 0.1, 5, 1, "T1", 9)
    assert len(chosen) == 2 and "d3" not in chosen
    assert routing.gold_for_queue(own, candidates, 0.1, 5, 1, "T1", 9) == chosen
    mixed = routing.mix_in(own, chosen, 5, 1, "T1", 9)
    assert sorted(mixed) == sorted(own + chosen)
    assert [d for d in mixed if d not in chosen] == own
    assert routing.mix_in([], ["g1"], 5) == ["g1"]
