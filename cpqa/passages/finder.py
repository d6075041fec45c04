"""Stage 4 as one step: the kept documents' SEOS passages (stored or segmented now), dense retrieval and reranking
with the record prior, and the answerer's context, returned as a ``PassageFinding`` with each step's timing (the
pipeline takes it into the question's trace)."""

from __future__ import annotations

from typing import Callable

from pydantic import Field

from cpqa.documents.hsrdr import DocumentSearch
from cpqa.documents.study_type import PRECLINICAL
from cpqa.options import PipelineOptions
from cpqa.passages.context import apply, context_postprocessors
from cpqa.passages.dense import PassageRetriever
from cpqa.passages.patient import patient_passages
from cpqa.looked_for import LookedFor
from cpqa.passages.patient_vectors import PatientSentenceVectors
from cpqa.passages.segments import SegmentCache
from cpqa.passages.small_to_big import article_sources, node_spans
from cpqa.rewrite.query_variants import concept_queries
from cpqa.types import Passage, StageLog


class PassageFinding(StageLog):
    """What stage 4 found: the ranked passages, and the answerer's ``context`` (the passages, or what the context
    postprocessors made of them: ``reshaped``)."""

    passages: list[Passage] = Field(default_factory=list)
    context: list[Passage] = Field(default_factory=list)
    reshaped: bool = False


class PassageFinder:
    """The passages of a question's documents: ``run`` returns them with the answerer's context."""

    def __init__(
        self,
        segments: SegmentCache,
        retriever: PassageRetriever,
        patient_vectors: LookedFor[PatientSentenceVectors] | None = None,
    ):
        """``patient_vectors``: the patient sections' stored sentence vectors (once built), handed to the answer's
        embedding cache for the sections a question found (``cpqa.passages.patient_vectors``)."""
        self.segments, self.retriever, self.patient_vectors = segments, retriever, patient_vectors

    def run(
        self, found: DocumentSearch, options: PipelineOptions, notify: Callable[[str], None] = lambda stage: None
    ) -> PassageFinding:
        """Stage 4's entry: the passages of stage 3's documents, read with the question as it was searched (the
        query ``found`` carries: its rewrite and search intent); the patient sections stage 3 found are read first
        by a patient, after the research by a clinician. A question that got an urgent message keeps its evidence
        short and to human studies. ``notify`` hears each step as it starts (a progress display)."""
        query = found.query
        if query is None or query.rewrite is None:
            raise ValueError("stage 4 reads a search made from a rewritten question (DocumentFinder.run)")
        rewrite, search_intent, urgent, patient = query.rewrite, query.query_str, query.urgent, found.patient
        finding = PassageFinding()
        notify("segmentation")
        segments = self.segments
        demotion = options.passages.preclinical_demotion if options.answer.mode == "patient" else 0
        documents = found.documents[: options.passages.max_documents or None]
        with finding.stage("segmentation", documents=len(documents)) as record:
            before = (segments.segmented, segments.sentences_embedded, segments.passages_embedded)
            nodes = segments.nodes(documents)
            # Counters are shared across threads, so these are approximate under concurrency.
            record.info.update(
                passages=len(nodes),
                segmented=segments.segmented - before[0],
                sentences_embedded=segments.sentences_embedded - before[1],
                passages_embedded=segments.passages_embedded - before[2],
            )

        notify("passage_retrieval")
        variants = (
            concept_queries(rewrite.model_copy(update={"search_intent": search_intent}))[1:]
            if options.passages.multi_query
            else []
        )
        ranks = {d.candidate.pmid: place for place, d in enumerate(found.documents)}
        search = self.retriever.search(search_intent, nodes, options.passages, variants, demotion, ranks)
        finding.absorb(search)
        pages = patient_passages(patient, search_intent, options.passages.patient_passage_words)
        stored = self.patient_vectors.get() if self.patient_vectors is not None and pages else None
        if stored is not None:
            stored.remember(patient, self.retriever.cache, options.passages.patient_passage_words)
        if urgent:
            human = [p for p in search.passages if p.evidence_type not in PRECLINICAL]
            search.passages = human[: options.passages.urgent_top_n]
            pages = pages[:1]
        patient_first = options.answer.mode == "patient"
        search.passages = [*pages, *search.passages] if patient_first else [*search.passages, *pages]
        finding.passages = finding.context = search.passages
        chain = context_postprocessors(
            options.passages,
            siblings=node_spans(nodes),
            encoder=self.retriever.cache,
            reranker=self.retriever.reranker,
            sources=article_sources(d.article for d in documents) if options.passages.small_to_big != "off" else {},
        )
        if not chain:
            return finding
        with finding.stage("context", postprocessors=[type(p).__name__ for p in chain]) as record:
            research = apply(chain, [p for p in search.passages if not p.is_patient_information], search_intent)
            context = [*pages, *research] if patient_first else [*research, *pages]
            record.info.update(passages=len(context), words=sum(len(p.text.split()) for p in context))
        finding.context, finding.reshaped = context, True
        return finding
