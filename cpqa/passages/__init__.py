"""Stage 4, passages: SEOS segmentation (a ``NodeParser``), dense passage retrieval, rerankers
(``BaseNodePostprocessor``) and the postprocessors that shape the answerer's context.

Front: ``PassageFinder`` (``run(DocumentSearch, options) -> PassageFinding``) and its result
``PassageFinding``; the parts it is built from (``PassageRetriever``, ``PassageStore``, ``passage_segmenter``,
``PatientSentenceVectors``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

_EXPORTS = {
    "PassageFinder": "cpqa.passages.finder",
    "PassageFinding": "cpqa.passages.finder",
    "PassageRetriever": "cpqa.passages.dense",
    "PassageStore": "cpqa.passages.passage_store",
    "PASSAGES_FILE": "cpqa.passages.passage_store",
    "passage_segmenter": "cpqa.passages.bulk",
    "PatientSentenceVectors": "cpqa.passages.patient_vectors",
    "open_patient_vectors": "cpqa.passages.patient_vectors",
    "patient_sentences_dir": "cpqa.passages.patient_vectors",
}
__all__ = [
    "passage_segmenter",
    "PassageFinder",
    "PassageFinding",
    "PassageRetriever",
    "PASSAGES_FILE",
    "PassageStore",
    "PatientSentenceVectors",
    "open_patient_vectors",
    "patient_sentences_dir",
]
__getattr__ = lazy_front(__name__, _EXPORTS)

if TYPE_CHECKING:
    from cpqa.passages.bulk import passage_segmenter
    from cpqa.passages.dense import PassageRetriever
    from cpqa.passages.finder import PassageFinder, PassageFinding
    from cpqa.passages.passage_store import PASSAGES_FILE, PassageStore
    from cpqa.passages.patient_vectors import PatientSentenceVectors, open_patient_vectors, patient_sentences_dir
