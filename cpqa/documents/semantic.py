"""E1, the semantic path: query encoder -> vector index -> top-k PMIDs with scores.

Paper profile: the MedCPT query encoder ([CLS], 64 tokens) over MedCPT article vectors by inner product.
Offline: the bundled MiniLM over MiniLM vectors (unit length, so inner product is cosine).
The index records which encoder built it; a query encoder of another family is refused.
"""

from __future__ import annotations

import threading

import numpy as np

from cpqa.config import Settings
from cpqa.documents.path import DocumentPath, DocumentQuery, PathHits
from cpqa.documents.vector_index import IndexMeta, IndexMissing, VectorIndex
from cpqa.documents.vectorstore import open_index
from cpqa.models.encoders import MEDCPT_ARTICLE, MEDCPT_QUERY, MINILM, TRAINED, TextEncoder, load_encoder
from cpqa.options import DocumentOptions
from cpqa.types import ComponentChoice

__all__ = [
    "SemanticSearch",
    "SemanticRetriever",
    "IndexMissing",
    "EncoderMismatch",
    "ARTICLE_FOR_QUERY",
    "check_compatible",
]

# Which article encoder built the vectors a query encoder may search.
ARTICLE_FOR_QUERY = {MEDCPT_QUERY: MEDCPT_ARTICLE, MINILM: MINILM}


class EncoderMismatch(ValueError):
    """The index was built by an encoder family other than the query encoder's."""


def check_compatible(query_model: str, query_dim: int, meta: IndexMeta) -> None:
    expected = ARTICLE_FOR_QUERY.get(query_model, query_model)
    if meta.model != expected or meta.dim != query_dim:
        raise EncoderMismatch(
            f"the vector index was built by {meta.model} ({meta.dim}-d) but the query encoder is {query_model} "
            f"({query_dim}-d), which searches {expected} vectors: rebuild the index (`cpqa index build`) or set "
            f"CPQA_PROFILE to the profile that built it"
        )


class SemanticSearch:
    """Top-k PMIDs for a query; encoder and index load once, on first use, and are thread-safe to share."""

    def __init__(
        self,
        settings: Settings,
        index: VectorIndex | None = None,
        encoder: TextEncoder | None = None,
        choice: ComponentChoice | None = None,
    ):
        self.settings = settings
        self._index = index
        self._encoder = encoder
        self._choice = choice
        self._lock = threading.Lock()

    @property
    def choice(self) -> ComponentChoice:
        self._ensure()
        return self._choice  # type: ignore[return-value]

    def _ensure(self) -> tuple[TextEncoder, VectorIndex]:
        with self._lock:
            if self._index is None:
                self._index = open_index(self.settings)  # raises IndexMissing before a model is loaded
            if self._encoder is None:
                self._encoder, self._choice = load_encoder("semantic_query", self.settings)
            elif self._choice is None:
                self._choice = ComponentChoice(
                    component="semantic_query",
                    model=self._encoder.name,
                    profile="offline" if self._encoder.name in (MINILM, TRAINED) else "paper",
                    reason="encoder given by the caller",
                )
            check_compatible(self._encoder.name, self._encoder.dim, self._index.meta)
            return self._encoder, self._index

    def search(self, query: str, k: int = 100) -> list[tuple[str, float]]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int = 100) -> list[list[tuple[str, float]]]:
        if not queries or any(not q.strip() for q in queries):
            raise ValueError("semantic search needs non-empty query text")
        encoder, index = self._ensure()
        vectors = np.asarray(encoder.encode(queries), dtype=np.float32)
        return index.search(vectors, k)


class SemanticRetriever(DocumentPath):
    """E1 as a LlamaIndex retriever: the query's ``embedding_strs`` (the question; with HyDE, the question and a
    drafted answer, joined as in Query2Doc) -> query encoder -> vector index -> PMID nodes (score = similarity)."""

    name = "E1"

    def __init__(self, search: SemanticSearch, options: DocumentOptions | None = None):
        super().__init__(options)
        self.semantic = search

    def hits(self, query: DocumentQuery, options: DocumentOptions) -> PathHits:
        k = (options or self.options).e1_k
        result = PathHits(path=self.name)
        with result.stage("E1", k=k) as record:
            result.hits = self.semantic.search("\n".join(query.embedding_strs), k=k)
            record.info["hits"] = len(result.hits)
        result.model = self.semantic.choice
        return result
