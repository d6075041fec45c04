"""The whole answer, in one place: written (the answerer, or COT-Refine's draft revised against the evidence), checked
(citations, support, the addressing rule: ``cpqa.answer.answerer``), post-edited (``cpqa.answer.postedit``) and
dressed with what the screen found (``as_shown``). ``write_answer`` is the answer stage's entry; the pipeline records
the log it returns.
"""

from __future__ import annotations

from typing import Callable, Sequence

from cpqa.answer.answerer import Answerer
from cpqa.answer.messages import NEEDS_LLM
from cpqa.answer.postedit import after_writing
from cpqa.answer.refine import Refiner
from cpqa.options import PipelineOptions
from cpqa.safety.screening import Screened
from cpqa.types import Answer, Passage, StageLog


def write_answer(
    answerer: Answerer,
    refiner: Refiner | None,
    question: str,
    passages: Sequence[Passage],
    options: PipelineOptions,
    screened: Screened,
    on_text: Callable[[str], None] | None = None,
    concepts: Sequence = (),
    share: Callable[[str], float | None] | None = None,
) -> tuple[Answer, StageLog]:
    """The answer to show and the log of writing it (the trace's to record): written by the answerer (``concepts``:
    the rewrite's, which an answering sentence must name), or with ``cot_refine`` a draft without evidence revised
    against the evidence; checked there (citations, support, the addressing rule); then post-edited
    (``after_writing``: a treatment change replaced by the referral, a key concept the evidence never names turned
    into an explained abstention; ``share``: a word's share of the store's records). The screen's urgent message,
    referral, notices and the mode's disclaimer are on it (``as_shown``)."""
    mode = options.answer.mode
    log = StageLog()
    if options.answer.cot_refine:
        if refiner is None:
            log.warn(
                NEEDS_LLM.format(option="cot_refine", unconfigured=answerer.unconfigured, instead="answered directly")
            )
        else:
            with log.stage("cot_refine") as record:
                answer, draft = refiner.answer(
                    screened, passages, mode, question=question, options=options, concepts=concepts
                )
                record.info.update(drafted=draft is not None, draft_words=len(draft.text.split()) if draft else 0)
            return _post_edited(answer, log, concepts, passages, share, options)
    answer = answerer.answer(
        screened, passages, mode, question=question, on_text=on_text, options=options, concepts=concepts
    )
    return _post_edited(answer, log, concepts, passages, share, options)


def _post_edited(
    answer: Answer,
    log: StageLog,
    concepts: Sequence,
    passages: Sequence[Passage],
    share: Callable[[str], float | None] | None,
    options: PipelineOptions,
) -> tuple[Answer, StageLog]:
    answer, warnings = after_writing(answer, concepts, passages, share, options.answer)
    for warning in warnings:
        log.warn(warning)
    return answer, log


__all__ = ["write_answer"]
