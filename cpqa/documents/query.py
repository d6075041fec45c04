"""What a document retriever is asked: a LlamaIndex ``QueryBundle`` that may carry the rewrite and the options.

The pipeline rewrites a question once and hands the same ``DocumentQuery`` to E1, E2 and HSRDR; a plain string
or ``QueryBundle`` works too (E2 then rewrites it itself). ``embedding_strs`` (set by HyDE) is what E1 embeds.

Every retriever is asked through LlamaIndex's ``retrieve()``, so its callbacks and instrumentation run: the options
ride in the query (``options``), and the retriever leaves its typed result there (``found``) beside the nodes it
returns (``retrieved``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import QueryBundle

from cpqa.options import DocumentOptions
from cpqa.rewrite.rewriter import RewriteResult


@dataclass
class DocumentQuery(QueryBundle):
    rewrite: RewriteResult | None = None
    options: DocumentOptions | None = None  # the retriever's own when None
    found: Any = None  # the typed result the retriever that answered left here

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
