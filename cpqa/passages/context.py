"""The answerer's context: LlamaIndex node postprocessors that run after reranking, in this order:
small-to-big (more source text around each passage), restructuring (topics of evidence sentences), repacking
(LlamaIndex's ``LongContextReorder``: the most relevant evidence at the edges of the context, against "lost in
the middle"). Each is off unless its ``PassageOptions`` switch is on.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from llama_index.core.postprocessor import LongContextReorder
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field, PrivateAttr

from cpqa.models.encoders import Encoder
from cpqa.options import PassageOptions
from cpqa.passages.dense import passage_node, to_passage
from cpqa.passages.restructure import restructure
from cpqa.passages.small_to_big import SourceText, Span, expand_passages
from cpqa.types import Passage


class PassagePostprocessor(BaseNodePostprocessor):
    """A postprocessor written over typed ``Passage`` objects: nodes in, ``transform``, nodes out."""

    def transform(self, passages: list[Passage], query: str) -> list[Passage]:
        raise NotImplementedError

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: Optional[QueryBundle] = None
    ) -> list[NodeWithScore]:
        passages = self.transform([to_passage(n) for n in nodes], query_bundle.query_str if query_bundle else "")
        return [passage_node(p) for p in passages]


class SmallToBigPostprocessor(PassagePostprocessor):
    """Each passage widened to its neighbouring passages or its section (``cpqa.passages.small_to_big``), as the
    options' ``small_to_big`` says ("off": left as they are), with their window and word budget."""

    options: PassageOptions = Field(default_factory=PassageOptions, description="small_to_big and its window, budget")
    _sources: Mapping[str, SourceText] = PrivateAttr()
    _siblings: Mapping[str, list[Span]] = PrivateAttr()

    def __init__(self, sources: Mapping[str, SourceText], siblings: Mapping[str, list[Span]], **kwargs):
        super().__init__(**kwargs)
        self._sources, self._siblings = sources, siblings

    @classmethod
    def class_name(cls) -> str:
        return "SmallToBigPostprocessor"

    def transform(self, passages: list[Passage], query: str) -> list[Passage]:
        options = self.options
        if options.small_to_big == "off":
            return passages
        return expand_passages(
            passages,
            self._sources,
            self._siblings,
            options.small_to_big,
            options.small_to_big_window,
            options.small_to_big_max_words,
        )


class RestructurePostprocessor(PassagePostprocessor):
    """Evidence sentences grouped into topics, the most central kept, topics by relevance
    (``cpqa.passages.restructure``)."""

    options: PassageOptions = Field(default_factory=PassageOptions, description="restructure's tuned values")
    _encoder: Encoder = PrivateAttr()
    _reranker: BaseNodePostprocessor = PrivateAttr()

    def __init__(self, encoder: Encoder, reranker: BaseNodePostprocessor, **kwargs):
        super().__init__(**kwargs)
        self._encoder, self._reranker = encoder, reranker

    @classmethod
    def class_name(cls) -> str:
        return "RestructurePostprocessor"

    def transform(self, passages: list[Passage], query: str) -> list[Passage]:
        if not query:
            raise ValueError("restructuring needs the question")
        return restructure(query, passages, self._encoder, self._reranker, self.options).passages


def context_postprocessors(
    options: PassageOptions,
    *,
    sources: Mapping[str, SourceText],
    siblings: Mapping[str, list[Span]],
    encoder: Encoder,
    reranker: BaseNodePostprocessor,
) -> list[BaseNodePostprocessor]:
    """The postprocessors ``options`` switch on, in order (empty: the reranked passages are the context)."""
    chain: list[BaseNodePostprocessor] = []
    if options.small_to_big != "off":
        chain.append(SmallToBigPostprocessor(sources, siblings, options=options))
    if options.restructure:
        chain.append(RestructurePostprocessor(encoder, reranker, options=options))
    if options.repack:
        chain.append(LongContextReorder())
    return chain


def apply(chain: Sequence[BaseNodePostprocessor], passages: Sequence[Passage], query: str) -> list[Passage]:
    """``passages`` through ``chain``."""
    nodes = [passage_node(p) for p in passages]
    for postprocessor in chain:
        nodes = postprocessor.postprocess_nodes(nodes, query_str=query)
    return [to_passage(n) for n in nodes]
