"""Stage 5, answer: Claude or extractive answerers, citation and support checks, COT-Refine, post-editing.

Front: ``AnswerWriter`` (``run(Evidence, options) -> Written``) over the ``Answerer`` (and ``Refiner`` for
COT-Refine): written, checked, post-edited and dressed in one module (``cpqa.answer.compose``); ``as_shown`` (what
every path's answer carries, a refusal's too); adaptive retrieval's answer without evidence (``without_retrieval``);
the chooser's section kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cpqa.fronts import lazy_front

_EXPORTS = {
    "AnswerWriter": "cpqa.answer.compose",
    "answered_question": "cpqa.answer.compose",
    "Evidence": "cpqa.answer.compose",
    "Written": "cpqa.answer.compose",
    "Refiner": "cpqa.answer.refine",
    "without_retrieval": "cpqa.answer.refine",
    "Answerer": "cpqa.answer.answerer",
    "AnswerChooser": "cpqa.answer.chooser",
    "section_kinds": "cpqa.answer.chooser",
    "as_shown": "cpqa.answer.postedit",
    "record_share": "cpqa.answer.postedit",
    "NEEDS_LLM": "cpqa.answer.messages",
    "SEARCH_FAILED": "cpqa.answer.messages",
}
__all__ = [
    "AnswerChooser",
    "Answerer",
    "answered_question",
    "AnswerWriter",
    "Evidence",
    "as_shown",
    "NEEDS_LLM",
    "record_share",
    "Refiner",
    "SEARCH_FAILED",
    "section_kinds",
    "without_retrieval",
    "Written",
]
__getattr__ = lazy_front(__name__, _EXPORTS)

if TYPE_CHECKING:
    from cpqa.answer.answerer import Answerer
    from cpqa.answer.chooser import AnswerChooser, section_kinds
    from cpqa.answer.messages import NEEDS_LLM, SEARCH_FAILED
    from cpqa.answer.postedit import as_shown, record_share
    from cpqa.answer.compose import AnswerWriter, Evidence, Written, answered_question
    from cpqa.answer.refine import Refiner, without_retrieval
