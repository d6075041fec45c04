"""COT-Refine: Claude first answers from its own knowledge with chain of thought (no retrieval), then revises
that draft against the retrieved evidence, keeping only what the evidence supports, with citations.

The revision is the answerer's own request (``cpqa.answer.answerer.Answerer``: its prompts, evidence delimiting,
forced tool call, citation checking, extractive fallback, disclaimers) with the draft as an extra block
(``Answerer.answer(..., draft=)``), so nothing of the answerer is copied. The draft never reaches the reader
unchecked: with no evidence the answerer abstains.
Also used by adaptive retrieval: a question that needs no retrieval is answered by the draft alone, with
any citation stripped and a notice saying so.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, Field

from cpqa.answer.answerer import Answerer
from cpqa.answer.citations import check_citations
from cpqa.answer.messages import NEEDS_LLM
from cpqa.models.llm import LLMError, ToolSpec
from cpqa.options import PipelineOptions
from cpqa.prompts import escape, template
from cpqa.rewrite.adaptive import AdaptiveRetrieval, RetrievalDecision
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.safety.screening import Screened
from cpqa.types import Answer, Mode, Passage, StageLog


class _DraftInput(BaseModel):
    reasoning: str = Field(description="step-by-step reasoning; never shown")
    answer: str = Field(description="the draft answer, without citations")


DRAFT_TOOL = ToolSpec.of(
    "draft_answer", "Give a draft answer from your own knowledge, before any evidence is shown.", _DraftInput
)
NO_RETRIEVAL_NOTICE = (
    "Answered from the language model's general knowledge without retrieving evidence (the "
    "question was judged definitional), so no study is cited."
)
REFINE_FLAG = "cot_refine"


class Draft(BaseModel):
    """An answer written without evidence (the reasoning is kept for the trace, never shown)."""

    question: str
    text: str
    reasoning: str = ""


class Refiner:
    """``answer``: draft without evidence, then revise against ``passages``; ``choose`` the same for options."""

    def __init__(self, answerer: Answerer):
        if answerer.llm is None:
            raise ValueError("COT-Refine needs a language model: set ANTHROPIC_API_KEY, or an OpenAI-compatible server")
        self.answerer = answerer
        self.llm = answerer.llm
        self.max_tokens = answerer.options.answer.answer_max_tokens

    def draft(self, question: str, mode: Mode = "patient") -> Draft:
        """Claude's chain-of-thought answer without retrieval to ``question`` (a screened question: its personal
        details removed by the safety stage); raises ``LLMError`` when Claude fails."""
        if not question.strip():
            raise ValueError("question is empty")
        system = template("refine_draft_system").substitute(register=template(f"register_{mode}").template)
        data = self.llm.call_tool(
            system,
            [{"role": "user", "content": f"<question>\n{escape(question)}\n</question>"}],
            DRAFT_TOOL,
            max_tokens=self.max_tokens,
        )
        text = str(data.get("answer", "")).strip()
        if not text:
            raise LLMError("Claude's draft_answer reply was empty")
        return Draft(question=question, text=text, reasoning=str(data.get("reasoning", "")))

    def refine(
        self,
        screened: Screened,
        draft: Draft,
        passages: Sequence[Passage],
        mode: Mode = "patient",
        *,
        question: str | None = None,
        options: PipelineOptions | None = None,
        concepts: Sequence | None = None,
    ) -> Answer:
        """The draft revised against the evidence by the answerer (cited and checked; abstains without evidence)."""
        answer = self.answerer.answer(
            screened, passages, mode, question=question, draft=draft.text, options=options, concepts=concepts
        )
        return answer.model_copy(update={"flags": [*answer.flags, REFINE_FLAG]})

    def answer(
        self,
        screened: Screened,
        passages: Sequence[Passage],
        mode: Mode = "patient",
        *,
        question: str | None = None,
        options: PipelineOptions | None = None,
        concepts: Sequence | None = None,
    ) -> tuple[Answer, Draft | None]:
        """Draft then refine; when the draft fails, the plain answerer answers (with a notice). ``question``: what
        the answer addresses when not the screened question itself (the search intent)."""
        try:
            draft = self.draft(question or screened.question, mode)
        except LLMError as exc:
            answer = self.answerer.answer(
                screened, passages, mode, question=question, options=options, concepts=concepts
            )
            notice = f"COT-Refine draft failed ({self.answerer.redact(str(exc))[:120]}); answered directly."
            return answer.model_copy(update={"notices": [*answer.notices, notice]}), None
        return self.refine(
            screened, draft, passages, mode, question=question, options=options, concepts=concepts
        ), draft

    def without_evidence(self, question: str, mode: Mode = "patient") -> Answer | None:
        """Adaptive retrieval's answer to a question judged to need no evidence: the draft, labelled; None when
        nothing usable is left (the caller retrieves after all). Raises ``LLMError`` when Claude fails."""
        return unretrieved_answer(self.draft(question, mode))


def unretrieved_answer(draft: Draft) -> Answer | None:
    """The draft as the final answer of a question that needed no retrieval: any citation (necessarily from
    memory) stripped, labelled; None when nothing is left, so the caller retrieves after all."""
    check = check_citations(draft.text, set())
    if not check.text.strip():
        return None
    return Answer(
        text=check.text, written_by="llm", flags=["no_retrieval", *check.flags], notices=[NO_RETRIEVAL_NOTICE]
    )


def without_retrieval(
    adaptive: AdaptiveRetrieval,
    refiner: Refiner | None,
    question: str,
    rewrite: RewriteResult,
    options: PipelineOptions,
    screened: Screened,
    unconfigured: str = "no language model",
) -> tuple[Answer | None, RetrievalDecision, StageLog]:
    """Adaptive retrieval: the answer without evidence when the question is judged not to need any (None: retrieve),
    the decision and the step's log, for the trace. ``unconfigured`` says why no model could answer without
    evidence."""
    log = StageLog()
    with log.stage("adaptive_retrieval") as record:
        decision = adaptive.decide(
            question, rewrite.concepts, personal_dosing=screened.personal_dosing, options=options.rewrite
        )
        record.info["skipped"] = False
        if decision.retrieve:
            return None, decision, log
        if refiner is None:
            log.warn(
                NEEDS_LLM.format(
                    option="answering without retrieval", unconfigured=unconfigured, instead="evidence retrieved"
                )
            )
            return None, decision, log
        try:
            answer = refiner.without_evidence(question, options.answer.mode)
        except LLMError as exc:
            redacted = refiner.answerer.redact(str(exc))[:120]
            log.warn(f"adaptive retrieval: the answer without evidence failed ({redacted}); evidence retrieved")
            return None, decision, log
        record.info["skipped"] = answer is not None
    if answer is None:
        return None, decision, log
    return answer.model_copy(update={"notices": [*screened.notices, *answer.notices]}), decision, log
