"""Multi-query passage retrieval as LlamaIndex's ``QueryFusionRetriever``: the question and its variants each
retrieved, the rankings fused by reciprocal rank (k = 60). The variants are given (the rewrite's concept
variants, ``cpqa.rewrite.query_variants``), so no language model generates them."""

from __future__ import annotations

from typing import Sequence

from llama_index.core.retrievers import BaseRetriever, QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import QueryBundle

from cpqa.models.llama_llm import PipelineLLM


class ConceptFusionRetriever(QueryFusionRetriever):
    """``QueryFusionRetriever`` over one retriever, with the extra queries given instead of generated."""

    def __init__(self, retriever: BaseRetriever, variants: Sequence[str], top_n: int):
        self._variants = [QueryBundle(query_str=v) for v in variants]
        # The base class wants an LLM to generate queries; the variants are given, so none is ever called.
        super().__init__(
            [retriever],
            llm=PipelineLLM(None),
            mode=FUSION_MODES.RECIPROCAL_RANK,
            similarity_top_k=top_n,
            num_queries=len(self._variants) + 1,
            use_async=False,
        )

    def _get_queries(self, original_query: str) -> list[QueryBundle]:
        return list(self._variants)
