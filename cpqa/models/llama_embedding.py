"""A LlamaIndex ``BaseEmbedding`` over our ``TextEncoder``, for LlamaIndex parts that need an embedder
(``SemanticSplitterNodeParser``, ``Settings.embed_model``) so they use the profile's model, never a default."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from cpqa.models.encoders import EmbeddingCache, TextEncoder


class TextEncoderEmbedding(BaseEmbedding):
    """Embeds through a ``TextEncoder`` (optionally via an ``EmbeddingCache``); queries and texts alike."""

    _encoder: TextEncoder | EmbeddingCache = PrivateAttr()

    def __init__(self, encoder: TextEncoder | EmbeddingCache, **kwargs: Any):
        name = encoder.encoder.name if isinstance(encoder, EmbeddingCache) else encoder.name
        super().__init__(model_name=name, **kwargs)
        self._encoder = encoder

    @classmethod
    def class_name(cls) -> str:
        return "TextEncoderEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._encoder.encode([query])[0].tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._encoder.encode([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._encoder.encode(texts).tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)
