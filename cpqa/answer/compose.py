"""The whole answer, in one place: written (the answerer, or COT-Refine's draft revised against the evidence), checked
(citations, support, the addressing rule: ``cpqa.answer.answerer``), post-edited (``cpqa.answer.postedit``) and
dressed with what the screen found (``as_shown``). ``AnswerWriter.run`` is the answer stage's entry; the pipeline
records the log it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from cpqa.answer.answerer import Answerer
from cpqa.answer.messages import NEEDS_LLM
from cpqa.answer.postedit import after_writing
from cpqa.answer.refine import Refiner
from cpqa.options import PipelineOptions
from cpqa.passages.finder import PassageFinding
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.safety.screening import Screened
from cpqa.types import Answer, ComponentChoice, StageLog


def answered_question(screened: Screened, rewrite: RewriteResult) -> str:
    """What the answer answers: with dialogue history, the distilled search intent (the self-contained question);
    else the question, its misspellings corrected by the rule-based rewrite ("myeloma sympotms": the answer reads
    "symptoms" as the search did). A model's rewrite may reword the question, so its wording is not used."""
    if screened.history:
        return rewrite.search_intent or screened.question
    if rewrite.method == "rules" and screened.english is None and rewrite.normalized:
        return rewrite.normalized
    return screened.question


@dataclass(frozen=True)
class Evidence:
    """What stage 5 reads: the screen as it stands when the answer is written (the model's triage pass may have
    raised a flag during the search), the rewrite stage's result (its concepts, which an answering sentence must
    name, and a dialogue's self-contained question) and stage 4's finding (the answerer's context)."""

    screened: Screened
    rewrite: RewriteResult
    finding: PassageFinding

    @property
    def question(self) -> str:
        return answered_question(self.screened, self.rewrite)


class Written(StageLog):
    """Stage 5's result: the answer to show, the model that wrote it (the extractive fallback, named, when the
    language model could not be used) and the log of writing it (the trace's to record)."""

    answer: Answer
    model: ComponentChoice


class AnswerWriter:
    """The answer stage: ``run(evidence, options)`` writes, checks, post-edits and dresses the answer. ``answerer``
    writes (``refiner``: COT-Refine's draft revised against the evidence, when a model is configured); ``share``:
    a word's share of the store's records (``after_writing``)."""

    def __init__(
        self, answerer: Answerer, refiner: Refiner | None = None, share: Callable[[str], float | None] | None = None
    ):
        self.answerer, self.refiner, self.share = answerer, refiner, share

    def run(
        self, evidence: Evidence, options: PipelineOptions, on_text: Callable[[str], None] | None = None
    ) -> Written:
        """Written by the answerer, or with ``cot_refine`` a draft without evidence revised against the evidence;
        checked there (citations, support, the addressing rule); then post-edited (``after_writing``: a treatment
        change replaced by the referral, a key concept the evidence never names turned into an explained
        abstention). The screen's urgent message, referral, notices and the mode's disclaimer are on it
        (``as_shown``). ``on_text`` hears the draft as it streams."""
        answerer, screened, question = self.answerer, evidence.screened, evidence.question
        passages, concepts, mode = evidence.finding.context, evidence.rewrite.concepts, options.answer.mode
        log = StageLog()
        refiner = self.refiner if options.answer.cot_refine else None
        if options.answer.cot_refine and refiner is None:
            log.warn(
                NEEDS_LLM.format(option="cot_refine", unconfigured=answerer.unconfigured, instead="answered directly")
            )
        if refiner is not None:
            with log.stage("cot_refine") as record:
                answer, draft = refiner.answer(
                    screened, passages, mode, question=question, options=options, concepts=concepts
                )
                record.info.update(drafted=draft is not None, draft_words=len(draft.text.split()) if draft else 0)
        else:
            answer = answerer.answer(
                screened, passages, mode, question=question, on_text=on_text, options=options, concepts=concepts
            )
        answer, warnings = after_writing(answer, concepts, passages, self.share, options.answer)
        for warning in warnings:
            log.warn(warning)
        return Written(answer=answer, model=answerer.used(answer), **log.model_dump())


__all__ = ["AnswerWriter", "Evidence", "Written", "answered_question"]
