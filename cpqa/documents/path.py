"""One interface for HSRDR's document paths (E1 semantic, E2 the Boolean ladder, plain BM25).

Each path is a LlamaIndex retriever whose ``search(query, options)`` returns ``PathHits``: PMIDs best first with the
path's own scores, the stage log, and what the path adds to the record (the model that served, the ladder's levels,
the backend that answered, or why it found nothing usable). HSRDR composes any paths through this one type, with no
branch per path; LlamaIndex's ``retrieve`` gives the same hits as PMID nodes.
"""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field

from cpqa.documents.nodes import pmid_node
from cpqa.documents.query import DocumentQuery, as_document_query, retrieved
from cpqa.options import DocumentOptions
from cpqa.types import ComponentChoice, LadderLevel, StageLog


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
