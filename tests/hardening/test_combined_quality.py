"""Gold documents meeting the practice set: a practice item shows the assessor its expected
grade, so a document cannot be both (gold accuracy would be measured on answers shown)."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.web.conftest import World, get_store_of
from workbench.services import calibration, gold
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign, GoldDocument, QrelsEntry, QrelsSet


def test_a_practice_document_cannot_be_marked_gold(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        calibration.set_items(s, c, calibration.parse_items("T1\tD4\t2\tsteps\n"))
        with pytest.raises(ServiceError, match="practice set"):
            gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        labels = QrelsSet(campaign_id=c.id, name="ref", source="test")
        s.add(labels)
        s.flush()
        s.add_all(QrelsEntry(qrels_set_id=labels.id, qid="T1", docno=d, iteration="0", rel=r)
                  for d, r in (("D4", 2), ("D5", 0)))  # fmt: skip
        result = gold.mark_from(s, c, "qrels", qrels_name="ref")
        assert (result.marked, result.in_practice) == (1, 1)
        assert "1 in the practice set" in result.left_out()
        assert {g.docno for g in s.query(GoldDocument)} == {"D5"}


def test_a_gold_document_cannot_be_a_practice_item(app: Flask, world: World) -> None:
    with get_store_of(app).session() as s:
        c = s.get(Campaign, world.campaign_id)
        gold.mark(s, c, [gold.GoldItem("T1", "D4", 2)])
        with pytest.raises(ServiceError, match="gold document"):
            calibration.set_items(s, c, calibration.parse_items("T1\tD4\t2\tsteps\n"))
        assert calibration.items(s, c.id) == []
