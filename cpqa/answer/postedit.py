"""The answer once written: what the person sees around it on every path (``as_shown``: disclaimer, urgent message,
referral, notices), what the trace must say about it, and the one edit made after writing. An extractive
answer about a treatment, disease or specialist term that no passage names becomes an explained abstention (quoting
evidence about another drug would mislead; a language model makes that judgement itself). How rare a term is comes
from the local store (``record_share``)."""

from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

from cpqa.answer.extractive import unaddressed
from cpqa.answer.messages import DISCLAIMERS
from cpqa.safety.screening import Screened
from cpqa.types import Answer, Passage, SearchResult
from cpqa.options import AnswerOptions

TREATMENT_CHANGE_FLAG = "treatment_change_advice_replaced"


class RecordCounts(Protocol):
    """What ``record_share`` asks of the local store (``cpqa.sources.store.Store``)."""

    def count(self) -> int: ...

    def search(self, term: str, retmax: int = 20) -> SearchResult: ...


def record_share(
    store: RecordCounts, word: str, min_records: int = AnswerOptions().min_records_for_share
) -> float | None:
    """The share of the store's records whose title or abstract holds ``word``; None when the store has fewer than
    ``min_records`` records, too few for the statistic to mean anything."""
    records = store.count()
    phrase = re.sub(r'["\[\]()*]', " ", word).strip()
    if records < min_records or not phrase:
        return None
    try:
        return store.search(f'"{phrase}"[tiab]', retmax=0).count / records
    except ValueError:
        return None


def as_shown(answer: Answer, screened: Screened, mode: str) -> Answer:
    """The answer as the person sees it, whichever path wrote it (the answerer, a refusal, a failed search): the
    mode's disclaimer, the screen's urgent message and referral, and the screen's notices first (an amber sign's "tell
    your care team today" before the rest), each once; a notice that is the answer's own text (a refusal) is not
    repeated."""
    first = [screened.care_soon] if screened.care_soon else []
    return answer.model_copy(
        update={
            "disclaimer": answer.disclaimer or DISCLAIMERS[mode],
            "urgent": answer.urgent or screened.urgent,
            "referral": answer.referral or screened.referral,
            "notices": [n for n in dict.fromkeys([*first, *screened.notices, *answer.notices]) if n != answer.text],
        }
    )


def after_writing(
    answer: Answer,
    concepts: Sequence,
    passages: Sequence[Passage],
    share: Callable[[str], float | None] | None,
    options: AnswerOptions | None = None,
) -> tuple[Answer, list[str]]:
    """The answer to show and the warnings for the trace."""
    warnings = []
    if TREATMENT_CHANGE_FLAG in answer.flags:
        warnings.append(
            "the answer advised starting, stopping or changing a treatment: replaced by the care-team referral"
        )
    missing = unaddressed(concepts, passages, share=share, options=options)
    if missing:
        named = ", ".join(missing)
        warnings.append(f"the evidence found does not mention {named}")
        if answer.written_by == "extractive" and not answer.abstained:
            answer = answer.model_copy(
                update={
                    "abstained": True,
                    "citations": [],
                    "text": (
                        f"The evidence found does not mention {named}, so no answer is quoted from it. Try a broader "
                        "question, or ask your care team."
                    ),
                }
            )
    return answer, warnings


__all__ = ["TREATMENT_CHANGE_FLAG", "after_writing", "as_shown", "record_share"]
