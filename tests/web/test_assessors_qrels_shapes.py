"""Every assessor's qrels read in one pass (`qrels.assessors_qrels`, what the report's ranking
stability reads) equal each assessor's read from that assessor's own current judgements and
assignments, on a campaign of every shape (`test_page_numbers_shapes._every_shape`: several
pools, one archived, an adaptive pool with a secondary judge, a revision, an undo, 'cannot
judge', a withdrawn assignment, a gold document left out)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import World
from tests.web.test_page_numbers_shapes import _every_shape
from workbench.services import assignments, pools, qrels
from workbench.services import evaluation_inputs as inputs
from workbench.services.current_judgements import (
    CurrentGrades,
    current_judgements,
    left_out_gold,
)
from workbench.services.errors import NotFound, ServiceError
from workbench.services.scope import pool_scope
from workbench.store.models import Assignment, Campaign, User


def _one_assessor(s, campaign: Campaign, name: str) -> tuple[dict, int, tuple]:  # type: ignore[no-untyped-def]
    """The assessor's labels (before -1), expected count and missing keys, from their own
    rows: current grades less left-out gold; expected, the documents their active
    assignments in scope show and the documents they graded."""
    user = s.scalar(select(User).where(User.username == name))
    gold = left_out_gold(s, campaign.id)
    labels = {
        (j.qid, j.docno): j.grade
        for j in current_judgements(s, campaign.id, user_id=user.id)
        if j.grade is not None and (j.qid, j.docno) not in gold
    }
    scope = pool_scope(s, campaign)
    mine = list(
        s.scalars(
            select(Assignment).where(
                Assignment.user_id == user.id,
                Assignment.active.is_(True),
                Assignment.pool_id.in_(scope.ids),
            )
        )
    )
    shown = assignments.documents_to_judge(s, mine)
    expected = ({(a.qid, d) for a in mine for d in shown[a.id].shown} - gold) | set(labels)
    missing = sorted(expected - set(labels), key=lambda k: (pools.qid_key(k[0]), k[1]))
    return labels, len(expected), tuple(missing)


def test_every_assessors_qrels_in_one_pass_equal_each_read_alone(app: Flask, world: World) -> None:
    store = _every_shape(app, world)
    names = ["alice", "bob", "carol"]
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        every = qrels.assessors_qrels(s, campaign, names, pools=None)
        assert list(every) == names
        for name in names:
            labels, expected, missing = _one_assessor(s, campaign, name)
            got = every[name]
            assert (got.completeness.expected, got.completeness.missing) == (expected, missing)
            assert got.completeness.labels == f"a grade by {name}"
            graded = {(q, d): g for q, docs in got.qrels.items() for d, g in docs.items() if g >= 0}
            assert graded == labels
            alone = qrels.campaign_qrels(s, campaign, assessor=name, allow_incomplete=True)
            assert alone == got
        missing = {n: len(every[n].completeness.missing) for n in names}
        assert 0 in missing.values() and max(missing.values()) > 0  # both kinds in the test
        with pytest.raises(NotFound, match="no assessor 'nobody'"):
            qrels.assessors_qrels(s, campaign, ["alice", "nobody"], pools=None)

        # the evaluation's view: an incomplete assessor is refused as resolve_qrels refuses
        for allow in (False, True):
            resolved = inputs.resolve_assessors_qrels(s, campaign, names, allow_incomplete=allow)
            for name in names:
                try:
                    alone = inputs.resolve_qrels(s, campaign, name, allow_incomplete=allow)
                except qrels.IncompleteQrels as refused:
                    assert isinstance(resolved[name], qrels.IncompleteQrels)
                    assert str(resolved[name]) == str(refused)
                else:
                    assert resolved[name] == alone


@pytest.mark.parametrize("count_withdrawn", [False, True])
def test_qrels_and_assessors_from_one_read_of_the_grades_equal_the_sql_reads(
    app: Flask, world: World, count_withdrawn: bool
) -> None:
    """The evaluation report reads the campaign's current grades once (`CurrentGrades`) for
    the final qrels' completeness, the assessors and every assessor's qrels: each equals
    what its own SQL read gives, with withdrawn judgements counted and not."""
    store = _every_shape(app, world)
    names = ["alice", "bob", "carol"]
    with store.session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        campaign.count_withdrawn = count_withdrawn
        s.flush()
        grades = CurrentGrades(s, campaign.id)
        assert [u.username for u in inputs.assessors(s, campaign, grades)] == [
            u.username for u in inputs.assessors(s, campaign)
        ]
        for final, allow in itertools.product((False, True), (False, True)):
            kind = {"final": final, "allow_incomplete": allow}
            assert _outcome(qrels.campaign_qrels, s, campaign, **kind, grades=grades) == (
                _outcome(qrels.campaign_qrels, s, campaign, **kind)
            )
        assert qrels.assessors_qrels(s, campaign, names, pools=None, grades=grades) == (
            qrels.assessors_qrels(s, campaign, names, pools=None)
        )
        for spec in ["final", *names]:
            for allow in (False, True):
                assert _outcome(
                    inputs.resolve_qrels, s, campaign, spec, allow_incomplete=allow, grades=grades
                ) == _outcome(inputs.resolve_qrels, s, campaign, spec, allow_incomplete=allow)


def _outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What `read` gives, or the message of the ServiceError it raises."""
    try:
        return read(*args, **kwargs)
    except ServiceError as refused:
        return f"{type(refused).__name__}: {refused}"
