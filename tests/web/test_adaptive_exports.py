"""What an adaptive pool leaves in the exports and the evaluation page: its strategy, its
budgets, and the warning that the unjudged pooled documents are not a random sample."""

from __future__ import annotations

from tests.web.test_adaptive_pools import _adaptive_world, _judge
from workbench.services import adaptive_pools, adaptive_provenance
from workbench.store.models import Campaign, Pool

HEADER = (
    "# ADAPTIVE pool 2 judged adaptively: method mm, budget 4 judgements per topic; the "
    "pooled documents left unjudged are not a random sample.\n"
)


def test_qrels_and_the_log_record_the_strategy_and_budget(app, world, as_user):
    admin = as_user("admin")
    base = f"/api/v1/campaigns/{world.campaign_id}"
    qrels = f"{base}/export/qrels?assessor=alice&allow_incomplete=1"
    before = admin.get(qrels).text
    assert "ADAPTIVE" not in before
    assert admin.get(f"{base}/adaptive-provenance").get_json()["adaptive_pools"] == []
    store, pool_id, made = _adaptive_world(app, world)
    assert pool_id == 2
    assert adaptive_pools.advance(store, made["alice"], world.users["alice"]) == ["D1", "D2"]
    _judge(store, made["alice"], world.users["alice"], "D1", 2)
    download = admin.get(qrels)
    after = download.text  # plain qrels: the provenance is in the JSON and the CLI's warnings
    assert "#" not in after and "T1 0 D1 2\n" in after
    assert "incomplete" in download.headers["Content-Disposition"]
    log = admin.get(f"{base}/export/log?format=csv").text
    assert log.startswith(HEADER) and log[len(HEADER) :].startswith("id,assessor,qid,docno")
    with store.session() as s:  # a raised budget and a stopped topic are recorded too
        pool = s.get(Pool, pool_id)
        adaptive_pools.set_budget(s, pool, 6, "T1")
        adaptive_pools.stop_topic(s, pool, "T2")
    described = (
        "pool 2 judged adaptively: method mm, budget 4 judgements per topic (topic T1: 6); "
        "stopped early: topic(s) T2"
    )
    assert "#" not in admin.get(qrels).text
    document = admin.get(f"{base}/adaptive-provenance").get_json()
    assert document == {
        "campaign": world.campaign_id,
        "adaptive_pools": [
            {
                "pool": 2,
                "method": "mm",
                "strategy": "mm",  # the old key, kept for API clients
                "budget": 4,
                "raised": {"T1": 6},
                "stopped": ["T2"],
                "sample_share": 0.0,
                "description": described,
            }
        ],
    }
    assert as_user("alice").get(f"{base}/adaptive-provenance").status_code == 403


def test_the_evaluation_page_warns_as_the_command_line_does(app, world, as_user):
    admin = as_user("admin")
    page = f"/reports/{world.campaign_id}/evaluation?measures=map&allow_incomplete=1"
    assert 'id="adaptive-warning"' not in admin.get(page).text
    store, _, _ = _adaptive_world(app, world)
    with store.read_session() as s:
        expected = adaptive_provenance.evaluation_warning(s, s.get(Campaign, world.campaign_id))
    assert expected is not None and expected.startswith("pool(s) 2 judged adaptively")
    text = admin.get(page).text
    assert 'id="adaptive-warning"' in text
    assert f"Warning: {expected}." in text
