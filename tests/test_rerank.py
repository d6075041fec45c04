"""The reranker: BM25 + dense fusion offline, the cross-encoder postprocessor contract, profile choice."""

from __future__ import annotations

import numpy as np

from cpqa.options import RerankOptions
import pytest
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from cpqa.models.encoders import ModelUnavailable
from cpqa.models.names import FUSION_RERANKER, MEDCPT_CROSS
from cpqa.passages.rerank import CrossEncoderReranker, FusionReranker, bm25_scores, load_reranker

PASSAGES = [
    "Regular physical exercise improves cardiovascular fitness in healthy adults.",
    "Tamoxifen reduces the risk of breast cancer recurrence in estrogen receptor positive women.",
    "Cisplatin based chemotherapy causes nausea, kidney damage and hearing loss in many patients.",
    "The weather in spring is often mild with occasional rain showers.",
    "Lung cancer screening with low-dose CT reduces mortality among heavy smokers.",
]


def _nodes(texts=PASSAGES) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=0.0) for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def fusion(tmp_path_factory) -> tuple[FusionReranker, object]:
    from cpqa.config import get_settings

    s = get_settings(cpqa_home=tmp_path_factory.mktemp("rerank"), cpqa_profile="offline")
    return load_reranker(s, top_n=3)


def test_offline_profile_loads_fusion_named_in_choice(fusion):
    reranker, choice = fusion
    assert isinstance(reranker, FusionReranker) and isinstance(reranker, BaseNodePostprocessor)
    assert choice.component == "reranker" and choice.profile == "offline"
    assert choice.model == FUSION_RERANKER and "BM25" in choice.model


def test_fusion_puts_the_answering_passage_first_and_keeps_top_n(fusion):
    reranker, _ = fusion
    out = reranker.postprocess_nodes(_nodes(), query_str="What side effects does cisplatin chemotherapy have?")
    assert [n.node.node_id for n in out][0] == "n2"
    assert len(out) == 3
    scores = [n.score for n in out]
    assert scores == sorted(scores, reverse=True) and 0.0 <= scores[-1] <= scores[0] <= 1.0


def test_fusion_finds_paraphrase_through_dense_part(fusion):
    reranker, _ = fusion
    # No word in common with the tamoxifen passage beyond "breast"; dense similarity must carry it.
    out = reranker.postprocess_nodes(_nodes(), query_str="hormone pill to stop mammary tumour coming back")
    assert out[0].node.node_id == "n1"


def test_fusion_components_and_weights(fusion):
    reranker, _ = fusion
    query = "low-dose CT screening for lung cancer"
    fused, dense, bm25 = reranker.fused_scores(query, PASSAGES)
    assert fused.shape == dense.shape == bm25.shape == (len(PASSAGES),)
    assert int(np.argmax(bm25)) == 4 and int(np.argmax(dense)) == 4
    bm25_only = reranker.model_copy(update={"options": RerankOptions(dense_weight=0.0)})
    assert np.allclose(bm25_only.fused_scores(query, PASSAGES)[0], (bm25 - bm25.min()) / (bm25.max() - bm25.min()))


def test_fusion_does_not_mutate_shared_nodes(fusion):
    reranker, _ = fusion
    nodes = _nodes()
    out = reranker.postprocess_nodes(nodes, query_str="breast cancer tamoxifen")
    assert all(n.score == 0.0 for n in nodes)
    assert out[0].node is nodes[1].node


def test_fusion_edge_cases(fusion):
    reranker, _ = fusion
    assert reranker.postprocess_nodes([], query_str="anything") == []
    with pytest.raises(ValueError):
        reranker.postprocess_nodes(_nodes())
    one = reranker.postprocess_nodes(_nodes(PASSAGES[:1]), query_bundle=QueryBundle("exercise"))
    assert len(one) == 1 and one[0].node.node_id == "n0"


def test_bm25_scores_rank_exact_terms_and_ignore_stopword_queries():
    scores = bm25_scores("tamoxifen recurrence", PASSAGES)
    assert int(np.argmax(scores)) == 1 and scores[1] > 0 and scores[3] == 0
    assert not bm25_scores("the of and", PASSAGES).any()


class _OverlapModel:
    """Stands in for CrossEncoder weights (none can be had offline): scores word overlap, records pairs."""

    def __init__(self):
        self.pairs: list[list[str]] = []

    def predict(self, pairs, batch_size=16, show_progress_bar=False):
        self.pairs.extend(pairs)
        return np.array([len(set(q.lower().split()) & set(p.lower().split())) for q, p in pairs], dtype=np.float32)


def test_cross_encoder_reranker_scores_query_passage_pairs():
    model = _OverlapModel()
    reranker = CrossEncoderReranker(model, top_n=2)
    out = reranker.postprocess_nodes(_nodes(), query_str="lung cancer screening reduces mortality")
    assert [p[0] for p in model.pairs] == ["lung cancer screening reduces mortality"] * len(PASSAGES)
    assert [p[1] for p in model.pairs] == PASSAGES
    assert out[0].node.node_id == "n4" and len(out) == 2 and out[0].score == 5.0


def test_paper_profile_without_weights_raises_clearly(tmp_path):
    from cpqa.config import get_settings

    s = get_settings(cpqa_home=tmp_path, cpqa_profile="paper")
    with pytest.raises(ModelUnavailable, match=MEDCPT_CROSS):
        load_reranker(s)


def test_rerankers_build_from_a_model_name(tmp_path):
    """As LlamaIndex's ``SentenceTransformerRerank(model=...)``: a cross-encoder by name (a tiny random BERT with the
    real architecture, in a temporary Hugging Face cache) and the fusion reranker over a named embedder."""
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from cpqa.config import get_settings
    from cpqa.models.encoders import MINILM
    from cpqa.passages.rerank import CrossEncoderReranker, FusionReranker
    from cpqa.testing.tiny_models import build_paper_models

    nodes = [NodeWithScore(node=TextNode(id_=str(i), text=t)) for i, t in enumerate(["Tamoxifen works.", "Aspirin."])]
    query = QueryBundle("Does tamoxifen work?")
    fusion = FusionReranker.from_model_name(MINILM, top_n=1)
    assert [n.node.node_id for n in fusion.postprocess_nodes(nodes, query)] == ["0"]
    folder = build_paper_models(tmp_path / "hub")["ncbi/MedCPT-Cross-Encoder"]  # a model by its local path
    cross = CrossEncoderReranker.from_model_name(str(folder), top_n=2, settings=get_settings(cpqa_cache=tmp_path / "o"))
    ranked = cross.postprocess_nodes(nodes, query)
    assert len(ranked) == 2 and all(isinstance(n.score, float) for n in ranked)
