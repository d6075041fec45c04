"""Two-stage passage retrieval over the SEOS passages of one question's documents.

Stage 1: a dense retriever (PubMedBERT-Matryoshka in the paper profile, at a configurable Matryoshka dimension;
MiniLM offline) keeps the top-k passages. Stage 2: the reranker (``cpqa.passages.rerank``) keeps the top-n.
Both are LlamaIndex parts (``BaseRetriever``, ``BaseNodePostprocessor``), composed per question by
``TwoStageRetriever``; with ``multi_query`` a ``ConceptFusionRetriever`` runs it once per query variant.
Passage embeddings are cached across questions, so a passage seen before is not encoded again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TextNode
from pydantic import Field

from cpqa.config import Settings
from cpqa.quotable import addresses_reader
from cpqa.models.encoders import EmbeddingCache, load_encoder
from cpqa.options import PassageOptions, RerankOptions
from cpqa.passages.multi_query import ConceptFusionRetriever
from cpqa.passages.node_vectors import node_text, node_vectors
from cpqa.passages.record_prior import with_record_prior
from cpqa.passages.rerank import load_reranker
from cpqa.documents.study_type import PRECLINICAL
from cpqa.types import ComponentChoice, Passage, StageLog, StageRecord

_PASSAGE_FIELDS = set(Passage.model_fields) - {"node_id", "text", "score"}


def to_passage(hit: NodeWithScore, dense_score: float | None = None) -> Passage:
    """A retrieved node as a typed ``Passage``, its provenance taken from the node's metadata."""
    meta: dict[str, Any] = {k: v for k, v in hit.node.metadata.items() if k in _PASSAGE_FIELDS and v is not None}
    meta["pmid"] = str(meta.get("pmid") or "")
    if dense_score is not None:
        meta["dense_score"] = dense_score
    return Passage(node_id=hit.node.node_id, text=node_text(hit.node), score=float(hit.score or 0.0), **meta)


def passage_node(passage: Passage) -> NodeWithScore:
    """The inverse of ``to_passage``: a node whose metadata is the passage's provenance."""
    metadata = passage.model_dump(include=_PASSAGE_FIELDS)
    node = TextNode(
        id_=passage.node_id,
        text=passage.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=passage.score)


class DenseNodeRetriever(BaseRetriever):
    """Stage 1 as a LlamaIndex retriever over a given set of nodes (one question's passages)."""

    def __init__(self, nodes: Sequence[BaseNode], cache: EmbeddingCache, top_k: int = 20):
        super().__init__()
        self._nodes = list(nodes)
        self._cache = cache
        self._top_k = top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not self._nodes:
            return []
        vectors = node_vectors(self._nodes, self._cache)
        query = self._cache.encode([query_bundle.query_str])[0]  # cached: the reranker needs it too
        scores = vectors @ query
        k = min(self._top_k, len(self._nodes))
        best = np.argsort(-scores, kind="stable")[:k]
        return [NodeWithScore(node=self._nodes[i], score=float(scores[i])) for i in best]


class TwoStageRetriever(BaseRetriever):
    """Dense top-k, then the reranker's top-n, over one question's nodes. Built per question (cheap): it keeps
    that question's dense scores and stage timings."""

    def __init__(
        self,
        nodes: Sequence[BaseNode],
        cache: EmbeddingCache,
        reranker: BaseNodePostprocessor,
        top_k: int,
        top_n: int,
        reranker_name: str = "",
    ):
        super().__init__()
        self.dense = DenseNodeRetriever(nodes, cache, top_k=top_k)
        self.reranker, self.reranker_name = reranker, reranker_name
        self.passages_in, self.top_k, self.top_n = len(nodes), top_k, top_n
        self.cache = cache
        self.dense_scores: dict[str, float] = {}
        self.log = StageLog()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits_before, misses_before = self.cache.hits, self.cache.misses
        with self.log.stage("passage_retrieval", passages_in=self.passages_in, top_k=self.top_k) as record:
            dense = self.dense.retrieve(query_bundle)
            # Counters are shared across threads, so these are approximate under concurrency.
            record.info.update(
                kept=len(dense),
                cache_hits=self.cache.hits - hits_before,
                cache_misses=self.cache.misses - misses_before,
            )
        self.dense_scores.update({h.node.node_id: float(h.score or 0.0) for h in dense})
        with self.log.stage("rerank", passages_in=len(dense), top_n=self.top_n, reranker=self.reranker_name) as record:
            reranked = self.reranker.postprocess_nodes(dense, query_bundle=query_bundle)[: self.top_n]
            record.info["kept"] = len(reranked)
        return reranked


class PassageSearch(StageLog):
    """The passages kept for the answerer, best first, with their provenance and scores."""

    passages: list[Passage] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)  # more than one with multi_query


@dataclass
class PassageQuery(QueryBundle):
    """What the passage retriever is asked: the question, one question's nodes and how to rank them (see
    ``PassageRetriever.search``); it leaves its ``PassageSearch`` in ``found``."""

    nodes: Sequence[BaseNode] = ()
    options: PassageOptions | None = None
    variants: Sequence[str] = ()
    demotion: int = 0
    record_ranks: Mapping[str, int] | None = None
    found: PassageSearch | None = None


class PassageRetriever(BaseRetriever):
    """Holds the passage embeddings cache and the reranker across questions; a LlamaIndex retriever asked with a
    ``PassageQuery`` (``search`` builds one), composing the per-question retrievers. Thread-safe: the embedding cache
    is locked and each question gets its own retriever objects."""

    def __init__(
        self,
        cache: EmbeddingCache,
        reranker: BaseNodePostprocessor,
        choice: ComponentChoice,
        reranker_choice: ComponentChoice,
    ):
        super().__init__()
        self.cache, self.reranker = cache, reranker
        self.choice, self.reranker_choice = choice, reranker_choice

    @classmethod
    def load(
        cls, settings: Settings, *, matryoshka_dim: int | None = None, rerank: RerankOptions | None = None
    ) -> "PassageRetriever":
        """The profile's passage encoder (at ``matryoshka_dim``) and reranker, sharing one embedding cache."""
        if matryoshka_dim is not None and matryoshka_dim <= 0:
            raise ValueError(f"matryoshka_dim must be positive, got {matryoshka_dim}")
        encoder, choice = load_encoder("passage_retriever", settings, matryoshka_dim=matryoshka_dim)
        cache = EmbeddingCache(encoder)  # one bound for every cache (EmbeddingCache.DEFAULT_ITEMS)
        reranker, reranker_choice = load_reranker(settings, top_n=None, cache=cache, options=rerank)
        return cls(cache, reranker, choice, reranker_choice)

    def search(
        self,
        query: str,
        nodes: Sequence[BaseNode],
        options: PassageOptions | None = None,
        variants: Sequence[str] = (),
        demotion: int = 0,
        record_ranks: Mapping[str, int] | None = None,
    ) -> PassageSearch:
        """The ``top_n`` best passages for ``query`` among ``nodes``; with ``variants`` (multi-query), each
        variant is retrieved too and the rankings are fused by reciprocal rank. ``demotion``: places animal and
        cell-line passages move down (``PassageOptions.preclinical_demotion`` in patient mode). ``record_ranks``:
        each record's place in the document ranking (PMID -> 0-based), fused into the passage order
        (``cpqa.passages.record_prior``)."""
        if not query.strip():
            raise ValueError("query is empty")
        asked = PassageQuery(
            query_str=query,
            nodes=nodes,
            options=options,
            variants=variants,
            demotion=demotion,
            record_ranks=record_ranks,
        )
        self.retrieve(asked)  # LlamaIndex's entry: its callbacks and instrumentation run
        assert asked.found is not None
        return asked.found

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not isinstance(query_bundle, PassageQuery):
            raise TypeError("the passage retriever ranks one question's nodes: ask it with a PassageQuery")
        query_bundle.found = found = self._search(query_bundle)
        return [passage_node(p) for p in found.passages]

    def _search(self, asked: PassageQuery) -> PassageSearch:
        query, nodes, demotion, record_ranks = asked.query_str, asked.nodes, asked.demotion, asked.record_ranks
        options = asked.options or PassageOptions()
        variants = [v for v in asked.variants if v.strip() and v != query]
        two_stage = TwoStageRetriever(
            nodes, self.cache, self.reranker, options.top_k, options.top_k, self.reranker_choice.model
        )
        result = PassageSearch(queries=[query, *variants])
        if variants:
            with result.stage("multi_query", queries=result.queries) as record:
                hits = ConceptFusionRetriever(two_stage, variants, options.top_n, options.multi_query_k).retrieve(query)
                record.info["kept"] = len(hits)
        else:
            hits = two_stage.retrieve(query)
        result.absorb(two_stage.log)
        passages = [to_passage(h, two_stage.dense_scores.get(h.node.node_id)) for h in hits]
        if record_ranks is not None:
            ordered = with_record_prior(self._ordered(passages, result, 0), record_ranks, options, result, demotion)
            self._log_demoted(ordered, result, demotion)
        else:
            ordered = self._ordered(passages, result, demotion)
        result.passages = ordered[: options.top_n]
        if "rerank" in result.stages:  # the reranker ordered top_k; top_n of them go on
            result.stages["rerank"].info["kept"] = len(result.passages)
        return result

    @staticmethod
    def _log_demoted(passages: Sequence[Passage], log: StageLog, demotion: int) -> None:
        moved = [p for p in passages if demotion and p.evidence_type in PRECLINICAL]
        if moved:
            log.stages.setdefault("rerank", StageRecord()).info["preclinical_demoted"] = len(moved)

    @staticmethod
    def _ordered(passages: list[Passage], log: StageLog, demotion: int) -> list[Passage]:
        """The reranked passages with two priors applied. Evidence is data: a passage that addresses its reader
        (links, markup, instructions) ranks last. ``demotion``: passages from animal or cell-line studies move that
        many places down, behind human clinical evidence (patient mode)."""
        flagged = {p.node_id: p.pmid for p in passages if addresses_reader(p.text)}
        if flagged:
            log.warn(
                f"{len(flagged)} passage(s) hold text addressed to the reader (links, markup, instructions; "
                f"PMID {', '.join(dict.fromkeys(flagged.values()))}): ranked last, never quoted"
            )
        last = len(passages) + demotion
        PassageRetriever._log_demoted(passages, log, demotion)

        def place(item: tuple[int, Passage]) -> int:
            position, passage = item
            if passage.node_id in flagged:
                return last + position
            return position + (demotion if passage.evidence_type in PRECLINICAL else 0)

        return [p for _, p in sorted(enumerate(passages), key=place)]
