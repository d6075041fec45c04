"""Two-stage passage retrieval: dense top-k, rerank top-n, typed passages, trace, embedding cache."""

from __future__ import annotations

import pytest
from llama_index.core.schema import TextNode

from cpqa.passages.dense import DenseNodeRetriever, PassageRetriever
from cpqa.types import RetrievalTrace

TEXTS = {
    "111": "Cisplatin chemotherapy commonly causes nausea, vomiting, kidney injury and hearing loss.",
    "222": "Tamoxifen lowers the recurrence of estrogen receptor positive breast cancer after surgery.",
    "333": "Spring weather brings mild temperatures and occasional rain in the northern hemisphere.",
    "444": "Low-dose CT screening reduces lung cancer mortality among heavy smokers.",
    "555": "Exercise during chemotherapy reduces fatigue in patients with breast cancer.",
    "666": "Proton pump inhibitors treat gastric reflux disease.",
}


def _nodes() -> list[TextNode]:
    return [
        TextNode(text=text, id_=f"{pmid}:0", metadata={
            "pmid": pmid, "pmcid": None, "section": "RESULTS", "source": "D1", "category": "E3",
            "start": 0, "end": len(text), "title": f"Title {pmid}", "year": 2020, "journal": "J Test"})
        for pmid, text in TEXTS.items()
    ]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory) -> PassageRetriever:
    from cpqa.config import get_settings

    return PassageRetriever(get_settings(cpqa_home=tmp_path_factory.mktemp("passages"), cpqa_profile="offline"))


def test_returns_typed_passages_best_first_with_provenance(retriever):
    trace = RetrievalTrace()
    passages = retriever.retrieve("What are the side effects of cisplatin?", _nodes(), top_k=4, top_n=2, trace=trace)
    assert len(passages) == 2
    top = passages[0]
    assert top.pmid == "111" and top.text == TEXTS["111"]
    assert (top.section, top.source, top.category, top.title, top.year, top.journal) == \
        ("RESULTS", "D1", "E3", "Title 111", 2020, "J Test")
    assert top.start == 0 and top.end == len(TEXTS["111"]) and top.node_id == "111:0"
    assert passages[0].score >= passages[1].score
    assert all(p.dense_score is not None for p in passages)
    assert trace.passages == passages


def test_trace_records_both_stages_and_models(retriever):
    trace = RetrievalTrace()
    retriever.retrieve("breast cancer fatigue exercise", _nodes(), top_k=3, top_n=2, trace=trace)
    assert trace.stages["passage_retrieval"].info["passages_in"] == len(TEXTS)
    assert trace.stages["passage_retrieval"].info["kept"] == 3
    assert trace.stages["rerank"].info["passages_in"] == 3 and trace.stages["rerank"].info["kept"] == 2
    assert trace.stages["rerank"].ms > 0
    assert set(trace.models) >= {"passage_retriever", "reranker"}
    assert "BM25" in trace.models["reranker"].model
    trace.model_dump_json()  # serialisable


def test_dense_stage_limits_what_the_reranker_sees(retriever):
    hits = DenseNodeRetriever(_nodes(), retriever.cache, top_k=2).retrieve("lung cancer screening CT smokers")
    assert len(hits) == 2 and hits[0].node.metadata["pmid"] == "444"
    assert hits[0].score >= hits[1].score


def test_embeddings_cached_across_questions(retriever):
    nodes = _nodes()
    retriever.retrieve("tamoxifen", nodes, trace=RetrievalTrace())
    trace = RetrievalTrace()
    retriever.retrieve("a different question about reflux", nodes, trace=trace)
    assert trace.stages["passage_retrieval"].info["cache_misses"] == 1  # the new question only
    assert trace.stages["passage_retrieval"].info["cache_hits"] == len(nodes)


def test_edge_cases(retriever, settings):
    assert retriever.retrieve("anything", [], trace=RetrievalTrace()) == []
    with pytest.raises(ValueError):
        retriever.retrieve("  ", _nodes())
    with pytest.raises(ValueError):
        retriever.retrieve("x", _nodes(), top_k=0)
    with pytest.raises(ValueError):
        PassageRetriever(settings, matryoshka_dim=0)
