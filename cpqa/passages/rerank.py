"""Stage 2 of passage retrieval: rerank candidate passages as a LlamaIndex node postprocessor.

The paper profile scores [query, passage] pairs with the MedCPT cross-encoder (512 tokens). No
cross-encoder weights exist offline, so the offline profile fuses BM25 (bm25s, fitted on the candidate
passages themselves) with dense similarity from the passage embeddings; the trace names it as such.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from cpqa.config import Settings, get_settings
from cpqa.models.encoders import EmbeddingCache, load_cross_encoder, load_encoder, load_model_by_id, pair_scorer
from cpqa.options import PassageOptions, RerankOptions
from cpqa.passages.node_vectors import node_vectors
from cpqa.types import ComponentChoice
from cpqa.words import passage_bm25_tokens

DEFAULT_TOP_N = PassageOptions().top_n  # the options' default, for a reranker built on its own


def _passage_text(node: NodeWithScore) -> str:
    return node.node.get_content(metadata_mode=MetadataMode.NONE)


def _ranked(nodes: list[NodeWithScore], scores: np.ndarray, top_n: int | None) -> list[NodeWithScore]:
    """New NodeWithScore objects (the input nodes may be shared across threads), best first, stable on ties."""
    order = sorted(range(len(nodes)), key=lambda i: (-float(scores[i]), i))
    if top_n is not None:
        order = order[:top_n]
    return [NodeWithScore(node=nodes[i].node, score=float(scores[i])) for i in order]


def _min_max(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant vector scales to zeros so it adds nothing to the fusion."""
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - low) / (high - low)).astype(np.float32)


def bm25_scores(query: str, passages: list[str]) -> np.ndarray:
    """BM25 scores of ``query`` against ``passages``, with the index built over those passages alone."""
    import bm25s

    corpus = passage_bm25_tokens(passages)
    query_tokens = passage_bm25_tokens([query])[0]
    if not query_tokens or not any(corpus):
        return np.zeros(len(passages), dtype=np.float32)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    return np.asarray(retriever.get_scores(query_tokens), dtype=np.float32)


class FusionReranker(BaseNodePostprocessor):
    """BM25 + dense fusion: ``w * minmax(dense) + (1 - w) * minmax(bm25)`` over the candidates.

    Dense similarity comes from the passage encoder through an ``EmbeddingCache`` (shared with the
    stage-1 retriever, so passages are not encoded twice).
    """

    top_n: Optional[int] = Field(default=DEFAULT_TOP_N, description="passages kept; None keeps all")
    options: RerankOptions = Field(default_factory=RerankOptions, description="the fusion's tuned weight")
    _cache: EmbeddingCache = PrivateAttr()

    def __init__(self, cache: EmbeddingCache, **kwargs: Any):
        super().__init__(**kwargs)
        self._cache = cache

    @classmethod
    def class_name(cls) -> str:
        return "FusionReranker"

    @classmethod
    def from_model_name(
        cls, model: str, top_n: int | None = DEFAULT_TOP_N, options: RerankOptions | None = None
    ) -> "FusionReranker":
        """The fusion reranker with any sentence-transformers embedder by name or path (the bundled MiniLM too)."""
        return cls(EmbeddingCache(load_model_by_id(model)), top_n=top_n, options=options or RerankOptions())

    def fused_scores(
        self, query: str, passages: list[str], vectors: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fused, dense, bm25) scores for ``passages`` (``vectors``: their passage vectors, when known)."""
        vectors = self._cache.encode(passages) if vectors is None else vectors
        query_vec = self._cache.encode([query])[0]
        dense = vectors @ query_vec
        bm25 = bm25_scores(query, passages)
        weight = self.options.dense_weight
        fused = weight * _min_max(dense) + (1.0 - weight) * _min_max(bm25)
        return fused, dense, bm25

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: Optional[QueryBundle] = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("FusionReranker needs the query")
        if not nodes:
            return []
        fused, _, _ = self.fused_scores(
            query_bundle.query_str,
            [_passage_text(n) for n in nodes],
            node_vectors([n.node for n in nodes], self._cache),
        )
        return _ranked(nodes, fused, self.top_n)


class CrossEncoderReranker(BaseNodePostprocessor):
    """Scores [query, passage] pairs with a sentence-transformers CrossEncoder (MedCPT-Cross-Encoder)."""

    top_n: Optional[int] = Field(default=DEFAULT_TOP_N, description="passages kept; None keeps all")
    batch_size: int = 16
    _model: Any = PrivateAttr()

    def __init__(self, model: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self._model = model

    @classmethod
    def class_name(cls) -> str:
        return "CrossEncoderReranker"

    @classmethod
    def from_model_name(
        cls, model: str, top_n: int | None = DEFAULT_TOP_N, settings: Settings | None = None
    ) -> "CrossEncoderReranker":
        """A reranker over any cross-encoder by name or path (as LlamaIndex's ``SentenceTransformerRerank(model=)``),
        run on the configured runtime and device like the product's own."""
        return cls(pair_scorer(model, settings or get_settings()), top_n=top_n)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: Optional[QueryBundle] = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("CrossEncoderReranker needs the query")
        if not nodes:
            return []
        pairs = [[query_bundle.query_str, _passage_text(n)] for n in nodes]
        scores = np.asarray(
            self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False), dtype=np.float32
        ).reshape(len(nodes))
        return _ranked(nodes, scores, self.top_n)


def load_reranker(
    settings: Settings,
    *,
    top_n: int | None = DEFAULT_TOP_N,
    cache: EmbeddingCache | None = None,
    options: RerankOptions | None = None,
) -> tuple[BaseNodePostprocessor, ComponentChoice]:
    """The reranker for the configured profile and the choice that picked it (for the trace).

    ``cache`` lets the fusion reranker share passage embeddings with the stage-1 retriever. Raises
    ``ModelUnavailable`` when the paper profile is forced and the cross-encoder cannot load.
    """
    model, choice = load_cross_encoder(settings)
    if model is not None:
        return CrossEncoderReranker(model, top_n=top_n), choice
    if cache is None:
        encoder, _ = load_encoder("passage_retriever", settings)
        cache = EmbeddingCache(encoder)
    return FusionReranker(cache, top_n=top_n, options=options or RerankOptions()), choice


__all__ = ["CrossEncoderReranker", "FusionReranker", "bm25_scores", "load_reranker"]
