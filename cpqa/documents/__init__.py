"""Stage 3, document retrieval: E1 (semantic), E2 (Boolean ladder) and HSRDR (their fusion), each a LlamaIndex
``BaseRetriever`` returning documents as nodes with provenance; the vector stores E1 searches.

Front: ``DocumentFinder`` (``run(DocumentQuery, options) -> DocumentSearch``: HSRDR's documents and the patient
sections beside them) and its result ``DocumentSearch``; what it is asked (``DocumentQuery``, carrying the rewrite),
the parts it is built from: ``HSRDRRetriever`` (also asked on its own through LlamaIndex's ``retrieve``), the paths it
composes (``SemanticRetriever`` over ``SemanticSearch``, ``BooleanLadderRetriever``, ``Bm25Retriever``), the record
reranker after its fusion (``RecordReranker``) and the patient pages' search (``open_patient_search``,
``PATIENT_INFORMATION``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

_EXPORTS = {
    "DocumentFinder": "cpqa.documents.finder",
    "HSRDRRetriever": "cpqa.documents.hsrdr",
    "DocumentSearch": "cpqa.documents.hsrdr",
    "PATIENT_INFORMATION": "cpqa.documents.hsrdr",
    "DocumentQuery": "cpqa.documents.path",
    "SemanticRetriever": "cpqa.documents.semantic",
    "SemanticSearch": "cpqa.documents.semantic",
    "BooleanLadderRetriever": "cpqa.documents.boolean_search",
    "uses_local_store": "cpqa.documents.boolean_search",
    "Bm25Retriever": "cpqa.documents.bm25",
    "open_patient_search": "cpqa.documents.patient_search",
    "RecordReranker": "cpqa.documents.record_rerank",
}
__all__ = [
    "Bm25Retriever",
    "BooleanLadderRetriever",
    "DocumentFinder",
    "DocumentQuery",
    "DocumentSearch",
    "HSRDRRetriever",
    "open_patient_search",
    "PATIENT_INFORMATION",
    "RecordReranker",
    "SemanticRetriever",
    "SemanticSearch",
    "uses_local_store",
]
__getattr__ = lazy_front(__name__, _EXPORTS)

if TYPE_CHECKING:
    from cpqa.documents.bm25 import Bm25Retriever
    from cpqa.documents.finder import DocumentFinder
    from cpqa.documents.boolean_search import BooleanLadderRetriever, uses_local_store
    from cpqa.documents.hsrdr import DocumentSearch, HSRDRRetriever, PATIENT_INFORMATION
    from cpqa.documents.patient_search import open_patient_search
    from cpqa.documents.record_rerank import RecordReranker
    from cpqa.documents.path import DocumentQuery
    from cpqa.documents.semantic import SemanticRetriever, SemanticSearch
