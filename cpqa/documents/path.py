"""What HSRDR and its document paths (E1 semantic, E2 the Boolean ladder, plain BM25) are asked, and the one interface
the paths share.

**The query.** A ``DocumentQuery`` is a LlamaIndex ``QueryBundle`` that carries the rewrite stage's result and may
carry the options. The pipeline rewrites a question once and hands the same ``DocumentQuery`` to E1, E2 and HSRDR
(``Pipeline.query_for`` makes one outside ``ask``). ``embedding_strs`` (set by HyDE) is what E1 embeds. Every
retriever is asked through LlamaIndex's ``retrieve()``, so its callbacks and instrumentation run: the options ride in
the query (``options``), and the retriever leaves its typed result there (``found``) beside the nodes it returns
(``retrieved``).

**The paths.** Each path is a LlamaIndex retriever whose ``search(query, options)`` returns ``PathHits``: PMIDs best
first with the path's own scores, the stage log, and what the path adds to the record (the model that served, the
ladder's levels, the backend that answered, or why it found nothing usable). HSRDR composes any paths through this
one type, with no branch per path; LlamaIndex's ``retrieve`` gives the same hits as PMID nodes.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from cpqa.documents.nodes import pmid_node
from cpqa.options import DocumentOptions
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.types import ComponentChoice, LadderLevel, StageLog


@dataclass
class DocumentQuery(QueryBundle):
    rewrite: RewriteResult | None = None
    options: DocumentOptions | None = None  # the retriever's own when None
    found: Any = None  # the typed result the retriever that answered left here
    # What the question is besides its words, for the stages after the search: the kinds of patient section it asks
    # for (D4 puts those first), and whether it got an urgent message (stage 4 keeps its evidence short and human)
    section_kinds: frozenset[str] = frozenset()
    urgent: bool = False

    def rewritten(self) -> RewriteResult:
        """The rewrite stage's result this query carries; E2 and HSRDR never rewrite a question themselves."""
        if self.rewrite is None:
            raise ValueError(
                "E2 and HSRDR search a rewritten question: ask with a DocumentQuery carrying its rewrite "
                "(Pipeline.query_for(question))"
            )
        return self.rewrite


def retrieved(retriever: BaseRetriever, query: str | QueryBundle, options: DocumentOptions | None = None) -> Any:
    """``retriever.retrieve`` of ``query`` with ``options`` (LlamaIndex's entry, so its callbacks and
    instrumentation run), and the typed result it left on the query; each call asks its own copy of the query, so
    concurrent searches never share one."""
    asked = replace(as_document_query(query), options=options, found=None)
    retriever.retrieve(asked)
    return asked.found


def as_document_query(query: str | QueryBundle) -> DocumentQuery:
    if isinstance(query, DocumentQuery):
        return query
    if isinstance(query, str):
        query = QueryBundle(query_str=query)
    if not query.query_str.strip():
        raise ValueError("the query is empty")
    return DocumentQuery(
        query_str=query.query_str, custom_embedding_strs=query.custom_embedding_strs, embedding=query.embedding
    )


def year_window(years: int | None = None, today: _dt.date | None = None) -> tuple[int | None, int | None]:
    """(first, last) publication year allowed: ``years`` = the last N calendar years including this one."""
    if years is None:
        return None, None
    if years < 1:
        raise ValueError("years must be at least 1")
    this = (today or _dt.date.today()).year
    return this - years + 1, this


class PathHits(StageLog):
    """What one path found for one query."""

    path: str
    hits: list[tuple[str, float]] = Field(default_factory=list)  # (PMID, the path's score), best first
    model: ComponentChoice | None = None  # the model that served (E1's query encoder)
    levels: list[LadderLevel] = Field(default_factory=list)  # the Boolean ladder's levels (E2)
    backend: str = ""  # what answered (E2: the local store or E-utilities)
    error: str | None = None  # why the path found nothing usable; HSRDR records the path as lost

    @property
    def pmids(self) -> list[str]:
        return [pmid for pmid, _ in self.hits]


class DocumentPath(BaseRetriever):
    """A document path: ``name`` is its key in ``DocumentOptions.weights`` and in the trace."""

    name: ClassVar[str]

    def __init__(self, options: DocumentOptions | None = None):
        super().__init__()
        self.options = options or DocumentOptions()

    def search(self, query: str | QueryBundle | DocumentQuery, options: DocumentOptions | None = None) -> PathHits:
        """This path's hits for ``query``, asked through LlamaIndex's ``retrieve()``."""
        return retrieved(self, query, options)

    def hits(self, query: DocumentQuery, options: DocumentOptions) -> PathHits:
        """The path's own search (each path implements it)."""
        raise NotImplementedError

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = as_document_query(query_bundle)
        query.found = found = self.hits(query, query.options or self.options)
        return [pmid_node(pmid, score, path=self.name, rank=rank) for rank, (pmid, score) in enumerate(found.hits, 1)]
