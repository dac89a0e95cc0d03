"""`workbench estimate` and services.estimates: a stratified pool of one stratum is a uniform
sample, whose xinfAP is trec_eval's infAP and whose judged-only MAP is trec_eval's map on the
same qrels; pools that are no sample are refused with the reason."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from workbench.cli import main
from workbench.metrics import evaluate
from workbench.trec import Qrels, read_run

TOPICS = [str(401 + t) for t in range(4)]


def _write_world(tmp_path):
    rng = np.random.default_rng(3)
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q}\n" for q in TOPICS))
    docs = [f"D{i:03d}" for i in range(60)]
    truth = {q: {d: int(rng.random() < 0.3) for d in docs} for q in TOPICS}
    runs = []
    for r in range(4):
        path = tmp_path / f"run{r}.txt"
        lines = []
        for q in TOPICS:
            ranked = rng.permutation(docs)[:25]
            lines += [f"{q} Q0 {d} {i} {25 - i} run{r}\n" for i, d in enumerate(ranked, 1)]
        path.write_text("".join(lines))
        runs.append(path)
    return topics, runs, truth


def _cli(database_url, *args):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["--db", database_url, *args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def sampled_campaign(database_url, tmp_path):
    topics, runs, truth = _write_world(tmp_path)
    _cli(database_url, "campaign", "create", "est", "--scale", "0=no,1=yes")
    _cli(database_url, "import", "topics", "--campaign", "est", str(topics))
    _cli(database_url, "import", "runs", "--campaign", "est", *map(str, runs))
    return tmp_path, runs, truth


def _qrels_from_pool(database_url, tmp_path, truth, runs):
    """The pool's sampled documents (`export pool`) labelled from truth, the rest of the
    depth-25 universe -1 (pooled, not sampled: trec_eval's infAP convention)."""
    exported = tmp_path / "pool.txt"
    _cli(database_url, "export", "pool", "--campaign", "est", "-o", str(exported))
    sampled = {tuple(line.split()) for line in exported.read_text().splitlines()}
    universe = {(line.split()[0], line.split()[2]) for path in runs
                for line in path.read_text().splitlines()}  # fmt: skip
    lines = [f"{q} 0 {d} {truth[q][d] if (q, d) in sampled else -1}\n"
             for q, d in sorted(universe)]  # fmt: skip
    path = tmp_path / "sampled.qrels"
    path.write_text("".join(lines))
    return path


def test_a_uniform_pool_gives_trec_evals_infap_and_map(database_url, sampled_campaign):
    tmp_path, runs, truth = sampled_campaign
    _cli(database_url, "pool", "build", "--campaign", "est", "--strategy", "stratified",
         "--strata", "25:0.4", "--seed", "5")  # fmt: skip
    qrels_path = _qrels_from_pool(database_url, tmp_path, truth, runs)
    result = _cli(database_url, "estimate", "--campaign", "est", "--qrels", str(qrels_path),
                  "--bootstrap", "20", "--format", "json")  # fmt: skip
    document = json.loads(result.output)
    assert document["design"] == "stratified" and len(document["topics"]) == 4
    qrels = Qrels.from_dict({
        q: {d: int(g) for d, g in (line.split()[2:4] for line in qrels_path.read_text()
                                     .splitlines() if line.startswith(q + " "))}
        for q in TOPICS
    })  # fmt: skip
    for row in document["runs"]:
        run = read_run(next(p for p in runs if p.stem == row["tag"]))
        reference = evaluate(qrels, run, ["infAP", "map"]).per_topic
        infap = np.mean([reference[q]["infAP"] for q in TOPICS])
        ap = np.mean([reference[q]["map"] for q in TOPICS])
        assert row["xinfap"]["estimate"] == pytest.approx(infap, abs=1e-12)
        assert row["judged_map"] == pytest.approx(ap, abs=1e-12)
        assert row["statap"]["low"] <= row["statap"]["estimate"] <= row["statap"]["high"]
    topic = document["topics"][0]
    assert topic["left"]["method"] == "exact hypergeometric"
    text = _cli(database_url, "estimate", "--campaign", "est", "--qrels", str(qrels_path),
                "--bootstrap", "20").output  # fmt: skip
    assert "MAP estimated from the sample of pool 1 of est (stratified)" in text
    assert "Relevant documents per topic" in text


def test_a_prior_pool_is_estimated_by_statap(database_url, sampled_campaign):
    tmp_path, runs, truth = sampled_campaign
    _cli(database_url, "pool", "build", "--campaign", "est", "--strategy", "prior",
         "--budget", "15", "--depth", "25", "--seed", "2")  # fmt: skip
    qrels_path = _qrels_from_pool(database_url, tmp_path, truth, runs)
    document = json.loads(
        _cli(
            database_url,
            "estimate",
            "--campaign",
            "est",
            "--qrels",
            str(qrels_path),
            "--bootstrap",
            "10",
            "--format",
            "json",
        ).output
    )
    assert document["design"] == "prior"
    assert all(r["xinfap"] is None for r in document["runs"])
    assert all(t["left"] is None for t in document["topics"])


def test_pools_that_are_no_sample_and_incomplete_samples_are_refused(
    database_url, sampled_campaign
):
    tmp_path, _, truth = sampled_campaign
    _cli(database_url, "pool", "build", "--campaign", "est", "--depth", "5")
    qrels = tmp_path / "full.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in TOPICS for d, g in truth[q].items()))
    refused = CliRunner().invoke(main, ["--db", database_url, "estimate", "--campaign", "est",
                                        "--qrels", str(qrels)])  # fmt: skip
    assert refused.exit_code == 1 and "is not a sample" in refused.output
    _cli(database_url, "pool", "build", "--campaign", "est", "--adaptive", "mm",
         "--budget", "5", "--depth", "5")  # fmt: skip
    adaptive = CliRunner().invoke(main, ["--db", database_url, "estimate", "--campaign", "est",
                                         "--qrels", str(qrels)])  # fmt: skip
    assert adaptive.exit_code == 1 and "without a reserved sample" in adaptive.output
    _cli(database_url, "pool", "build", "--campaign", "est", "--strategy", "stratified",
         "--strata", "25:0.4")  # fmt: skip
    empty = tmp_path / "empty.qrels"
    empty.write_text(f"{TOPICS[0]} 0 D000 1\n")
    holes = CliRunner().invoke(main, ["--db", database_url, "estimate", "--campaign", "est",
                                      "--qrels", str(empty)])  # fmt: skip
    assert holes.exit_code == 1 and "have no label in these qrels" in holes.output


def test_an_adaptive_pool_with_a_reserved_sample_is_estimated(database_url, sampled_campaign):
    from workbench import adaptive
    from workbench.services import estimates, pools
    from workbench.services.campaigns import get_campaign
    from workbench.store import open_store
    from workbench.store.models import AdaptiveTopic, PoolEntry

    tmp_path, _, truth = sampled_campaign
    _cli(database_url, "pool", "build", "--campaign", "est", "--adaptive", "mm", "--budget", "10",
         "--depth", "25", "--sample-share", "0.5", "--seed", "4")  # fmt: skip
    store = open_store(database_url)
    with store.session() as s:  # the strategy chose its 5 per topic (free ones on the way)
        campaign = get_campaign(s, "est")
        pool = pools.get_pool(s, campaign)
        for topic in s.query(AdaptiveTopic).filter_by(pool_id=pool.id):
            universe = adaptive.TopicPool.build(
                pools.topic_ranked_lists(s, pools.pool_runs(s, pool), topic.qid, 25), 25
            )
            reserved = [e.docno for e in s.query(PoolEntry).filter_by(
                pool_id=pool.id, qid=topic.qid, sampled=True, build=0)]  # fmt: skip
            chosen = adaptive.choose(
                "mm", universe, [], 5, free={d: truth[topic.qid][d] == 1 for d in reserved}
            )
            topic.choices = chosen.order
    qrels = tmp_path / "full.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q in TOPICS for d, g in truth[q].items()))
    with store.session() as s:
        result = estimates.pool_estimates(s, get_campaign(s, "est"), qrels_spec=str(qrels),
                                          replicates=20, allow_files=True)  # fmt: skip
    store.dispose()
    assert result.design == "adaptive + reserved sample"
    for topic in result.topics:
        assert topic.left is not None and topic.left.low <= topic.left.estimate
        true_left = sum(truth[topic.qid].values())  # relevant in the whole pool, at least
        assert topic.judged_relevant <= true_left


def test_map_and_its_interval_are_cut_to_maps_range() -> None:
    """Two topics' statAP 1.2 and 0.9 (a small sample's Horvitz-Thompson estimates may pass
    1): MAP-hat 1.05 and its interval 1.05 -/+ 1.96 sqrt(0.05) / 2 are shown within [0, 1];
    an interval inside the range is left as it is."""
    from workbench.services.estimates import map_interval

    cut = map_interval([1.2, 0.9], [0.04, 0.01], 1.96)
    assert (cut.estimate, cut.high) == (1.0, 1.0)
    assert cut.low == pytest.approx(1.05 - 1.96 * np.sqrt(0.05) / 2)
    inside = map_interval([0.3, 0.5], [0.0004, 0.0005], 1.96)
    assert (inside.estimate, inside.low, inside.high) == pytest.approx(
        (0.4, 0.4 - 1.96 * np.sqrt(0.0009) / 2, 0.4 + 1.96 * np.sqrt(0.0009) / 2)
    )
    assert map_interval([0.0, 0.01], [0.01, 0.01], 1.96).low == 0.0
