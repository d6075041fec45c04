"""Multi-query passage retrieval: the question and its variants each retrieved by the same retriever, the rankings
fused by reciprocal rank (``cpqa.fusion``) as LlamaIndex's ``QueryFusionRetriever`` fuses them (k = 60 on
0-based ranks: ``PassageOptions.multi_query_k``). The variants are given (the rewrite's concept variants,
``cpqa.rewrite.query_variants``), so no language model generates them."""

from __future__ import annotations

from typing import Sequence

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from cpqa.fusion import rrf_fuse


class ConceptFusionRetriever(BaseRetriever):
    """One retriever asked with the question and with each given variant; the rankings fused, ``top_n`` kept."""

    def __init__(self, retriever: BaseRetriever, variants: Sequence[str], top_n: int, k: int):
        """``k``: the reciprocal-rank constant on 0-based ranks (``PassageOptions.multi_query_k``)."""
        super().__init__()
        self.retriever, self.variants, self.top_n, self.k = retriever, list(variants), top_n, k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        queries = [query_bundle.query_str, *self.variants]
        nodes: dict[str, NodeWithScore] = {}
        rankings: dict[str, list[str]] = {}
        for i, query in enumerate(queries):
            found = sorted(self.retriever.retrieve(query), key=lambda hit: hit.score or 0.0, reverse=True)
            for hit in found:
                nodes.setdefault(hit.node.hash, hit)
            rankings[f"query {i}"] = [hit.node.hash for hit in found]
        fused = rrf_fuse(rankings, k=self.k - 1)[: self.top_n]  # rrf_fuse counts ranks from 1
        return [NodeWithScore(node=nodes[key].node, score=score) for key, score, _ in fused]
