"""Per-topic Cohen's kappa where a topic has exactly two judges (issue 10 §2), against
scikit-learn."""

from __future__ import annotations

import math
import warnings

import pytest
from sklearn.metrics import cohen_kappa_score

from tests.analysis.conftest import build_campaign
from workbench.reports.tables import render
from workbench.services.agreement import agreement_report
from workbench.services.agreement_tables import groups_table

# (qid, docno) -> grades of alice, bob, carol
GRADES = {
    ("q1", "d1"): (2, 1, None),  # q1: alice and bob
    ("q1", "d2"): (0, 0, None),
    ("q1", "d3"): (1, 0, None),
    ("q1", "d4"): (0, 0, None),
    ("q1", "d5"): (2, 2, None),
    ("q2", "d1"): (None, 1, 1),  # q2: bob and carol
    ("q2", "d6"): (None, 0, 1),
    ("q2", "d7"): (None, 2, 2),
    ("q2", "d8"): (None, 0, 0),
    ("q3", "d2"): (0, 1, 1),  # q3: three judges, no Cohen's kappa
    ("q3", "d9"): (1, 1, 0),
    ("q4", "d10"): (1, None, None),  # q4: two judges who share no document
    ("q4", "d11"): (None, None, 0),
    ("q5", "d12"): (1, 1, None),  # q5: every label relevant: kappa undefined
    ("q5", "d13"): (2, 2, None),
}
PAIRS = {"q1": (0, 1), "q2": (1, 2), "q5": (0, 1)}
NAMES = ("alice", "bob", "carol")


def sklearn_kappa(qid: str, graded: bool) -> float:
    j, k = PAIRS[qid]
    rows = [g for (q, _), g in GRADES.items() if q == qid and None not in (g[j], g[k])]
    a = [r[j] if graded else int(r[j] >= 1) for r in rows]
    b = [r[k] if graded else int(r[k] >= 1) for r in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where kappa is undefined
        return float(cohen_kappa_score(a, b, labels=[0, 1, 2] if graded else [0, 1]))


@pytest.mark.parametrize("graded", [False, True])
def test_topics_with_two_judges_get_their_cohen_kappa(store, graded):
    with store.session() as s:
        campaign = build_campaign(s, GRADES)
        report = agreement_report(s, campaign, graded=graded, n_bootstrap=0)
    by_topic = {t.name: t for t in report.per_topic}
    for qid, (j, k) in PAIRS.items():
        assert by_topic[qid].judges == [NAMES[j], NAMES[k]]
        expected = sklearn_kappa(qid, graded)
        if math.isnan(expected):
            assert math.isnan(by_topic[qid].cohen_kappa)
        else:
            assert by_topic[qid].cohen_kappa == pytest.approx(expected, abs=1e-12)
    assert not math.isnan(by_topic["q1"].cohen_kappa)
    assert by_topic["q3"].judges == list(NAMES) and by_topic["q3"].cohen_kappa is None
    assert by_topic["q4"].judges == ["alice", "carol"] and by_topic["q4"].cohen_kappa is None
    assert report.overall.cohen_kappa is None
    text = render(groups_table(report), "text")
    assert "Cohen kappa (two judges)" in text and "alice & bob" in text
    q1 = next(line for line in text.splitlines() if line.startswith("q1 "))
    assert q1.rstrip().endswith(f"{sklearn_kappa('q1', graded):.3f}")
