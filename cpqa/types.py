"""Typed objects the pipeline stages exchange: articles, search results, candidates, passages,
answers and the retrieval trace. All are pydantic models, so they serialise to JSON as they are."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Iterator, Literal

from pydantic import BaseModel, Field

Category = Literal["E1", "E2", "E3"]  # semantic only, Boolean only, both
# PubMed abstract, PMC review full text, other PMC full text, a section of an NIH patient-information page
Source = Literal["D1", "D2", "D3", "D4"]
Mode = Literal["patient", "clinician"]


# ---------------------------------------------------------------- articles
class Question(BaseModel):
    """What stage 1 reads: the question as it was typed and a dialogue's earlier turns (personal details not yet
    removed; the screen removes them)."""

    text: str | None
    history: list[str] = Field(default_factory=list)


class AbstractSection(BaseModel):
    label: str | None = None  # e.g. "BACKGROUND"; None for an unstructured abstract
    nlm_category: str | None = None
    text: str


class MeshQualifier(BaseModel):
    name: str
    ui: str | None = None
    major: bool = False


class MeshHeading(BaseModel):
    descriptor: str
    ui: str | None = None
    major: bool = False
    qualifiers: list[MeshQualifier] = Field(default_factory=list)

    @property
    def is_major(self) -> bool:
        return self.major or any(q.major for q in self.qualifiers)


class BodySection(BaseModel):
    title: str | None = None
    paragraphs: list[str] = Field(default_factory=list)


class Article(BaseModel):
    """One PubMed record or PMC article, as parsed from NCBI XML or JATS."""

    pmid: str | None = None
    pmcid: str | None = None  # "PMC1234567"
    doi: str | None = None
    title: str = ""
    abstract_sections: list[AbstractSection] = Field(default_factory=list)
    mesh: list[MeshHeading] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    journal: str | None = None
    year: int | None = None
    pub_date: str | None = None  # as precise as the record gives: "2019", "2019-03", "2019-03-14"
    article_type: str | None = None  # JATS article-type, e.g. "review-article"
    body_sections: list[BodySection] = Field(default_factory=list)
    retracted_by: list[str] = Field(default_factory=list)  # PMIDs of retraction notices (CommentsCorrections)

    @property
    def abstract(self) -> str:
        return "\n".join(f"{s.label}: {s.text}" if s.label else s.text for s in self.abstract_sections).strip()

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract)

    @property
    def title_and_abstract(self) -> str:
        """ "title. abstract": what E1's offline encoders embed and the record reranker reads of a record."""
        return ". ".join(part for part in (self.title.rstrip("."), self.abstract) if part)

    @property
    def has_full_text(self) -> bool:
        return any(s.paragraphs for s in self.body_sections)

    @property
    def is_review(self) -> bool:
        if self.article_type and "review" in self.article_type.lower():
            return True
        return any(pt.lower() in {"review", "systematic review", "meta-analysis"} for pt in self.publication_types)

    @property
    def key(self) -> str:
        return self.pmid or self.pmcid or ""


class SearchResult(BaseModel):
    """An esearch answer, from NCBI, the mirror or the local store."""

    count: int
    pmids: list[str]
    query_translation: str | None = None
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- retrieval
class ComponentChoice(BaseModel):
    """Which model serves a component, and why (auto picks per component)."""

    # "semantic_query", "article_encoder", "sentence_embedder", "passage_retriever", "evidence_scorer", "reranker",
    # "rewriter", "answerer"
    component: str
    model: str
    provider: str = ""  # language models: "anthropic" or "openai-compatible"
    profile: Literal["paper", "offline"]
    reason: str = ""
    runtime: str | None = None  # encoders: what runs the forward pass (torch, onnx, onnx-int8)


class LadderLevel(BaseModel):
    level: int
    expression: str
    count: int = 0
    new_pmids: int = 0
    ms: float = 0.0
    error: str | None = None


class Candidate(BaseModel):
    """A document that document retrieval proposes, with how it was found."""

    pmid: str
    category: Category
    source: Source = "D1"
    rrf: float = 0.0
    semantic_score: float | None = None
    semantic_rank: int | None = None
    boolean_rank: int | None = None
    bm25_rank: int | None = None  # the optional plain-BM25 path
    reranker_score: float | None = None  # the record reranker's logit, for the records it read
    pmcid: str | None = None
    title: str = ""
    year: int | None = None
    journal: str | None = None
    evidence_type: str | None = None  # cpqa.documents.study_type: "randomized controlled trial", "animal study"...
    kept: bool = True
    dropped_reason: str | None = None


class Passage(BaseModel):
    """A retrieved passage with its provenance and scores."""

    node_id: str
    pmid: str  # the record's key: a PMID, or for a patient page's section (D4) its key
    text: str
    score: float = 0.0  # final score: its order in the evidence (the reranker's, fused with the record prior)
    rerank_score: float | None = None  # the reranker's own
    dense_score: float | None = None
    section: str | None = None
    source: Source = "D1"
    category: Category | None = None
    start: int | None = None  # character offsets in the source text
    end: int | None = None
    pmcid: str | None = None
    title: str = ""
    year: int | None = None
    journal: str | None = None
    evidence_type: str | None = None  # the record's, from its publication types and MeSH (study_type)
    conclusion: str | None = None  # the record's conclusions when the passage does not hold them (for the answerer)
    # The passage's sentences as [start, end) offsets into ``text``, when its segmenter recorded them (SEOS does).
    sentences: list[tuple[int, int]] | None = Field(default=None, exclude=True, repr=False)
    # D4, a section of an NIH patient page: ``pmid`` holds its key (``PatientSection.key``), ``title`` the page's,
    # ``section`` its heading; who publishes it and where a reader finds it:
    site: str | None = None
    url: str | None = None
    kind: str | None = None  # the section's kind ("symptoms", "treatment"): what it answers

    @property
    def is_patient_information(self) -> bool:
        return self.source == "D4"

    @property
    def evidence_text(self) -> str:
        """What an answerer is shown of the record: the passage, then its conclusions when the passage lacks them."""
        return f"{self.text}\n{self.conclusion}" if self.conclusion else self.text


# ---------------------------------------------------------------- answer
class RemovedSentence(BaseModel):
    """An answer sentence the evidence does not support, removed before the reader saw the answer: one its citations
    do not support, or one that cites nothing and that no passage supports ("uncited")."""

    sentence: str
    pmids: list[str] = Field(default_factory=list)
    score: float | None = None  # offline support score (0..1)
    judged_by: str = "support score"  # or "llm" (a verification pass)
    verdict: str = "unsupported"  # or "contradicted", or "uncited"


class Answer(BaseModel):
    text: str
    citations: list[str] = Field(default_factory=list)  # PMIDs in order of first citation
    abstained: bool = False
    flags: list[str] = Field(default_factory=list)  # e.g. "removed_unknown_citation:123"
    disclaimer: str = ""
    written_by: Literal["llm", "extractive", "triage"] = "extractive"
    urgent: str | None = None  # urgent-care message, shown first
    # the care-team or pharmacist referral (personal dosing, one's own medicines together, a personal treatment
    # decision), shown after the urgent message on every path: an answer, an abstention, no evidence, an error
    referral: str | None = None
    notices: list[str] = Field(default_factory=list)  # e.g. "question truncated", "personal details removed"
    removed_sentences: list[RemovedSentence] = Field(default_factory=list)  # unsupported by what they cite
    # Whether the answer's sentences address what was asked (cpqa.answer.intent); False: it says first that the
    # evidence does not answer directly; None: not judged (an abstention, a triage message)
    direct: bool | None = None


class StageRecord(BaseModel):
    ms: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)


class StageLog(BaseModel):
    """Timings and warnings of one piece of work. Stage results extend it; the pipeline merges them (``absorb``)
    into the trace, so no stage writes into another's record."""

    stages: dict[str, StageRecord] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @contextmanager
    def stage(self, name: str, **info: Any) -> Iterator[StageRecord]:
        """Time a stage; the yielded record takes extra details while the stage runs."""
        record = self.stages.setdefault(name, StageRecord())
        record.info.update(info)
        start = time.perf_counter()
        try:
            yield record
        finally:
            record.ms += (time.perf_counter() - start) * 1000.0

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def absorb(self, other: "StageLog") -> None:
        """Take in another log's stage records (times add up) and warnings."""
        for name, record in other.stages.items():
            mine = self.stages.setdefault(name, StageRecord())
            mine.ms += record.ms
            mine.info.update(record.info)
        for message in other.warnings:
            self.warn(message)


class RetrievedDocument(BaseModel):
    """A document HSRDR keeps: how it was found, and its record (with the full text for D2/D3)."""

    candidate: Candidate
    article: Article


# ---------------------------------------------------------------- patient information
class PatientSection(BaseModel):
    """One section of an NIH patient-information page (MedQuAD today; MedlinePlus / PDQ in the same shape,
    ``cpqa.sources.patient_pages``): what a patient can read beside the PubMed evidence."""

    key: str  # the citation key, "cancergov-0000001_1-2": collection slug + "-" + MedQuAD's qid; never a PMID's shape
    site: str  # who publishes it, as a reader names it: "cancer.gov (NCI)", "MedlinePlus (NLM)", ...
    collection: str  # "1_CancerGov_QA"
    page: str  # "1_CancerGov_QA/0000001_1": collection + "/" + file, the unit the evaluation splits use
    url: str
    focus: str  # the condition
    title: str  # the page's title as a reader knows it: "Adult Acute Lymphoblastic Leukemia Treatment (PDQ)"
    kind: str  # MedQuAD's question type: "symptoms", "treatment", ...
    heading: str  # the section heading a reader sees: "Signs and symptoms"
    question: str = ""  # MedQuAD's question: for evaluation only, never indexed or searched
    text: str  # the section's text, cleaned; lines: paragraphs and "- " list items


class PatientHit(BaseModel):
    """A patient section found for a question, with its fused score and the rank each path gave it."""

    section: PatientSection
    score: float  # the reciprocal-rank fusion of the paths
    bm25_rank: int | None = None
    dense_rank: int | None = None
