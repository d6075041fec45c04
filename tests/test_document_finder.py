"""Stage 3's two searches: the patient pages are searched beside HSRDR, not after it."""

from __future__ import annotations

import threading

from cpqa.documents.finder import DocumentFinder
from cpqa.documents.hsrdr import DocumentSearch
from cpqa.documents.path import DocumentQuery
from cpqa.options import PipelineOptions


class _Patient:
    ready = True

    def __init__(self):
        self.searching = threading.Event()

    def search(self, query, k, kinds, pool, asked="", focus_pool=0):
        self.searching.set()
        return []


class _Hsrdr:
    def __init__(self, patient: _Patient, wait: float = 5.0):
        self.patient, self.wait, self.saw_patient = patient, wait, False

    def search(self, query, options):
        # true only when the patient search runs meanwhile
        self.saw_patient = self.patient.searching.wait(timeout=self.wait)
        return DocumentSearch()


def test_the_patient_pages_are_searched_while_hsrdr_searches():
    patient = _Patient()
    hsrdr = _Hsrdr(patient)
    found = DocumentFinder(hsrdr, patient).run(DocumentQuery(query_str="how common is anal cancer"), PipelineOptions())  # type: ignore[arg-type]
    assert hsrdr.saw_patient
    assert found.patient == [] and set(found.stages) >= {"documents", "patient_information"}
    assert list(found.stages)[0] == "documents"


def test_without_patient_information_among_the_sources_only_hsrdr_searches():
    patient = _Patient()
    options = PipelineOptions.of(sources=["D1"])
    found = DocumentFinder(_Hsrdr(patient, wait=0.0), patient).run(DocumentQuery(query_str="q"), options)  # type: ignore[arg-type]
    assert not patient.searching.is_set() and "patient_information" not in found.stages
