"""Passage vectors of LlamaIndex nodes: the embedding the segmenter set (the mean of the chunk's sentence vectors), or,
for a node that carries none (another splitter's, a test's), the passage embedder's vector of its text."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from llama_index.core.schema import BaseNode, MetadataMode

from cpqa.models.encoders import EmbeddingCache


def node_text(node: BaseNode) -> str:
    """The text a passage is embedded and reranked by (metadata stays out, so the cache key is the text)."""
    return node.get_content(metadata_mode=MetadataMode.NONE)


def node_vectors(nodes: Sequence[BaseNode], cache: EmbeddingCache) -> np.ndarray:
    """One row per node, in the passage embedder's space."""
    if not nodes:
        return np.zeros((0, cache.encoder.dim), dtype=np.float32)
    missing = [i for i, n in enumerate(nodes) if n.embedding is None or len(n.embedding) != cache.encoder.dim]
    encoded = cache.encode([node_text(nodes[i]) for i in missing]) if missing else None
    rows = np.empty((len(nodes), cache.encoder.dim), dtype=np.float32)
    for position, i in enumerate(missing):
        rows[i] = encoded[position]  # type: ignore[index]
    for i, node in enumerate(nodes):
        if node.embedding is not None and len(node.embedding) == cache.encoder.dim:
            rows[i] = node.embedding
    return rows


__all__ = ["node_text", "node_vectors"]
