"""The answer once written: what the trace must say about it, and the one edit made after writing. An extractive
answer about a treatment, disease or specialist term that no passage names becomes an explained abstention (quoting
evidence about another drug would mislead; a language model makes that judgement itself). How rare a term is comes
from the local store (``record_share``)."""

from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

from cpqa.answer.extractive import unaddressed
from cpqa.types import Answer, Passage, SearchResult
from cpqa.options import AnswerOptions

MIN_RECORDS_FOR_SHARE = 1000  # below this the share of records holding a word means nothing
TREATMENT_CHANGE_FLAG = "treatment_change_advice_replaced"


class RecordCounts(Protocol):
    """What ``record_share`` asks of the local store (``cpqa.sources.store.Store``)."""

    def count(self) -> int: ...

    def search(self, term: str, retmax: int = 20) -> SearchResult: ...


def record_share(store: RecordCounts, word: str) -> float | None:
    """The share of the store's records whose title or abstract holds ``word``; None when the store is too small for
    the statistic to mean anything."""
    records = store.count()
    phrase = re.sub(r'["\[\]()*]', " ", word).strip()
    if records < MIN_RECORDS_FOR_SHARE or not phrase:
        return None
    try:
        return store.search(f'"{phrase}"[tiab]', retmax=0).count / records
    except ValueError:
        return None


def after_writing(
    answer: Answer,
    concepts: Sequence,
    passages: Sequence[Passage],
    share: Callable[[str], float | None],
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


__all__ = ["MIN_RECORDS_FOR_SHARE", "TREATMENT_CHANGE_FLAG", "after_writing", "record_share"]
