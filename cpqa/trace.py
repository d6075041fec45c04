"""The retrieval trace: everything the pipeline decided for one question, assembled by ``Pipeline`` from the
typed results the stages return (no stage writes into it). JSON-serialisable as it is."""

from __future__ import annotations

from pydantic import BaseModel, Field

from cpqa.documents.hsrdr import DocumentSearch
from cpqa.options import PipelineOptions
from cpqa.passages.finder import PassageFinding
from cpqa.rewrite.adaptive import RetrievalDecision
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.safety.categories import Finding
from cpqa.safety.screening import Screened
from cpqa.types import Answer, Candidate, ComponentChoice, LadderLevel, Passage, PatientHit, RemovedSentence, StageLog


class RetrievalTrace(StageLog):
    """Per question: the screened question, the options and models used, the rewrite, every ladder level,
    every fused candidate (kept or dropped, with the reason), the passages, the answerer's context, per-stage
    timings (``stages``), warnings and the outside requests made."""

    question: str = ""  # after personal details were removed
    language: str = "English"  # the asker's
    translated_question: str | None = None  # a question in another language, in English for the search (a model's)
    triage: list[Finding] = Field(default_factory=list)  # every urgent or amber sign found, and which screen fired
    search_intent: str = ""  # the question after dialogue distillation / rewrite
    profile: str = "offline"
    models: dict[str, ComponentChoice] = Field(default_factory=dict)
    options: PipelineOptions = Field(default_factory=PipelineOptions)
    rewrite: RewriteResult | None = None
    retrieval_decision: RetrievalDecision | None = None  # adaptive retrieval, when on
    term_backend: str | None = None  # who answered E2: the local store or E-utilities (NCBI or a mirror)
    year_window: tuple[int | None, int | None] | None = None
    ladder: list[LadderLevel] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    patient: list[PatientHit] = Field(default_factory=list)  # NIH patient sections found (D4), best first
    passages: list[Passage] = Field(default_factory=list)
    context: list[Passage] = Field(default_factory=list)  # the answerer's evidence when a postprocessor reshaped it
    removed_sentences: list[RemovedSentence] = Field(
        default_factory=list
    )  # answer sentences their citations do not support
    ncbi_requests: int = 0
    lost_paths: dict[str, str] = Field(default_factory=dict)  # "E1"/"E2" -> why

    def record_documents(self, found: DocumentSearch) -> None:
        """Take in what stage 3 decided: its timings and warnings, ladder, candidates, lost paths, requests and the
        patient sections."""
        self.absorb(found)
        self.ladder, self.candidates, self.lost_paths = found.ladder, found.candidates, found.lost_paths
        self.patient = found.patient
        self.term_backend, self.year_window = found.term_backend, found.year_window
        self.ncbi_requests += found.ncbi_requests
        if found.semantic_model is not None:
            self.use_model(found.semantic_model)

    def record_passages(self, finding: PassageFinding) -> list[Passage]:
        """Take in what stage 4 found; returns the answerer's context."""
        self.absorb(finding)
        self.passages = finding.passages
        if finding.reshaped:
            self.context = finding.context
        return finding.context

    def record_triage(self, raised: Screened, log: StageLog) -> Screened:
        """Take in the model's triage pass: its log, and what the screened question became (returned)."""
        self.absorb(log)
        self.triage, self.language = list(raised.triage), raised.language
        self.translated_question = raised.english
        return raised

    def use_model(self, choice: ComponentChoice) -> None:
        self.models[choice.component] = choice


class Result(BaseModel):
    """``Pipeline.ask``: the checked answer and the trace of how it was found."""

    answer: Answer
    trace: RetrievalTrace


class Retrieved(BaseModel):
    """``Pipeline.retrieve``: the screening result and the trace of the evidence found, no answer."""

    screened: Screened
    trace: RetrievalTrace
