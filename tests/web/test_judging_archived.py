"""A submit to an archived campaign or pool is refused (409, with the reason), also on the
submit's one-statement fast path and when another process did the archiving."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import World, get_store_of
from workbench.services import archive
from workbench.store import open_store
from workbench.store.models import Campaign, Judgement, Pool


def _submit(client, world: World, docno: str, client_id: str):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": docno, "grade": 1, "client_id": client_id},
    )


def _stored(app: Flask) -> int:
    with get_store_of(app).read_session() as s:
        return s.scalar(select(func.count()).select_from(Judgement)) or 0


def _archive(admin, kind: str, object_id: int, archived: bool = True) -> None:  # type: ignore[no-untyped-def]
    response = admin.post(
        f"/admin/archive/{kind}/{object_id}", data={"archived": "1" if archived else "0"}
    )
    assert response.status_code == 303, response.text


def test_a_submit_to_an_archived_campaign_is_refused_until_restored(
    app: Flask, as_user, world: World
) -> None:
    alice, admin = as_user("alice"), as_user("admin")
    # two submits: the second takes the fast path (what the first learnt of the assignment)
    assert _submit(alice, world, "D1", "a").status_code == 201
    assert _submit(alice, world, "D2", "b").status_code == 201
    _archive(admin, "campaign", world.campaign_id)
    refused = _submit(alice, world, "D3", "c")
    assert refused.status_code == 409
    assert refused.json == {
        "error": "campaign 'c1' is archived: it accepts no judgements until an admin restores it"
    }
    assert _stored(app) == 2
    # a retry of a judgement stored before the archiving still gets its answer
    again = _submit(alice, world, "D2", "b")
    assert again.status_code == 200 and again.json["created"] is False
    _archive(admin, "campaign", world.campaign_id, archived=False)
    assert _submit(alice, world, "D3", "c").status_code == 201
    assert _stored(app) == 3


def test_a_submit_to_an_archived_pool_is_refused(app: Flask, as_user, world: World) -> None:
    alice, admin = as_user("alice"), as_user("admin")
    assert _submit(alice, world, "D1", "a").status_code == 201
    _archive(admin, "pool", world.pool_id)
    refused = _submit(alice, world, "D2", "b")
    assert refused.status_code == 409
    assert refused.json["error"] == (
        "pool 1 of campaign 'c1' is archived: it accepts no judgements until an admin restores it"
    )
    assert _stored(app) == 1
    _archive(admin, "pool", world.pool_id, archived=False)
    assert _submit(alice, world, "D2", "b").status_code == 201


def test_archiving_by_another_process_is_seen_at_the_next_submit(
    app: Flask, as_user, world: World
) -> None:
    """Another Store (its own engine, so its own caches: as another process) archives the
    campaign, then the pool; the app's warm fast path refuses at once, restored it accepts."""
    alice = as_user("alice")
    assert _submit(alice, world, "D1", "a").status_code == 201
    assert _submit(alice, world, "D2", "b").status_code == 201  # the fast path is warm
    other = open_store(str(get_store_of(app).engine.url.render_as_string(hide_password=False)))
    try:
        for model, object_id in ((Campaign, world.campaign_id), (Pool, world.pool_id)):
            with other.session() as s:
                archive.set_archived(s, s.get(model, object_id), True)
            assert _submit(alice, world, "D3", "c").status_code == 409
            with other.session() as s:
                archive.set_archived(s, s.get(model, object_id), False)
        assert _submit(alice, world, "D3", "c").status_code == 201
    finally:
        other.dispose()
    assert _stored(app) == 3
