"""The composition root: builds every model, client and store once, hands them to the stages, and runs a
question through them in order: safety -> rewrite -> documents (HSRDR) -> passages (SEOS, dense, rerank,
context) -> answer. Each stage returns a typed result; the pipeline assembles the ``RetrievalTrace`` from them.

``Pipeline`` is safe to share across threads (the UI and load tests call it concurrently): per-question state
lives in the trace each ``ask`` creates, the shared caches are locked.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence


from cpqa.answer import (
    NEEDS_LLM,
    SEARCH_FAILED,
    AnswerChooser,
    Answerer,
    AnswerWriter,
    Evidence,
    Refiner,
    answered_question,
    as_shown,
    record_share,
    section_kinds,
    without_retrieval,
)
from cpqa.config import Settings, get_settings
from cpqa.documents import (
    Bm25Retriever,
    BooleanLadderRetriever,
    DocumentFinder,
    DocumentQuery,
    DocumentSearch,
    HSRDRRetriever,
    RecordReranker,
    SemanticRetriever,
    SemanticSearch,
    open_patient_search,
    uses_local_store,
)
from cpqa.models.encoders import load_encoder
from cpqa.models.lazy_encoder import distinct_encoder
from cpqa.models.providers import load_llm
from cpqa.options import PipelineOptions
from cpqa.passages import (
    PASSAGES_FILE,
    PassageFinder,
    PassageRetriever,
    PassageStore,
    open_patient_vectors,
    passage_segmenter,
)
from cpqa.asking import Asking
from cpqa.progress import Progress
from cpqa.rewrite import AdaptiveRetrieval, Rewriter, RewriteResult, hyde_transform, load_vocabulary, pseudo_answer
from cpqa.safety import MeaningTriage, ModelTriage, Screen, Screened, TriagePass
from cpqa.safety import prepare as prepare_screening
from cpqa.sources.ncbi.client import EutilsClient
from cpqa.sources.store import Store
from cpqa.trace import Result, RetrievalTrace, Retrieved
from cpqa.types import Answer, Question, StageLog, StageRecord
from cpqa.words import is_specialist


def _open_passage_store(path: Path) -> PassageStore | None:
    """The persistent passage layer; None (segment in memory only) where the index folder cannot be written."""
    try:
        return PassageStore(path)
    except (OSError, sqlite3.Error):
        return None


class Pipeline:
    """Load once, then ``ask`` from any thread. The stage objects are attributes, for researchers and for the
    evaluation, which runs these same objects: ``semantic`` (E1), ``boolean`` (E2), ``bm25`` (plain BM25),
    ``documents`` (HSRDR), ``segments`` (SEOS), ``passages`` (dense + rerank), ``answerer``."""

    def __init__(
        self,
        settings: Settings | None = None,
        options: PipelineOptions | None = None,
        *,
        passages_path: Path | None = None,
    ):
        """``passages_path``: the passage store to read and fill (default: the data home's)."""
        self.settings = settings or get_settings()
        self.options = options or PipelineOptions()
        settings = self.settings
        prepare_screening()  # screening answers within milliseconds from the first question on
        is_specialist("warm")  # general-English word frequencies load now, not during the first answer
        self.llm = load_llm(settings)
        llm = self.llm if self.llm.available else None
        # Sources: the local store, and E-utilities (NCBI or a mirror) unless the store answers Boolean search.
        self.store = Store(settings.store_path)
        self.client = None if uses_local_store(settings) else EutilsClient(settings, self.store)
        # Rewrite.
        vocabulary = load_vocabulary(settings)
        self.rewriter = Rewriter(settings, llm=self.llm, vocabulary=vocabulary)
        self.adaptive = AdaptiveRetrieval(settings, llm, vocabulary=vocabulary)
        self.hyde = hyde_transform(self.llm, self.options.rewrite.hyde_max_tokens) if llm else None
        # Documents: E1, E2 and HSRDR composing them.
        documents = self.options.documents
        self.semantic = SemanticRetriever(SemanticSearch(settings), documents)
        self.boolean = BooleanLadderRetriever(self.client or self.store, documents)
        self.bm25 = Bm25Retriever(self.store, settings.index_dir / "bm25", documents)
        self.documents = HSRDRRetriever(
            [self.semantic, self.boolean, self.bm25],
            self.store,
            self.client,
            options=documents,
            redact=settings.redact,
            reranker=None if settings.cpqa_profile == "paper" else RecordReranker(),  # not where E1 runs MedCPT
        )
        # Passages.
        sentence_encoder, sentence_choice = load_encoder("sentence_embedder", settings)
        meaning = MeaningTriage(  # beside the rules
            sentence_encoder, cache_dir=settings.cpqa_cache / "triage", options=self.options.safety
        )
        meaning.prepare()
        # ... and a language model's pass beside the search, when one is configured.
        model_pass = TriagePass(ModelTriage(self.llm, redact=settings.redact)) if llm else None
        self.screener = Screen(model_configured=bool(llm), meaning=meaning, model_pass=model_pass)
        self.passage_store = _open_passage_store(passages_path or settings.index_dir / PASSAGES_FILE)
        self.passages = PassageRetriever.load(
            settings, matryoshka_dim=self.options.passages.matryoshka_dim, rerank=self.options.rerank
        )
        # SEOS embeds each new record's sentences once (the extractive answer reads those vectors too), the passage
        # embedder each new chunk once; both are stored (``SegmentCache``).
        self.segments = passage_segmenter(
            settings, self.passage_store, self.options, vectors=self.passages.cache, sentence_encoder=sentence_encoder
        )
        # NIH patient information (D4), when the home holds it (``cpqa ingest medquad``), searched beside HSRDR; its
        # sentences' stored vectors go to the answer's embedding cache with the sections a question found.
        self.patient = open_patient_search(settings, sentence_encoder, self.options.documents)
        patient_vectors = open_patient_vectors(
            settings, self.patient, self.passages.cache, self.options.passages.patient_passage_words
        )
        self.finder = PassageFinder(self.segments, self.passages, patient_vectors)
        self.searcher = DocumentFinder(self.documents, self.patient)
        # Answer: the extractive fallback ranks evidence sentences with the passage embedder (cached); with the option
        # on, a clinician's research sentences with the evidence scorer where that is another model (offline: the
        # encoder trained here, the instance E1 runs, loaded when first asked).
        scorer, scorer_choice = distinct_encoder("evidence_scorer", settings, self.passages.choice)
        self.answerer = Answerer(
            self.llm,
            self.passages.cache,
            self.options,
            redact=settings.redact,
            chooser=AnswerChooser(),
            research=scorer,
        )
        self.refiner = Refiner(self.answerer) if llm else None
        self.writer = AnswerWriter(self.answerer, self.refiner, self.record_share)
        self.models = {
            "rewriter": self.rewriter.choice,
            "answerer": self.answerer.choice,
            "sentence_embedder": sentence_choice,
            "passage_retriever": self.passages.choice,
            "evidence_scorer": scorer_choice,
            "reranker": self.passages.reranker_choice,
        }

    def close(self) -> None:
        if self.patient is not None:
            self.patient.store.close()
        self.screener.close()
        if self.client is not None:
            self.client.close()
        self.store.close()
        if self.passage_store is not None:
            self.passage_store.close()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def profile(self) -> str:
        """ "paper" when every model component runs the paper's model, "offline" when none does, else "mixed"."""
        profiles = {c.profile for c in self.models.values()}
        return profiles.pop() if len(profiles) == 1 else "mixed"

    def resolve_options(self, **overrides: Any) -> PipelineOptions:
        """This pipeline's options with per-question overrides by knob name (None keeps the default). The knobs
        fixed at load (``PipelineOptions.load_time``) cannot change per question."""
        options = self.options.with_overrides(**overrides)
        loaded, asked = self.options.load_time(), options.load_time()
        fixed = sorted(name for name in loaded if asked[name] != loaded[name])
        if fixed:
            raise ValueError(f"{fixed} are fixed when the pipeline loads; make a new Pipeline to change them")
        return options

    # ------------------------------------------------------------ one question
    def screen(self, question: str, history: Sequence[str] = (), options: PipelineOptions | None = None) -> Screened:
        """The screen, once per question: clean text, personal details removed (from the history too), urgent signs
        by rule and by meaning, referrals. ``ask``, ``retrieve`` and ``search_documents`` take its result as it is.
        Raises ``InvalidQuestion`` for unusable input."""
        return self.screener.run(Question(text=question, history=list(history)), options or self.options)

    def ask(
        self,
        question: str | Screened,
        history: Sequence[str] = (),
        progress: Callable[[Progress], None] | None = None,
        **overrides: Any,
    ) -> Result:
        """Answer ``question`` (or a question ``screen`` already screened) with cited evidence; raises
        ``InvalidQuestion`` for empty input.

        ``overrides`` are option knobs by name (``mode``, ``years``, ``sources``, ``top_n``, ``hyde``, ...);
        ``progress`` receives a ``Progress`` for the screening result, before any retrieval, then for each stage
        as it starts (for progress displays)."""
        asking = self._asking(overrides, progress)
        asking.notify("safety")
        screened = self._screened(asking, question, history)
        asking.notify("screened", screened)
        asking.pending = self.screener.start_model_pass(screened, asking.options)
        if asking.pending is not None and not screened.language_ok:  # the model translates it before the search
            self._join_triage(asking)
        if not asking.screened.language_ok and not asking.screened.english:
            answer = self._shown(
                asking, Answer(text=asking.screened.refusal or "", abstained=True, written_by="triage")
            )
        else:
            answer = self._answer_or_triage(asking)
        asking.trace.stages["total"] = StageRecord(ms=(time.perf_counter() - asking.started) * 1000.0)
        return Result(answer=answer, trace=asking.trace)

    def search_documents(self, question: str | Screened, history: Sequence[str] = (), **overrides: Any) -> Retrieved:
        """The documents for ``question``: screened once, rewritten, searched by HSRDR (with HyDE when on), in the
        trace (the REST API's and MCP server's search; ``ask`` and ``retrieve`` start so). Raises InvalidQuestion."""
        return self._retrieved(question, history, overrides, passages=False)

    def retrieve(self, question: str | Screened, history: Sequence[str] = (), **overrides: Any) -> Retrieved:
        """``search_documents`` and the passages, in the trace, without an answer (for search tools, researchers)."""
        return self._retrieved(question, history, overrides, passages=True)

    def _retrieved(
        self, question: str | Screened, history: Sequence[str], overrides: dict[str, Any], passages: bool
    ) -> Retrieved:
        asking = self._asking(overrides)
        screened = self._screened(asking, question, history)
        if screened.language_ok:  # a search without an answer: the model's translation is not waited for
            rewrite = self._rewrite(asking)
            found = self._documents(asking, rewrite)
            if passages:
                asking.trace.record_passages(self.finder.run(found, asking.options))
        asking.trace.stages["total"] = StageRecord(ms=(time.perf_counter() - asking.started) * 1000.0)
        return Retrieved(screened=screened, trace=asking.trace)

    def _asking(self, overrides: dict[str, Any], progress: Callable[[Progress], None] | None = None) -> Asking:
        options = self.resolve_options(**overrides)
        trace = RetrievalTrace(profile=self.profile, options=options, models=dict(self.models))
        return Asking(options=options, trace=trace, progress=progress)

    def _screened(self, asking: Asking, question: str | Screened, history: Sequence[str]) -> Screened:
        """``question`` screened (or taken as screened), recorded in the trace."""
        given = isinstance(question, Screened)
        options, trace = asking.options, asking.trace
        with trace.stage("safety") as record:  # screened by a front end: only the meaning check may be missing
            asked = question if isinstance(question, Screened) else Question(text=question, history=list(history))
            screened = self.screener.run(asked, options)
            record.info.update(
                urgent=screened.urgent is not None,
                removed_phi=list(screened.removed_phi),
                personal_dosing=screened.personal_dosing,
                history_turns=len(screened.history),
                screened_before=given,
            )
        trace.question, trace.language, trace.triage = screened.question, screened.language, list(screened.triage)
        asking.screened = screened
        return screened

    def _join_triage(self, asking: Asking) -> None:
        """The model's triage pass joined: the screen as it left it (a flag raised, never lowered), in the trace."""
        if asking.pending is not None:
            asking.screened = asking.trace.record_triage(*asking.pending.join(asking.screened, asking.notify))
            asking.pending = None

    def _answer_or_triage(self, asking: Asking) -> Answer:
        """The answer; when retrieval fails, an urgent question still gets its urgent-care message, and a referral its
        referral."""
        try:
            return self._answer(asking)
        except Exception as exc:
            if asking.pending is not None and not asking.pending.done():
                self._join_triage(asking)
            if asking.screened.urgent is None and asking.screened.referral is None:
                raise
            asking.trace.warn(f"evidence retrieval failed after screening: {type(exc).__name__}")
            return self._shown(asking, Answer(text=SEARCH_FAILED, abstained=True, written_by="triage"))

    @staticmethod
    def _shown(asking: Asking, answer: Answer) -> Answer:
        """An answer the pipeline itself gives (a refusal, a failed search, adaptive retrieval's answer without
        evidence) dressed as the answer stage dresses its own: every path carries the screen's messages."""
        return as_shown(answer, asking.screened, asking.options.answer.mode)

    def _answer(self, asking: Asking) -> Answer:
        """Rewrite, documents, passages, the model's triage pass (beside the search) joined, then the answer."""
        options, trace, screened = asking.options, asking.trace, asking.screened
        rewrite = self._rewrite(asking)
        if options.rewrite.adaptive_retrieval:
            asked = answered_question(screened, rewrite)
            unretrieved, trace.retrieval_decision, log = without_retrieval(
                self.adaptive, self.refiner, asked, rewrite, options, screened, self.llm.unconfigured
            )
            trace.absorb(log)
            if unretrieved is not None:
                return self._shown(asking, unretrieved)
        found = self._documents(asking, rewrite)
        finding = self.finder.run(found, options, asking.notify)
        context = trace.record_passages(finding)
        self._join_triage(asking)
        asking.notify("answer")
        with trace.stage("answer", passages=len(context)):
            on_text = (lambda text: asking.notify("drafting", draft=text)) if asking.progress else None
            written = self.writer.run(Evidence(asking.screened, rewrite, finding), options, on_text)
        trace.absorb(written)
        trace.removed_sentences = written.answer.removed_sentences
        trace.use_model(written.model)  # the fallback, named, when the model could not be reached
        return written.answer

    def _rewrite(self, asking: Asking) -> RewriteResult:
        screened, trace = asking.screened, asking.trace
        asking.notify("rewrite")
        with trace.stage("rewrite") as record:  # a question in another language is searched in the model's English
            rewrite = self.rewriter.run(screened, asking.options)
            record.info.update(method=rewrite.method, ladder_levels=len(rewrite.ladder))
        trace.rewrite = rewrite
        trace.use_model(self.rewriter.used(rewrite))  # the rules, named, when the model could not be used
        trace.search_intent = rewrite.search_intent or screened.question
        return rewrite

    def _documents(self, asking: Asking, rewrite: RewriteResult) -> DocumentSearch:
        """HSRDR's documents for the rewritten question (E1 with a drafted answer beside it under HyDE), and the
        patient pages' sections beside them."""
        options, trace = asking.options, asking.trace
        asking.notify("documents")
        kinds = section_kinds(trace.search_intent, concepts=rewrite.concepts) if self.patient is not None else None
        query = replace(
            self.document_query(rewrite, trace.search_intent, options, trace),
            section_kinds=kinds or frozenset(),
            urgent=asking.screened.urgent is not None,
        )
        found = self.searcher.run(query, options)
        trace.record_documents(found)
        return found

    def record_share(self, word: str) -> float | None:
        """The share of the local store's records whose title or abstract holds ``word`` (``postedit.record_share``)."""
        return record_share(self.store, word, self.options.answer.min_records_for_share)

    # ------------------------------------------------------------ stage helpers
    def query_for(self, question: str) -> DocumentQuery:
        """``question`` rewritten as ``ask`` rewrites it, as the document retrievers are asked it (without HyDE): for a
        search outside ``ask`` (a harness, a notebook, a path on its own)."""
        rewrite = self.rewriter.rewrite(question, options=self.options.rewrite)
        return DocumentQuery(query_str=rewrite.search_intent or question, rewrite=rewrite)

    def document_query(
        self, rewrite: RewriteResult, search_intent: str, options: PipelineOptions, trace: StageLog
    ) -> DocumentQuery:
        """What the document retrievers are asked; with HyDE, E1 embeds a drafted answer beside the question."""
        query = DocumentQuery(query_str=search_intent, rewrite=rewrite)
        if not options.rewrite.hyde:
            return query
        if self.hyde is None:
            trace.warn(
                NEEDS_LLM.format(
                    option="hyde", unconfigured=self.llm.unconfigured, instead="searched with the question alone"
                )
            )
            return query
        strings, log = pseudo_answer(self.hyde, search_intent, self.settings.redact)
        trace.absorb(log)
        if strings is None:
            return query
        return DocumentQuery(query_str=search_intent, custom_embedding_strs=strings, rewrite=rewrite)
