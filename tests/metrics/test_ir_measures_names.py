"""ir_measures' names: every mapped name against ir_measures itself on random data (its
pytrec_eval provider; Judged@k against its judged provider, RR@k against its MS MARCO one),
the refusals, and ``workbench trec-eval`` staying trec_eval's."""

from __future__ import annotations

import math
import random

import pytest

from tests.property_examples import examples
from workbench import metrics
from workbench.metrics import MeasureError
from workbench.metrics.ir_measures_names import ALIASES, MEASURES, NOT_PROVIDED

# Every ir_measures measure we map, with and without each of its parameters.
PYTREC_EVAL_NAMES = [
    "AP", "AP@5", "AP(rel=2)", "AP(judged_only=True)", "AP(rel=2)@10", "MAP",
    "P@5", "P(rel=2)@5", "P(judged_only=True)@10", "Precision@20",
    "R@10", "R(judged_only=True)@20", "Recall@5",
    "RR", "RR(rel=2)", "RR(judged_only=True)", "MRR",
    "Rprec", "Rprec(rel=2)", "Rprec(judged_only=True)", "RPrec",
    "nDCG", "nDCG@10", "nDCG(gains={0:0,1:1,2:5,3:7})@10", "nDCG(gains={1:3,2:9})",
    "nDCG(judged_only=True)@5", "NDCG@3",
    "Bpref", "Bpref(rel=2)", "BPref",
    "infAP", "infAP(rel=2)",
    "NumRet", "NumRet(rel=1)", "NumRet(rel=2)", "NumRelRet", "NumRel", "NumQ",
    "SetP", "SetP(rel=2)", "SetP(judged_only=True)", "SetRelP", "SetP(relative=True,rel=2)",
    "SetR", "SetR(rel=2)",
    "SetF", "SetF(beta=0.5)", "SetF(rel=2)", "SetF(beta=2,judged_only=True)",
    "SetAP", "SetAP(rel=2)",
    "Success@1", "Success@5", "Success(rel=2)@5", "Success(judged_only=True)@3",
    "IPrec@0.2", "IPrec(rel=2)@0.5", "IPrec(judged_only=True)@0.0", "IPrec@1.0",
]  # fmt: skip
OTHER_PROVIDERS = {
    "Judged@5": "judged",
    "Judged@20": "judged",
    "RR@10": "msmarco",
    "RR@3": "msmarco",
}


def _data(
    seed: int, *, ties: bool, full_depth: int = 0, negative: bool = True
) -> tuple[dict, dict]:
    """Random graded qrels (``negative``: some -1, pooled but not judged) and a run with
    unjudged documents; ``ties``: scores that tie; ``full_depth``: every topic ranks at least
    that many."""
    rng = random.Random(seed)
    grades = [-1, 0, 0, 0, 1, 1, 2, 3] if negative else [0, 0, 0, 1, 1, 2, 3]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(rng.randint(3, 8)):
        qid = f"q{t}"
        docs = [f"d{i}" for i in range(40)]
        judged = rng.sample(docs, rng.randint(1, 25))
        qrels[qid] = {d: rng.choice(grades) for d in judged}
        ranked = rng.sample(docs, rng.randint(max(1, full_depth), 40))
        scores = (
            [round(rng.random(), 1) for _ in ranked]
            if ties
            else rng.sample(range(1000), len(ranked))
        )
        run[qid] = {d: float(s) for d, s in zip(ranked, scores, strict=True)}
    run["unjudged-topic"] = {"d1": 1.0}
    return qrels, run


def _ours(qrels: dict, run: dict, name: str, compat: int = 10) -> tuple[dict[str, float], float]:
    result = metrics.evaluate(qrels, run, [name], compat=compat)
    (line,) = [line for line in result.lines if line.kind != "string"]
    per_topic = {q: v[line.name] for q, v in result.per_topic.items() if line.name in v}
    return per_topic, float(result.summary[line.name])


def _theirs(provider, qrels: dict, run: dict, name: str) -> tuple[dict[str, float], float]:
    ir_measures = pytest.importorskip("ir_measures")
    measure = ir_measures.parse_measure(name)
    per_topic = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
    return per_topic, float(provider.calc_aggregate([measure], qrels, run)[measure])


def _close(a: float, b: float) -> bool:
    """Equal to 12 digits, or both NaN (0/0 with -J on a topic left without documents)."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _same(ours: tuple[dict, float], theirs: tuple[dict, float], per_topic: bool) -> None:
    if per_topic:
        assert set(ours[0]) == set(theirs[0])
        for qid, value in theirs[0].items():
            assert _close(ours[0][qid], value), qid
    assert _close(ours[1], theirs[1])


def _provider(name: str):
    return pytest.importorskip("ir_measures").providers.registry[name]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(examples(12)))
@pytest.mark.parametrize("name", PYTREC_EVAL_NAMES)
def test_every_name_equals_ir_measures_pytrec_eval(name: str, seed: int) -> None:
    """pytrec_eval is trec_eval 9.0.8 inside (its iprec cutoffs round up by 0.9), so ours is
    compared with ``compat=9``; elsewhere 9.0.8 and 10 agree on these measures."""
    qrels, run = _data(seed, ties=seed % 2 == 0)
    theirs = _theirs(_provider("pytrec_eval"), qrels, run, name)
    _same(_ours(qrels, run, name, compat=9), theirs, per_topic=name != "NumQ")
    if not name.startswith("IPrec"):
        _same(_ours(qrels, run, name), theirs, per_topic=name != "NumQ")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(examples(12)))
@pytest.mark.parametrize(("name", "provider"), OTHER_PROVIDERS.items())
def test_judged_and_rr_at_k_equal_their_ir_measures_providers(
    name: str, provider: str, seed: int
) -> None:
    """Distinct scores, rankings at least k long and no -1 grades: these providers break
    ties by docno ascending (trec_eval: descending); their Judged@k divides a shorter ranking
    by its length (ours counts the missing ranks as unjudged, as P@k) and counts a -1 (pooled,
    not judged) as judged (ours, as trec_eval's unj, does not)."""
    qrels, run = _data(seed, ties=False, full_depth=20, negative=False)
    theirs = _theirs(_provider(provider), qrels, run, name)
    _same(_ours(qrels, run, name), theirs, True)


def test_every_mapped_measure_and_alias_is_compared() -> None:
    tested = {n.split("(")[0].split("@")[0] for n in [*PYTREC_EVAL_NAMES, *OTHER_PROVIDERS]}
    assert set(MEASURES) | set(ALIASES) <= tested
    assert not set(NOT_PROVIDED) & set(MEASURES)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("ERR@20", "workbench has no ERR (expected reciprocal rank"),
        ("alpha_nDCG@20", "workbench has no alpha_nDCG"),
        ("RBP(p=0.8)", "trec_eval's differs: use rbp.p=0.8"),
        ("P(foo=1)@5", "P does not take 'foo' (it takes rel, judged_only)"),
        ("P(rel=2)", "give its cutoff with @"),
        ("P(rel=2.5)@5", "rel must be an integer grade"),
        ("nDCG(gains={1:0.5})", "gains must map integer grades to integer gains"),
        ('nDCG(dcg="exp-log2")@10', "only nDCG's log2 DCG"),
        ("Bpref@10", "takes no @ value"),
        ("P(rel=2)@0", "positive integer"),
        ("P(rel=1,rel=2)@5", "rel given twice"),
        ("Nope(rel=1)@5", "unknown measure"),
    ],
)
def test_names_it_cannot_map_are_refused_saying_why(name: str, says: str) -> None:
    with pytest.raises(MeasureError) as refused:
        metrics.evaluate({"1": {"a": 1}}, {"1": {"a": 1.0}}, [name])
    assert says in str(refused.value)


def test_options_equal_to_the_evaluations_change_nothing() -> None:
    """P(rel=2)@5 at relevance level 2 is trec_eval's P_5; at level 1 it is its own column."""
    qrels, run = _data(3, ties=True)
    at_two = metrics.evaluate(qrels, run, ["P(rel=2)@5"], relevance_level=2)
    plain = metrics.evaluate(qrels, run, ["P@5"], relevance_level=2)
    assert at_two.summary == plain.summary == {"P_5": plain.summary["P_5"]}
    both = metrics.evaluate(qrels, run, ["P@5", "P(rel=2)@5", "P@10"])
    assert [line.name for line in both.lines] == ["P_5", "P_10", "P(rel=2)@5"]
    assert both.summary["P(rel=2)@5"] == at_two.summary["P_5"]


def test_a_family_named_twice_gets_all_its_cutoffs_outside_the_drop_in() -> None:
    qrels, run = _data(1, ties=True)
    result = metrics.evaluate(qrels, run, ["P@5", "P.10", "nDCG@3", "ndcg_cut.5,3"])
    assert [line.name for line in result.lines] == ["P_5", "P_10", "ndcg_cut_3", "ndcg_cut_5"]
    with pytest.raises(MeasureError, match="named twice with different parameters"):
        metrics.evaluate(qrels, run, ["utility.1,-1,0,0", "utility.2,-1,0,0"])


def test_the_drop_in_keeps_trec_eval_names_and_rules(tmp_path) -> None:
    from workbench.trec_eval_command import run_trec_eval

    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 2\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    out, err = _Buffer(), _Buffer()
    assert run_trec_eval(["-m", "P(rel=2)@5", *files], out, err) == 1
    assert "unknown measure" in err.text
    out = _Buffer()
    assert run_trec_eval(["-m", "P.1", "-m", "P.2", *files], out, _Buffer()) == 0
    assert out.text == "P_1                   \tall\t1.0000\n"  # the first parameters given


class _Buffer:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)
