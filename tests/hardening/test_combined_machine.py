"""Machine judges meeting adaptive pools, routed pools and gold documents: the hybrid pools
(human sample, disagreement review) made from such pools are ordinary pools, the machine's
hybrid qrels treat gold documents as the human qrels do, and assessors never see either."""

from __future__ import annotations

import io

from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World, get_store_of
from workbench.services import (
    adaptive_pools,
    assignments,
    gold,
    judging,
    machine_hybrid,
    machine_judges,
    qrels,
    routing,
    users,
)
from workbench.store.models import (
    Assignment,
    Campaign,
    MachineJudgement,
    Pool,
    PoolEntry,
    QrelsEntry,
    QrelsSet,
)


def _label_all(s, campaign: Campaign, pool: Pool, grades: dict[str, int]) -> object:  # type: ignore[no-untyped-def]
    """A machine judge with a label on every sampled document of `pool` (grade by docno)."""
    judge = machine_judges.add_judge(s, campaign, model="m", base_url="http://127.0.0.1:9/v1")
    entries = s.scalars(select(PoolEntry).where(PoolEntry.pool_id == pool.id,
                                                PoolEntry.sampled.is_(True)))  # fmt: skip
    for e in entries:
        s.add(MachineJudgement(judge_id=judge.id, campaign_id=campaign.id, qid=e.qid,
                               docno=e.docno, grade=grades.get(e.docno, 0),
                               cache_key=f"{e.qid}{e.docno}", template_hash="h"))  # fmt: skip
    s.flush()
    return judge


def test_a_human_sample_of_an_adaptive_pool_is_an_ordinary_pool(app: Flask, world: World) -> None:
    """The sample pool copies the documents the strategy revealed, not the adaptive settings:
    its assessors judge the sample, and it has no adaptive topics to advance."""
    store = get_store_of(app)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        pool = adaptive_pools.build_adaptive_pool(s, c, method="mm", budget=6, depth=6,
                                                  batch=2, secondary_share=0.0, seed=11,
                                                  sample_share=0.5)  # fmt: skip
        judge = _label_all(s, c, pool, {"D1": 2, "D2": 1})
        sample = machine_hybrid.create_sample_pool(s, c, judge, design="uniform", share=1.0,
                                                   pool_number=pool.number)  # fmt: skip
        assert adaptive_pools.settings_of(sample) is None
        assert "routing" not in sample.params
        made = assignments.assign(s, sample, "T1", users.get_user(s, "carol"), order="docno").id
        expected = sorted(
            s.scalars(
                select(PoolEntry.docno).where(
                    PoolEntry.pool_id == sample.id,
                    PoolEntry.qid == "T1",
                    PoolEntry.sampled.is_(True),
                )
            )
        )
    with store.read_session() as s:
        assert judging.document_sequence(s, s.get(Assignment, made)) == expected
    assert adaptive_pools.advance(store, made, world.users["carol"]) == []


def test_a_review_pool_of_a_routed_pool_is_not_routed(app: Flask, world: World) -> None:
    """The review pool's documents go to whoever it is assigned to: it inherits neither the
    source pool's routing policy nor its assessors."""
    store = get_store_of(app)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        pool = s.get(Pool, world.pool_id)
        for a in s.scalars(select(Assignment).where(Assignment.pool_id == pool.id)).all():
            assignments.unassign(s, a)
        routing.apply_policy(
            s,
            pool,
            "adaptive",
            {"distance": 0, "max_judges": 3},
            assessors=[users.get_user(s, n) for n in ("carol", "bob")],
        )
        _label_all(s, c, pool, {})
        carol = users.get_user(s, "carol")
        mine = s.scalars(
            select(Assignment).where(
                Assignment.pool_id == pool.id,
                Assignment.user_id == carol.id,
                Assignment.active.is_(True),
            )
        ).all()
        queues = [(a.id, judging.document_sequence(s, a)) for a in mine]
    with store.connection() as connection:
        for assignment_id, docs in queues:
            for docno in docs:  # carol says relevant where the machine says 0
                judging.record_judgement(connection, assignment_id, world.users["carol"],
                                         judging.JudgementInput(docno, 2))  # fmt: skip
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.get_judge(s, c, "machine:m")
        review, count = machine_hybrid.create_review_pool(s, c, judge)
        assert count >= 1
        assert routing_params(review) is None
        assert adaptive_pools.settings_of(review) is None
        assert not routing.grows(s, review.id)


def test_a_human_sample_of_a_stratified_pool_gets_no_silent_estimate(
    app: Flask, world: World
) -> None:
    """A machine judge's human sample is drawn from the source pool's sampled documents with
    probabilities of its own: `workbench estimate` refuses it with the reason rather than read
    its strata and probabilities as those of the source's design."""
    from workbench.services import estimates
    from workbench.services import pools as pool_service
    from workbench.services.errors import ServiceError

    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        source = pool_service.build_pool(s, c, strategy="stratified", strata="2:1.0,6:0.5",
                                         seed=4)  # fmt: skip
        judge = _label_all(s, c, source, {"D1": 2})
        labels = QrelsSet(campaign_id=c.id, name="truth", source="test")
        s.add(labels)
        s.flush()
        s.add_all(
            QrelsEntry(qrels_set_id=labels.id, qid=q, docno=f"D{i}", iteration="0", rel=int(i == 1))
            for q in ("T1", "T2")
            for i in range(1, 9)
        )
        sample = machine_hybrid.create_sample_pool(s, c, judge, design="uniform", share=0.5,
                                                   pool_number=source.number)  # fmt: skip
        try:
            estimates.pool_estimates(s, c, sample.number, qrels_spec="truth")
        except ServiceError as error:
            assert "machine" in str(error) and "sample" in str(error), str(error)
        else:
            raise AssertionError("an estimate from a machine judge's human sample")


def routing_params(pool: Pool) -> object:
    return (pool.params or {}).get("routing")


def test_hybrid_qrels_give_a_pooled_gold_document_its_gold_grade(app: Flask, world: World) -> None:
    """Gold judgements stay out of the human qrels, which label a pooled gold document with its
    gold grade; the hybrid qrels take that human label, never the machine's."""
    store = get_store_of(app)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        pool = s.get(Pool, world.pool_id)
        gold.mark(s, c, [gold.GoldItem("T1", "D1", 2, "known")])
        judge = _label_all(s, c, pool, {"D1": 0})
        human, _ = qrels.qrels_labels(s, c)
        combined = machine_hybrid.combined_qrels(s, c, judge, combination="hybrid")
    assert human[("T1", "D1")] == 2
    assert combined.labels[("T1", "D1")] == 2
    assert combined.sources[("T1", "D1")] == "human"


def test_hybrid_qrels_of_an_adaptive_pool_say_how_it_was_judged_and_keep_its_holes(
    app: Flask, world: World
) -> None:
    """The human qrels of a campaign with an adaptive pool open with its provenance and hold
    -1 for the pooled documents never revealed; the machine's hybrid (and machine) qrels over
    the same campaign say the same, and do not drop those documents."""
    store = get_store_of(app)
    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        pool = s.get(Pool, world.pool_id)
        for a in s.scalars(select(Assignment).where(Assignment.pool_id == pool.id)).all():
            assignments.unassign(s, a)
        s.delete(pool)
        adaptive = adaptive_pools.build_adaptive_pool(s, c, method="mm", budget=4, depth=6,
                                                      batch=2, secondary_share=0.0, seed=11,
                                                      sample_share=0.5)  # fmt: skip
        made = assignments.assign(s, adaptive, "T1", users.get_user(s, "alice")).id
        judge = _label_all(s, c, adaptive, {"D2": 2})
        hidden = sorted(s.execute(select(PoolEntry.qid, PoolEntry.docno).where(
            PoolEntry.pool_id == adaptive.id, PoolEntry.sampled.is_(False))).all())  # fmt: skip
    with store.read_session() as s:
        queue = judging.document_sequence(s, s.get(Assignment, made))
    with store.connection() as connection:
        for docno in queue:
            judging.record_judgement(connection, made, world.users["alice"],
                                     judging.JudgementInput(docno, 1))  # fmt: skip
    with store.read_session() as s:
        c = s.get(Campaign, world.campaign_id)
        human = qrels.campaign_qrels(s, c, allow_incomplete=True)
        judge = machine_judges.get_judge(s, c, "machine:m")
        combined = {
            how: machine_hybrid.combined_qrels(s, c, judge, combination=how)
            for how in ("hybrid", "machine")
        }
    assert hidden and all(human.qrels[q][d] == qrels.UNSAMPLED for q, d in hidden)
    assert any("not a random sample" in note for note in human.warnings())
    for how, result in combined.items():
        assert result.provenance == human.provenance and result.provenance, how
        assert all(result.qrels[q][d] == qrels.UNSAMPLED for q, d in hidden), how
    # binarised, the -1 stay -1 (as in the campaign's own qrels export)
    from workbench.services import machine_exports

    with store.read_session() as s:
        c = s.get(Campaign, world.campaign_id)
        out = io.StringIO()
        machine_exports.write_qrels(s, c, out, {"judge": "machine:m", "binary_level": 1,
                                                "combination": "hybrid"})  # fmt: skip
    lines = [line.split() for line in out.getvalue().splitlines()]  # plain qrels
    assert sorted((q, d) for q, _, d, rel in lines if rel == "-1") == hidden
    # saved as a qrels set, the -1 go with it, and the campaign evaluates on it
    from click.testing import CliRunner

    from workbench.cli import main

    with store.session() as s:
        c = s.get(Campaign, world.campaign_id)
        judge = machine_judges.get_judge(s, c, "machine:m")
        combined = machine_hybrid.combined_qrels(s, c, judge, combination="hybrid")
        saved = machine_hybrid.save_qrels_set(s, c, combined, "hybrid-m")
        minus = s.scalars(select(QrelsEntry.docno).where(QrelsEntry.qrels_set_id == saved.id,
                                                         QrelsEntry.rel == -1)).all()  # fmt: skip
    assert len(minus) == len(hidden)
    result = CliRunner().invoke(main, ["--db", str(store.engine.url.render_as_string(
        hide_password=False)), "evaluate", "--campaign", "c1", "--qrels", "hybrid-m"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "runA" in result.output and "runB" in result.output
