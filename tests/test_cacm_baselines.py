"""The CACM reader and the simple rankers that make runs for examples and simulations."""

import pytest

from tests.conftest import SHARED
from workbench import baselines, cacm
from workbench.metrics import evaluate
from workbench.trec import TrecFormatError, read_qrels, read_run, read_topics

CACM = SHARED / "data" / "cacm"


@pytest.fixture(scope="module")
def collection() -> cacm.CacmCollection:
    if not (CACM / "cacm.all").is_file():
        pytest.skip(f"CACM not found at {CACM}")
    return cacm.load(CACM)


def test_reads_every_record_of_the_collection(collection):
    assert len(collection.documents) == 3204
    assert len(collection.topics) == 65  # query.text holds 65 records
    assert len(collection.judged_topics) == 52
    first = collection.documents[0]
    assert first.docno == "1"
    assert first.title == "Preliminary Report-International Algebraic Language"
    assert collection.qrels["1"]["1410"] == 1  # "01 1410 0 0"
    assert "about" in collection.stopwords


def test_a_record_line_that_is_not_a_field_names_file_and_line(tmp_path):
    bad = tmp_path / "cacm.all"
    bad.write_text(".I 1\n.T\nTitle\n.I x\n", encoding="utf-8")
    with pytest.raises(TrecFormatError, match=r"cacm.all:4: expected '.I <number>'"):
        cacm.read_documents(bad)


def test_bm25_on_a_hand_computed_case():
    index = baselines.Index({"a": "apple apple pie", "b": "pie"})
    scores = index.score("apple", baselines.Ranker("t", "bm25", k1=1.2, b=0.75))
    # N=2, df=1: idf = ln(1 + 1.5/1.5) = ln 2; |a|=3, avgdl=2: norm = 1.2 (0.25 + 0.75*1.5)
    idf, norm = 0.6931471805599453, 1.2 * (0.25 + 0.75 * 1.5)
    assert scores == {"a": pytest.approx(idf * 2 * 2.2 / (2 + norm), rel=1e-12)}


def test_query_likelihood_prefers_the_document_with_more_query_terms():
    index = baselines.Index({"a": "cat cat dog", "b": "dog dog dog"})
    assert set(index.score("cat", baselines.Ranker("t", "ql", mu=10))) == {"a"}
    scores = index.score("cat dog", baselines.Ranker("t", "ql", mu=10))
    # |C|=6, cf(cat)=2, cf(dog)=4, |a|=|b|=3, mu=10: a = ln((2 + 20/6)/13) + ln((1 + 40/6)/13),
    # b = ln((0 + 20/6)/13) + ln((3 + 40/6)/13)
    assert scores["a"] == pytest.approx(-1.4190403540903618, rel=1e-12)
    assert scores["b"] == pytest.approx(-1.6572423692787728, rel=1e-12)


def test_campaign_files_import_as_they_are_and_rank_the_systems(collection, tmp_path):
    files = cacm.write_campaign_files(collection, tmp_path, depth=50)
    topics = read_topics(files.topics)
    assert [t.qid for t in topics] == [t.qid for t in collection.judged_topics]
    qrels = read_qrels(files.qrels)
    assert len(qrels.rels) == sum(len(collection.qrels[t.qid]) for t in topics)
    maps = {}
    for path in files.runs:
        run = read_run(path)
        maps[run.tag] = evaluate(qrels, run, ["map"]).summary["map"]
    assert len(maps) == len(baselines.DEFAULT_RANKERS)
    # the full-text BM25 run beats the deliberately weak title-only run
    assert maps["bm25"] > maps["title-bm25"] + 0.05
