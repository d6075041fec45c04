"""The strategies inside the pipeline: one hook per pipeline step, each a no-op unless its option is on.

``Pipeline`` builds one ``Strategies`` next to its answerer and passage retriever and calls, in order:
``unretrieved`` (adaptive retrieval, before document retrieval), ``semantic_rewrite`` (HyDE for the E1 query),
``retrieve_passages`` (multi-query), ``context`` (small-to-big, restructuring, repacking) and ``answer``
(COT-Refine). Each records what it did in its own trace stage; the answerer's evidence, when a strategy
changed it, is ``trace.context``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from llama_index.core.schema import BaseNode

from cpqa.answer.answerer import Answerer
from cpqa.config import Settings
from cpqa.models.llm import Claude, LLMError
from cpqa.passages.dense import PassageRetriever
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.safety.screening import Screened
from cpqa.rewrite.adaptive import AdaptiveRetrieval
from cpqa.rewrite.expansion import concept_queries, fuse_passages, pseudo_response
from cpqa.answer.refine import Refiner, unretrieved_answer
from cpqa.passages.repack import repack
from cpqa.passages.restructure import restructure
from cpqa.passages.small_to_big import expand_passages
from cpqa.types import Answer, Article, Candidate, Passage, RetrievalTrace

if TYPE_CHECKING:
    from cpqa.pipeline import PipelineOptions

NEEDS_CLAUDE = "{option} needs Claude (no Anthropic API key): {instead}"


class Strategies:
    """Applies the strategy options of one question; shares the pipeline's models (thread-safe as they are)."""

    def __init__(self, settings: Settings, llm: Claude | None, answerer: Answerer, passages: PassageRetriever):
        self.settings = settings
        self.llm = llm if llm is not None and llm.available else None
        self.answerer = answerer
        self.passages = passages
        self.adaptive = AdaptiveRetrieval(settings, self.llm)
        self.refiner = Refiner(settings, self.llm, encoder=answerer.encoder) if self.llm else None

    # ------------------------------------------------------------ adaptive retrieval
    def unretrieved(self, question: str, options: PipelineOptions, screened: Screened | None,
                    trace: RetrievalTrace) -> Answer | None:
        """The answer without retrieval when adaptive retrieval is on and judges evidence unnecessary, else None."""
        if not options.adaptive_retrieval:
            return None
        with trace.stage("adaptive_retrieval") as rec:
            decision = self.adaptive.decide(question)
            rec.info.update(decision=decision.model_dump(), skipped=False)
            if decision.retrieve:
                return None
            if self.refiner is None:
                trace.warn(NEEDS_CLAUDE.format(option="answering without retrieval", instead="evidence retrieved"))
                return None
            try:
                answer = unretrieved_answer(self.refiner.draft(question, options.mode))
            except LLMError as exc:
                trace.warn(f"adaptive retrieval: the answer without evidence failed "
                           f"({self.settings.redact(str(exc))[:120]}); evidence retrieved")
                return None
            rec.info["skipped"] = answer is not None
        if answer is None:
            return None
        notices = [*(screened.notices if screened else []), *answer.notices]
        return answer.model_copy(update={"notices": notices})

    # ------------------------------------------------------------ query expansion
    def semantic_rewrite(self, rewrite: RewriteResult, options: PipelineOptions,
                         trace: RetrievalTrace) -> RewriteResult:
        """HyDE / Query2Doc: the rewrite whose search intent (the E1 semantic query) carries a pseudo-answer."""
        if not options.hyde:
            return rewrite
        if self.llm is None:
            trace.warn(NEEDS_CLAUDE.format(option="hyde", instead="searched with the question alone"))
            return rewrite
        with trace.stage("hyde") as rec:
            try:
                pseudo = pseudo_response(rewrite.search_intent or rewrite.question, self.llm)
            except LLMError as exc:
                trace.warn(f"hyde: no pseudo-answer ({self.settings.redact(str(exc))[:120]}); question alone")
                return rewrite
            rec.info.update(draft_words=len(pseudo.draft.split()))
        return rewrite.model_copy(update={"search_intent": pseudo.query})

    def retrieve_passages(self, query: str, rewrite: RewriteResult, nodes: Sequence[BaseNode],
                          options: PipelineOptions, trace: RetrievalTrace) -> list[Passage]:
        """Passage retrieval; with ``multi_query`` once per concept variant of the query, fused by RRF."""
        if not options.multi_query:
            return self.passages.retrieve(query, nodes, top_k=options.top_k, top_n=options.top_n, trace=trace)
        queries = concept_queries(rewrite.model_copy(update={"search_intent": query}))
        rankings = [self.passages.retrieve(q, nodes, top_k=options.top_k, top_n=options.top_k, trace=trace)
                    for q in queries]
        with trace.stage("multi_query", queries=queries) as rec:
            fused = fuse_passages(rankings, options.top_n)
            rec.info["kept"] = len(fused)
        trace.passages = fused
        return fused

    # ------------------------------------------------------------ the answerer's context
    def context(self, question: str, passages: list[Passage], documents: Sequence[tuple[Candidate, Article]],
                nodes: Sequence[BaseNode], options: PipelineOptions, trace: RetrievalTrace) -> list[Passage]:
        """The evidence as the answerer gets it: small-to-big, then restructuring, then repacking."""
        if options.small_to_big == "off" and not options.restructure and not options.repack:
            return passages
        context = list(passages)
        with trace.stage("context") as rec:
            if options.small_to_big != "off":
                articles = {a.pmid or a.pmcid or "": a for _, a in documents}
                context = expand_passages(context, articles, nodes, options.small_to_big, options.small_to_big_window)
                rec.info["small_to_big"] = options.small_to_big
            if options.restructure:
                result = restructure(question, context, self.passages.cache, self.passages.reranker)
                context = result.passages
                rec.info["topics"] = len(result.topics)
            if options.repack:
                context = repack(context)
                rec.info["repacked"] = True
            rec.info.update(passages=len(context), words=sum(len(p.text.split()) for p in context))
        trace.context = context
        return context

    # ------------------------------------------------------------ answer
    def answer(self, question: str, passages: Sequence[Passage], options: PipelineOptions, screened: Screened | None,
               trace: RetrievalTrace) -> Answer:
        """The answerer's answer; with ``cot_refine``, a draft without evidence revised against it."""
        if not options.cot_refine:
            return self.answerer.answer(question, passages, options.mode, screened=screened)
        if self.refiner is None:
            trace.warn(NEEDS_CLAUDE.format(option="cot_refine", instead="answered directly"))
            return self.answerer.answer(question, passages, options.mode, screened=screened)
        with trace.stage("cot_refine") as rec:
            answer, draft = self.refiner.answer(question, passages, options.mode, screened=screened)
            rec.info.update(drafted=draft is not None, draft_words=len(draft.text.split()) if draft else 0)
        return answer
