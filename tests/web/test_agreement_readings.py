"""The agreement report shows Landis & Koch's (1977) reading beside each kappa, on the page
and in every download format."""

from __future__ import annotations

import json

from flask import Flask

from tests.web.conftest import World
from workbench.reports.tables import FORMATS


def alice_and_bob_disagree(as_user, world: World) -> None:
    """alice judges D1 of T1 and T2 relevant, bob non-relevant."""
    alice, bob = as_user("alice"), as_user("bob")
    for client, owner, grade in ((alice, "alice", 1), (bob, "bob", 0)):
        for qid in ("T1", "T2"):
            client.post(
                f"/api/v1/assignments/{world.assignment[owner, qid]}/judgements",
                json={"docno": "D1", "grade": grade},
            )


def test_landis_koch_reading_beside_each_kappa_in_every_format(
    app: Flask, as_user, world: World
) -> None:
    alice_and_bob_disagree(as_user, world)
    admin = as_user("admin")
    # two items, alice always 1 and bob always 0: Fleiss' kappa -1 (poor), Cohen's kappa 0
    # (slight); pairwise agreement 0
    page = admin.get(f"/reports/{world.campaign_id}/agreement?bootstrap=0").text
    assert page.count("<th>Landis &amp; Koch</th>") == 3
    assert "<td>poor</td>" in page and "<td>slight</td>" in page
    for fmt in FORMATS:
        text = admin.get(f"/reports/{world.campaign_id}/agreement.{fmt}?bootstrap=0").text
        if fmt == "json":
            report = json.loads(text)
            assert report["overall"]["landis_koch"] == "poor"
            assert report["overall"]["percent_agreement"] == 0.0
            assert [p["landis_koch"] for p in report["per_pair"]] == ["slight"]
            continue
        assert text.count("Landis") >= 3, fmt
        assert "poor" in text and "slight" in text, fmt
