"""Stage 3 as one step: HSRDR's documents for the rewritten question, and the NIH patient pages' sections (D4)
beside them, returned as one ``DocumentSearch`` with each step's timing (the pipeline takes it into the trace)."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor

from cpqa.documents.hsrdr import PATIENT_INFORMATION, DocumentSearch, HSRDRRetriever
from cpqa.documents.page_focus import asked_with_names
from cpqa.documents.patient_search import PatientSearch
from cpqa.documents.path import DocumentQuery
from cpqa.options import PipelineOptions
from cpqa.rewrite.stages import roman_stages
from cpqa.types import StageRecord

PATIENT_NOT_READY = "patient information is still being indexed (cpqa ingest medquad): not searched yet"


class DocumentFinder:
    """``run(query, options)``: the documents HSRDR keeps for ``query`` (which carries the rewrite stage's result),
    with the patient sections when the home holds patient pages (``patient``) and D4 is among the sources."""

    def __init__(self, hsrdr: HSRDRRetriever, patient: PatientSearch | None = None):
        self.hsrdr, self.patient = hsrdr, patient

    def run(self, query: DocumentQuery, options: PipelineOptions) -> DocumentSearch:
        """HSRDR's search, with the patient search beside it in a thread of its own (it needs only the query, and
        takes the core E2's ladder leaves free)."""
        documents = options.documents
        wanted = self.patient is not None and PATIENT_INFORMATION in documents.sources
        with ThreadPoolExecutor(max_workers=1) as pool:
            patient = pool.submit(self._patient_sections, query, options) if wanted else None
            started = time.perf_counter()
            found = self.hsrdr.search(query, documents)
            searched = StageRecord(ms=(time.perf_counter() - started) * 1000.0, info={"kept": len(found.documents)})
            found.stages = {"documents": searched, **found.stages}  # the whole search first, then its steps
            found.query = query
            if patient is None:
                return found
            found.patient, found.stages["patient_information"] = patient.result()
        if self.patient is not None and not self.patient.ready:
            found.warn(PATIENT_NOT_READY)
        return found

    def _patient_sections(self, query: DocumentQuery, options: PipelineOptions) -> tuple[list, StageRecord]:
        """The patient sections for ``query`` and the step's record."""
        assert self.patient is not None
        documents, rewrite = options.documents, query.rewrite
        started = time.perf_counter()
        # the question as asked names its conditions: the search intent also glosses a symptom's clinical terms
        asked = asked_with_names(rewrite.question, rewrite.concepts) if rewrite is not None else query.query_str
        sections = self.patient.search(
            patient_query(query),
            documents.patient_sections,
            query.section_kinds,
            documents.patient_pool,
            asked=asked,
            focus_pool=documents.patient_focus_pool,
        )
        return sections, StageRecord(ms=(time.perf_counter() - started) * 1000.0, info={"sections": len(sections)})


def patient_query(query: DocumentQuery) -> str:
    """What the patient pages are searched by: the rewritten question, with each condition it names only by an
    abbreviation spelled out as the vocabulary knows it ("CLL": chronic lymphocytic leukemia), since a patient page
    spells its condition out, and with a stage written in Arabic numerals also in Roman ones ("stage 3": stage III),
    as the pages write it."""
    concepts = query.rewrite.concepts if query.rewrite is not None else []
    written = set(re.findall(r"\b[A-Z]{2,6}\b", query.query_str))  # the question's abbreviations, as written
    spelled = [
        next((n for n in c.synonyms if n.upper() != c.text.upper()), "")
        for c in concepts
        if c.kind == "disease" and c.text.upper() in written
    ]
    return " ".join([query.query_str, *(n for n in spelled if n), *roman_stages(query.query_str)])


__all__ = ["DocumentFinder", "patient_query"]
