"""Two-stage passage retrieval: dense top-k, rerank top-n, typed passages, stage records, embedding cache,
multi-query fusion (LlamaIndex QueryFusionRetriever) and the node <-> passage round trip."""

from __future__ import annotations

import pytest
from llama_index.core.schema import TextNode

from cpqa.options import PassageOptions
from cpqa.passages.dense import DenseNodeRetriever, PassageRetriever, passage_node, to_passage

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
        TextNode(
            text=text,
            id_=f"{pmid}:0",
            metadata={
                "pmid": pmid,
                "pmcid": None,
                "section": "RESULTS",
                "source": "D1",
                "category": "E3",
                "start": 0,
                "end": len(text),
                "title": f"Title {pmid}",
                "year": 2020,
                "journal": "J Test",
            },
        )
        for pmid, text in TEXTS.items()
    ]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory) -> PassageRetriever:
    from cpqa.config import get_settings

    return PassageRetriever.load(get_settings(cpqa_home=tmp_path_factory.mktemp("passages"), cpqa_profile="offline"))


def test_returns_typed_passages_best_first_with_provenance(retriever):
    result = retriever.search("What are the side effects of cisplatin?", _nodes(), PassageOptions(top_k=4, top_n=2))
    passages = result.passages
    assert len(passages) == 2
    top = passages[0]
    assert top.pmid == "111" and top.text == TEXTS["111"]
    assert (top.section, top.source, top.category, top.title, top.year, top.journal) == (
        "RESULTS",
        "D1",
        "E3",
        "Title 111",
        2020,
        "J Test",
    )
    assert top.start == 0 and top.end == len(TEXTS["111"]) and top.node_id == "111:0"
    assert passages[0].score >= passages[1].score
    assert all(p.dense_score is not None for p in passages)
    assert to_passage(passage_node(top)) == top  # the postprocessors' round trip loses nothing


def test_result_records_both_stages(retriever):
    trace = retriever.search("breast cancer fatigue exercise", _nodes(), PassageOptions(top_k=3, top_n=2))
    assert trace.stages["passage_retrieval"].info["passages_in"] == len(TEXTS)
    assert trace.stages["passage_retrieval"].info["kept"] == 3
    assert trace.stages["rerank"].info["passages_in"] == 3 and trace.stages["rerank"].info["kept"] == 2
    assert trace.stages["rerank"].ms > 0 and "BM25" in trace.stages["rerank"].info["reranker"]
    assert "BM25" in retriever.reranker_choice.model and retriever.choice.component == "passage_retriever"
    trace.model_dump_json()  # serialisable


def test_multi_query_fuses_the_variants_by_reciprocal_rank(retriever):
    single = retriever.search("breast cancer", _nodes(), PassageOptions(top_k=6, top_n=3))
    fused = retriever.search(
        "breast cancer",
        _nodes(),
        PassageOptions(top_k=6, top_n=3),
        variants=["tamoxifen recurrence", "exercise fatigue during chemotherapy"],
    )
    assert fused.queries[0] == "breast cancer" and len(fused.queries) == 3
    assert fused.stages["multi_query"].info["kept"] == 3 and len(fused.passages) == 3
    assert {p.pmid for p in fused.passages} >= {"222", "555"}  # what the variants are about
    assert fused.passages[0].score <= 3 / 60 and single.passages[0].score != fused.passages[0].score  # RRF scores


def test_dense_stage_limits_what_the_reranker_sees(retriever):
    hits = DenseNodeRetriever(_nodes(), retriever.cache, top_k=2).retrieve("lung cancer screening CT smokers")
    assert len(hits) == 2 and hits[0].node.metadata["pmid"] == "444"
    assert hits[0].score >= hits[1].score


def test_embeddings_cached_across_questions(retriever):
    nodes = _nodes()
    retriever.search("tamoxifen", nodes)
    trace = retriever.search("a different question about reflux", nodes)
    assert trace.stages["passage_retrieval"].info["cache_misses"] == 1  # the new question only
    assert trace.stages["passage_retrieval"].info["cache_hits"] == len(nodes)


def test_edge_cases(retriever, settings):
    assert retriever.search("anything", []).passages == []
    with pytest.raises(ValueError):
        retriever.search("  ", _nodes())
    with pytest.raises(ValueError):
        retriever.search("x", _nodes(), PassageOptions(top_k=0))
    with pytest.raises(ValueError):
        PassageRetriever.load(settings, matryoshka_dim=0)
