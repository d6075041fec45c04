"""The query pipeline end to end: safety screen -> rewrite -> HSRDR -> SEOS -> passages -> answer.

``Pipeline`` loads every model once and is safe to share across threads (the UI and load tests call it
concurrently): per-question state lives in the ``RetrievalTrace`` each ``ask`` creates, the shared caches are
locked. Options are a pydantic model recorded in ``trace.options``, so later variants plug in as configuration.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Sequence

from llama_index.core.schema import TextNode
from pydantic import BaseModel, Field

from cpqa.answer.answerer import Answerer, DISCLAIMERS
from cpqa.config import Settings, get_settings
from cpqa.models.encoders import EmbeddingCache, load_encoder
from cpqa.answer.extractive import unaddressed
from cpqa.documents.hsrdr import HSRDR, retrieve_documents
from cpqa.models.llm import Claude
from cpqa.passages.dense import DEFAULT_TOP_K, DEFAULT_TOP_N, PassageRetriever
from cpqa.rewrite.rewriter import Rewriter
from cpqa.safety.screening import ENGLISH_ONLY, Screened, check_question, scrub_phi
from cpqa.passages.seos import SEOSNodeParser, segment_article
from cpqa.strategies.options import StrategyOptions
from cpqa.strategies.runner import Strategies
from cpqa.types import Answer, Article, Candidate, ComponentChoice, Mode, RetrievalTrace, Source, StageRecord

LOAD_TIME_OPTIONS = frozenset({"matryoshka_dim"})


class PipelineOptions(StrategyOptions):
    """How one question is processed. Per-question fields may be overridden in ``Pipeline.ask``;
    ``matryoshka_dim`` is fixed when the pipeline loads."""

    mode: Mode = "patient"
    years: int | None = Field(default=None, ge=1, description="only evidence from the last N years")
    sources: tuple[Source, ...] = ("D1", "D2")
    max_documents: int | None = Field(default=None, ge=1, description="segment only the N best-fused documents "
                                      "(None: every document HSRDR keeps)")
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1, description="passages kept by the dense retriever")
    top_n: int = Field(default=DEFAULT_TOP_N, ge=1, description="passages kept by the reranker")
    matryoshka_dim: int | None = Field(default=None, ge=1, description="passage embedding size (paper profile)")


class Result(BaseModel):
    answer: Answer
    trace: RetrievalTrace


class _SegmentCache:
    """SEOS nodes per (article content, source), shared across questions; category is per question."""

    def __init__(self, parser: SEOSNodeParser, max_articles: int = 20_000):
        self.parser = parser
        self.max_articles = max_articles
        self._items: OrderedDict[str, list[TextNode]] = OrderedDict()
        self._lock = threading.Lock()

    def nodes(self, article: Article, source: str, category: str | None) -> list[TextNode]:
        key = hashlib.sha1(f"{source}\x00{article.model_dump_json()}".encode()).hexdigest()
        with self._lock:
            cached = self._items.get(key)
            if cached is not None:
                self._items.move_to_end(key)
        if cached is None:
            cached = segment_article(article, source=source, category=None, parser=self.parser)
            with self._lock:
                self._items[key] = cached
                while len(self._items) > self.max_articles:
                    self._items.popitem(last=False)
        # Copies: cached nodes are shared between threads, the category belongs to this question.
        return [n.model_copy(update={"metadata": {**n.metadata, "category": category}}) for n in cached]


def _rewriter_choice(llm: Claude, settings: Settings) -> ComponentChoice:
    if llm.available:
        return ComponentChoice(component="rewriter", model=settings.cpqa_llm_model, profile="paper",
                               reason="Anthropic API key configured")
    return ComponentChoice(component="rewriter", model="rule-based Boolean ladder", profile="offline",
                           reason="no Anthropic API key")


class Pipeline:
    """Load once, then ``ask`` from any thread."""

    def __init__(self, settings: Settings | None = None, options: PipelineOptions | None = None):
        self.settings = settings or get_settings()
        self.options = options or PipelineOptions()
        self.llm = Claude(self.settings)
        llm = self.llm if self.llm.available else None
        sentence_encoder, sentence_choice = load_encoder("sentence_embedder", self.settings)
        self.segments = _SegmentCache(SEOSNodeParser(EmbeddingCache(sentence_encoder)))
        self.passages = PassageRetriever(self.settings, matryoshka_dim=self.options.matryoshka_dim)
        self.rewriter = Rewriter(self.settings, llm=llm)
        self.documents = HSRDR(self.settings)  # store, semantic index and E-utilities client, shared
        # The extractive fallback ranks evidence sentences with the passage embedder (cached across questions).
        self.answerer = Answerer(self.settings, llm=llm, encoder=self.passages.cache)
        self.strategies = Strategies(self.settings, llm, self.answerer, self.passages)  # issue 10 options
        self.models = {
            "rewriter": _rewriter_choice(self.llm, self.settings),
            "answerer": self.answerer.choice,
            "sentence_embedder": sentence_choice,
            "passage_retriever": self.passages.choice,
            "reranker": self.passages.reranker_choice,
        }

    def close(self) -> None:
        self.documents.close()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def profile(self) -> str:
        """"paper" when every model component runs the paper's model, "offline" when none does, else "mixed"."""
        profiles = {c.profile for c in self.models.values()}
        return profiles.pop() if len(profiles) == 1 else "mixed"

    def resolve_options(self, **overrides: Any) -> PipelineOptions:
        """This pipeline's options with per-question overrides (None means keep the default)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        fixed = {k for k in given if k in LOAD_TIME_OPTIONS and given[k] != getattr(self.options, k)}
        if fixed:
            raise ValueError(f"{sorted(fixed)} are fixed when the pipeline loads; make a new Pipeline to change them")
        return PipelineOptions.model_validate({**self.options.model_dump(), **given})

    def ask(self, question: str, history: Sequence[str] = (), mode: Mode | None = None, years: int | None = None,
            sources: Sequence[Source] | None = None, progress: Callable[[str], None] | None = None,
            **overrides: Any) -> Result:
        """Answer ``question`` with cited evidence; raises ``InvalidQuestion`` for empty input.

        ``progress`` is called with each stage's name as it starts (for progress displays)."""
        options = self.resolve_options(mode=mode, years=years, sources=tuple(sources) if sources else None,
                                       **overrides)
        trace = RetrievalTrace(profile=self.profile, options=options.model_dump(mode="json"))
        for choice in self.models.values():
            trace.use_model(choice)
        started = time.perf_counter()
        notify = progress or (lambda stage: None)
        notify("safety")
        with trace.stage("safety") as rec:
            screened = check_question(question)
            turns = [scrub_phi(turn).text for turn in history if turn.strip()]
            rec.info.update(urgent=screened.urgent is not None, removed_phi=list(screened.removed_phi),
                            personal_dosing=screened.personal_dosing, history_turns=len(turns))
        trace.question = screened.question
        if not screened.language_ok:
            answer = Answer(text=ENGLISH_ONLY, abstained=True, written_by="triage", urgent=screened.urgent,
                            notices=[n for n in screened.notices if n != ENGLISH_ONLY])
        else:
            answer = self._answer_or_triage(screened, turns, options, trace, notify)
        answer = _ensure(answer, screened, options)
        trace.stages["total"] = StageRecord(ms=(time.perf_counter() - started) * 1000.0)
        return Result(answer=answer, trace=trace)

    def _answer_or_triage(self, screened: Screened, history: list[str], options: PipelineOptions,
                          trace: RetrievalTrace, notify: Callable[[str], None]) -> Answer:
        try:
            return self._answer(screened, history, options, trace, notify)
        except Exception as exc:
            if screened.urgent is None:
                raise
            # An urgent question always gets its urgent-care message, even when retrieval fails.
            trace.warn(f"evidence retrieval failed after urgent triage: {type(exc).__name__}")
            return Answer(text="", written_by="triage", urgent=screened.urgent, notices=screened.notices)

    def _answer(self, screened: Screened, history: list[str], options: PipelineOptions, trace: RetrievalTrace,
                notify: Callable[[str], None]) -> Answer:
        question = screened.question
        notify("rewrite")
        with trace.stage("rewrite") as rec:
            rewrite = self.rewriter.rewrite(question, history=history)
            rec.info.update(method=rewrite.method, ladder_levels=len(rewrite.ladder))
        trace.rewrite = rewrite.model_dump(mode="json")
        trace.search_intent = rewrite.search_intent or question
        unretrieved = self.strategies.unretrieved(trace.search_intent if history else question, options, screened,
                                                  trace)
        if unretrieved is not None:
            return unretrieved
        search_rewrite = self.strategies.semantic_rewrite(rewrite, options, trace)
        notify("documents")
        with trace.stage("documents") as rec:
            documents = retrieve_documents(trace.search_intent, search_rewrite, settings=self.settings,
                                           years=options.years,
                                           sources=options.sources, trace=trace, engine=self.documents)
            rec.info["kept"] = len(documents)
        notify("segmentation")
        documents = documents[:options.max_documents] if options.max_documents else documents
        with trace.stage("segmentation", documents=len(documents)) as rec:
            nodes = self._segment(documents)
            rec.info["passages"] = len(nodes)
        notify("passage_retrieval")
        passages = self.strategies.retrieve_passages(trace.search_intent, rewrite, nodes, options, trace)
        passages = self.strategies.context(trace.search_intent, passages, documents, nodes, options, trace)
        notify("answer")
        with trace.stage("answer", passages=len(passages)):
            # With dialogue history the distilled search intent is the self-contained question.
            answer = self.strategies.answer(trace.search_intent if history else question, passages, options,
                                            screened, trace)
        missing = unaddressed(rewrite.concepts, passages)
        if missing:
            trace.warn(f"the evidence found does not mention {', '.join(missing)}")
            if answer.written_by == "extractive" and not answer.abstained:
                answer = answer.model_copy(update={"abstained": True, "citations": [], "text": (
                    f"The evidence found does not mention {', '.join(missing)}, so no answer is quoted from it. "
                    "Try a broader question, or ask your care team.")})
        return answer

    def _segment(self, documents: list[tuple[Candidate, Article]]) -> list[TextNode]:
        nodes: list[TextNode] = []
        for candidate, article in documents:
            nodes.extend(self.segments.nodes(article, candidate.source, candidate.category))
        return nodes


def _ensure(answer: Answer, screened: Screened, options: PipelineOptions) -> Answer:
    """Every answer, whoever wrote it, carries the disclaimer and the urgent-care message."""
    return answer.model_copy(update={"disclaimer": answer.disclaimer or DISCLAIMERS[options.mode],
                                     "urgent": answer.urgent or screened.urgent})
