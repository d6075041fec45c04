"""Dialogue distillation (the Distill-Retrieve-Read idea) without an LLM.

A follow-up such as "what about its side effects?" names nothing to search for. When the question points
back (a pronoun, "what about", "the drug") or names no disease or treatment, the entities it lacks are
carried from the latest earlier turn that has any: the treatment and the disease the vocabulary knows, and
when it knows no treatment there, up to two other concepts that name something: a term the vocabulary knows, or a
word general English rarely uses (a drug name it does not list), never an ordinary word ("thank", "mother").
"""

from __future__ import annotations

import re
from typing import Sequence

from pydantic import BaseModel, Field

from cpqa.rewrite.concepts import Concept, process_question
from cpqa.rewrite.lay_terms import SEARCHED
from cpqa.rewrite.vocabulary import Vocabulary, phrase_key
from cpqa.words import names_rare_word

_ANAPHOR = re.compile(
    r"\b(its|it|they|them|their|this|that|these|those|the drug|the treatment|the medicine|"
    r"the therapy|the cancer|the tumou?r|the disease)\b",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(r"^\s*(what|how)\s+about\b|^\s*and\b|^\s*(also|then)\b", re.IGNORECASE)


class Distilled(BaseModel):
    search_intent: str
    carried: list[str] = Field(default_factory=list)  # entity texts taken from the history


def _entities(concepts: list[Concept], kind: str) -> list[Concept]:
    return [c for c in concepts if c.kind == kind and not c.weak]


def distill(
    question: str,
    history: Sequence[str],
    vocab: Vocabulary,
    concepts: Sequence[Concept] | None = None,
    lay_searched: int = SEARCHED,
) -> Distilled:
    """The question as a self-contained search intent, given the earlier turns (oldest first). ``concepts``: the
    question's, when the caller processed it already."""
    question = " ".join(question.split())
    turns = [t for t in history if t and t.strip()]
    if not turns:
        return Distilled(search_intent=question)
    current = list(concepts) if concepts is not None else process_question(question, vocab, lay_searched).concepts
    has = {kind: bool(_entities(current, kind)) for kind in ("disease", "treatment")}
    points_back = bool(_ANAPHOR.search(question) or _FOLLOW_UP.search(question))
    if not points_back and (has["disease"] or has["treatment"]):
        return Distilled(search_intent=question)
    present = {phrase_key(c.text) for c in current}
    carried: dict[str, list[str]] = {"treatment": [], "disease": [], "other": []}
    for turn in reversed(turns):
        earlier = [c for c in process_question(turn, vocab, lay_searched).concepts if phrase_key(c.text) not in present]
        for kind in ("treatment", "disease"):
            if not has[kind]:
                carried[kind] = [c.text for c in _entities(earlier, kind)][:1]
        if not has["treatment"] and not carried["treatment"]:
            carried["other"] = [c.text for c in _entities(earlier, "other") if _names_something(c)][:2]
        if any(carried.values()):
            break
    main = carried["treatment"] or carried["other"] or carried["disease"]
    if not main:
        return Distilled(search_intent=question)
    intent = _substitute(question, " ".join(main), "in" if main is carried["disease"] else "with")
    extra = [t for t in carried["disease"] if t not in main]
    if extra:
        intent = f"{intent.rstrip(' ?.!')} in {' and '.join(extra)}" + ("?" if question.endswith("?") else "")
    return Distilled(search_intent=intent, carried=[*main, *extra])


def _names_something(concept: Concept) -> bool:
    return concept.mesh is not None or names_rare_word(concept.text)


def _substitute(question: str, entity: str, joiner: str) -> str:
    """Put ``entity`` where the question points back, or name it at the end when nothing points back."""
    match = _ANAPHOR.search(question)
    if match is None:
        return f"{question.rstrip(' ?.!')} {joiner} {entity}" + ("?" if question.endswith("?") else "")
    return question[: match.start()] + entity + question[match.end() :]
