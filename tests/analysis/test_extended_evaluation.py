"""The evaluation report's further sections on the fixture campaign (services.extended_evaluation)."""

from __future__ import annotations

import pytest

from workbench.services import extended_evaluation as extended
from workbench.services.campaigns import get_campaign
from workbench.services.errors import ServiceError


def test_collection_scale_counts_by_hand(evaluated):
    """runA against the final labels: q1 retrieves d1 d3 d2 d4, relevant d1 d3 (R = 2);
    q2 retrieves d1 d6 d5, relevant d1 d6 d7 (R = 3); q3 retrieves d10 d2 d8 d9, relevant
    d2 d8 d10 (R = 3). With N = 100: fallout (2/98 + 1/97 + 1/97) / 3."""
    with evaluated.session() as s:
        scale = extended.collection_scale(s, get_campaign(s, "demo"), num_docs=100)
    row = next(r for r in scale.rows if r.tag == "runA")
    assert row.topics == 3
    assert row.values["fallout"] == pytest.approx((2 / 98 + 1 / 97 + 1 / 97) / 3)
    assert row.values["error"] == pytest.approx((2 / 100 + 2 / 100 + 1 / 100) / 3)
    assert row.values["precision"] == pytest.approx((2 / 4 + 2 / 3 + 3 / 4) / 3)
    assert scale.num_docs == 100 and scale.source == "given"
    assert "non-relevant" in scale.note


def test_collection_scale_needs_a_size(evaluated):
    with evaluated.session() as s, pytest.raises(ServiceError, match="no documents"):
        extended.collection_scale(s, get_campaign(s, "demo"))
