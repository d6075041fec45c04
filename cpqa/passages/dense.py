"""Two-stage passage retrieval over the SEOS passages of the candidate documents.

Stage 1: a dense retriever (PubMedBERT-Matryoshka in the paper profile, at a configurable Matryoshka
dimension; MiniLM offline) keeps the top-k passages. Stage 2: the reranker (``cpqa.passages.rerank``) keeps the
top-n. Passage embeddings are cached across questions, so a document seen before is not encoded again.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle

from cpqa.config import Settings
from cpqa.models.encoders import EmbeddingCache, load_encoder
from cpqa.passages.rerank import load_reranker
from cpqa.types import Passage, RetrievalTrace

DEFAULT_TOP_K = 20
DEFAULT_TOP_N = 5


def node_text(node: BaseNode) -> str:
    """The text a passage is embedded and reranked by (metadata stays out, so the cache key is the text)."""
    return node.get_content(metadata_mode=MetadataMode.NONE)


class DenseNodeRetriever(BaseRetriever):
    """Stage 1 as a LlamaIndex retriever over a given set of nodes (one question's passages)."""

    def __init__(self, nodes: Sequence[BaseNode], cache: EmbeddingCache, top_k: int = DEFAULT_TOP_K):
        super().__init__()
        self._nodes = list(nodes)
        self._cache = cache
        self._top_k = top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not self._nodes:
            return []
        vectors = self._cache.encode([node_text(n) for n in self._nodes])
        query = self._cache.encode([query_bundle.query_str])[0]  # cached: the reranker needs it too
        scores = vectors @ query
        k = min(self._top_k, len(self._nodes))
        best = np.argsort(-scores, kind="stable")[:k]
        return [NodeWithScore(node=self._nodes[i], score=float(scores[i])) for i in best]


def to_passage(hit: NodeWithScore, dense_score: float | None) -> Passage:
    """A reranked node as a typed ``Passage``, its provenance taken from the SEOS node metadata."""
    meta: dict[str, Any] = hit.node.metadata
    return Passage(
        node_id=hit.node.node_id,
        pmid=str(meta.get("pmid") or ""),
        text=node_text(hit.node),
        score=float(hit.score or 0.0),
        dense_score=dense_score,
        section=meta.get("section"),
        source=meta.get("source") or "D1",
        category=meta.get("category"),
        start=meta.get("start"),
        end=meta.get("end"),
        pmcid=meta.get("pmcid"),
        title=meta.get("title") or "",
        year=meta.get("year"),
        journal=meta.get("journal"),
    )


class PassageRetriever:
    """Dense top-k then rerank top-n; load once and share (thread-safe: the embedding cache is locked)."""

    def __init__(self, settings: Settings, *, matryoshka_dim: int | None = None, cache_items: int = 200_000):
        if matryoshka_dim is not None and matryoshka_dim <= 0:
            raise ValueError(f"matryoshka_dim must be positive, got {matryoshka_dim}")
        self.encoder, self.choice = load_encoder("passage_retriever", settings, matryoshka_dim=matryoshka_dim)
        self.cache = EmbeddingCache(self.encoder, max_items=cache_items)
        self.reranker, self.reranker_choice = load_reranker(settings, top_n=None, cache=self.cache)

    def retrieve(self, query: str, nodes: Sequence[BaseNode], top_k: int = DEFAULT_TOP_K,
                 top_n: int = DEFAULT_TOP_N, trace: RetrievalTrace | None = None) -> list[Passage]:
        """The ``top_n`` best passages for ``query`` among ``nodes``, best first, recorded in ``trace``."""
        if not query.strip():
            raise ValueError("query is empty")
        if top_k < 1 or top_n < 1:
            raise ValueError(f"top_k and top_n must be at least 1 (got {top_k}, {top_n})")
        trace = trace if trace is not None else RetrievalTrace()
        trace.use_model(self.choice)
        trace.use_model(self.reranker_choice)
        hits_before, misses_before = self.cache.hits, self.cache.misses
        with trace.stage("passage_retrieval", passages_in=len(nodes), top_k=top_k) as rec:
            dense = DenseNodeRetriever(nodes, self.cache, top_k=top_k).retrieve(query)
            # Counters are shared across threads, so these are approximate under concurrency.
            rec.info.update(kept=len(dense), cache_hits=self.cache.hits - hits_before,
                            cache_misses=self.cache.misses - misses_before)
        with trace.stage("rerank", passages_in=len(dense), top_n=top_n, reranker=self.reranker_choice.model) as rec:
            reranked = self.reranker.postprocess_nodes(dense, query_str=query)[:top_n]
            rec.info["kept"] = len(reranked)
        dense_scores = {h.node.node_id: h.score for h in dense}
        passages = [to_passage(h, dense_scores.get(h.node.node_id)) for h in reranked]
        trace.passages = passages
        return passages
