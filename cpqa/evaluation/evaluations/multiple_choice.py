"""Multiple-choice answering, which only the CMMQA evaluation asks for: the answerer's language model chooses one
option letter (chain of thought, evidence as delimited data, a forced tool call), or without one the retrieval-only
baseline scores each option by its similarity to the evidence; COT-Refine chooses without evidence first.

Finding the chosen letter in a model's free text: language models answer in many shapes (``Answer: (B)``, ``the
correct option is c.``, ``**D**``, a JSON object, a bare letter, or the option's text). The parser tries the most
explicit forms first and, within a form, takes the last occurrence (chain of thought states its conclusion last).
"""

from __future__ import annotations

import json
import re
from typing import Mapping, Sequence

from pydantic import BaseModel

import numpy as np

from cpqa.answer.answerer import Answerer, Unusable, draft_note, format_evidence
from cpqa.answer.extractive import split_sentences
from cpqa.answer.similarity import Similarity
from cpqa.answer.messages import DISCLAIMERS
from cpqa.answer.refine import REFINE_FLAG
from cpqa.models.encoders import Encoder
from cpqa.models.llm import ToolSpec
from cpqa.prompts import escape, evidence_tag, template
from cpqa.types import Answer, Passage

BASELINE_LABEL = "retrieval-only baseline"


class ChosenAnswer(Answer):
    """An answer to a multiple-choice question: the product's ``Answer`` ("B. option text") and the letter chosen,
    which only this evaluation asks for."""

    letter: str | None = None


BASELINE_NOTICE = (
    f"Option chosen by the {BASELINE_LABEL}: each option scored by its similarity to the evidence, no language model."
)

_JSON_KEYS = ("answer", "answer_choice", "choice", "letter", "option", "final_answer", "answer_letter")
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
# "answer is B", "Answer: (b)", "correct option is c.", "final answer - **D**", "I choose A"
_STATED = re.compile(
    r"(?:answer|option|choice|choose|select|pick)\w*\s*(?:is|would be|will be|=|:|-)?\s*"
    r"(?:option|choice|letter)?\s*[:\-]?\s*[\*\(\[\"'`]*\s*([A-Za-z])\s*[\*\)\]\"'`]*(?=[\s.,;:!)]|$)",
    re.I,
)
_BOLD = re.compile(r"\*\*\s*\(?([A-Za-z])\)?[.)]?\s*\*\*|\\boxed\{\s*(?:\\text\{)?\(?([A-Za-z])\)?")
_LINE = re.compile(r"^\s*[\(\[]?([A-Za-z])[\)\]]?[.):]?(?:\s|$)", re.M)


def parse_answer_letter(text: str | None, options: Mapping[str, str]) -> str | None:
    """The option letter ``text`` chooses, upper case, or None when it names no single option."""
    if not text:
        return None
    letters = {k.upper() for k in options}

    def valid(letter: str | None, uppercase_only: bool = False) -> str | None:
        if letter is None or (uppercase_only and not letter.isupper()):
            return None
        return letter.upper() if letter.upper() in letters else None

    found = _from_json(text, letters)
    if found:
        return found
    for pattern, uppercase_only in ((_STATED, False), (_BOLD, False)):
        for match in reversed(list(pattern.finditer(text))):
            # a lone lower-case "a" after "answer is" is usually the article ("the answer is a rare ...")
            letter = match.group(match.lastindex or 1)
            if letter == "a" and not re.match(
                r"[\s\*\(\[\"'`]*a\s*[\*\)\]\"'`]*(?:[.,;:!)]|$)", text[match.start(1) : match.start(1) + 4]
            ):
                continue
            got = valid(letter, uppercase_only)
            if got:
                return got
    for match in reversed(list(_LINE.finditer(text))):
        got = valid(match.group(1), uppercase_only=True)
        if got:
            return got
    return _from_option_text(text, options)


def _from_json(text: str, letters: set[str]) -> str | None:
    for blob in reversed(_OBJECT.findall(text)):
        try:
            data = json.loads(blob)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for key in _JSON_KEYS:
            value = data.get(key)
            if isinstance(value, str):
                letter = value.strip().strip("()[]*. ").upper()[:1]
                if letter in letters and len(value.strip().strip("()[]*. ")) == 1:
                    return letter
    return None


_ANSWER_CUE = re.compile(
    r"^(?:(?:so|thus|therefore|hence)\s+)?(?:the\s+)?(?:final\s+|correct\s+|best\s+)?"
    r"(?:answer|option|choice)\s*(?:is|would be|:|-)?\s*",
    re.I,
)


def _from_option_text(text: str, options: Mapping[str, str]) -> str | None:
    """The option whose text is the whole answer, or the whole of a last line after an answer cue
    ("Final answer: maybe"). A sentence that merely contains an option's words ("no evidence") names none."""

    def norm(s: str) -> str:
        return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()

    by_text = {norm(v): k.upper() for k, v in options.items() if norm(v)}
    last = text.strip().splitlines()[-1].strip().strip("*")
    for candidate in (text, _ANSWER_CUE.sub("", last) if _ANSWER_CUE.match(last) else None):
        if candidate is not None and norm(candidate) in by_text:
            return by_text[norm(candidate)]
    return None


def choose(
    answerer: Answerer,
    question: str,
    options: dict[str, str],
    passages: Sequence[Passage] = (),
    draft: str | None = None,
) -> ChosenAnswer:
    """One option letter (``ChosenAnswer.letter``) chosen by ``answerer``'s language model; with no passages this is the
    model with chain of thought and no retrieval (baseline 1). Without a model, the retrieval-only baseline scores the
    options against the evidence. ``draft``: a first choice made without evidence, to revise (COT-Refine)."""
    if not options:
        raise ValueError("choose needs at least one option")
    options = {str(k).strip().upper(): v for k, v in options.items()}
    notices: list[str] = []
    if answerer.llm is not None:
        result, failure = _model_choice(answerer, question, options, passages, draft)
        if result is not None:
            return result
        notices.append(f"{answerer.llm.label} could not be used ({failure}); the {BASELINE_LABEL} chose instead.")
    scores = score_options(question, options, passages, answerer.encoder)
    best = max(scores, key=lambda letter: scores[letter]) if scores else None
    disclaimer = DISCLAIMERS["clinician"]
    if best is None or scores[best] <= 0.0:
        return ChosenAnswer(
            text=f"The {BASELINE_LABEL} found no evidence supporting any option.",
            abstained=True,
            written_by="extractive",
            notices=notices + [BASELINE_NOTICE],
            disclaimer=disclaimer,
        )
    return ChosenAnswer(
        text=f"{best}. {options[best]}",
        letter=best,
        written_by="extractive",
        notices=notices + [BASELINE_NOTICE],
        disclaimer=disclaimer,
    )


def refine_choose(
    answerer: Answerer, question: str, options: dict[str, str], passages: Sequence[Passage] = ()
) -> ChosenAnswer:
    """COT-Refine for multiple choice: choose without evidence (chain of thought), then choose again against the
    evidence with that first choice shown as the draft."""
    first = choose(answerer, question, options, ())
    if first.written_by != "llm" or not passages:
        return first
    answer = choose(answerer, question, options, passages, draft=first.text)
    return answer.model_copy(update={"flags": [*answer.flags, REFINE_FLAG]})


class _Choice(BaseModel):
    reasoning: str
    letter: str


def _model_choice(
    answerer: Answerer, question: str, options: dict[str, str], passages: Sequence[Passage], draft: str | None
) -> tuple[ChosenAnswer | None, str]:
    tag = evidence_tag()
    basis = "the evidence documents and what you know" if passages else "what you know"
    system = template("choose_system").substitute(basis=basis, tag=tag)
    evidence = f"<{tag}>\n{format_evidence(passages)}\n</{tag}>\n\n" if passages else ""
    tool = ToolSpec.of(
        "choose_option", "Give your step-by-step reasoning and the letter of the one option you choose.", _Choice
    )
    tool.input_schema["properties"]["letter"]["enum"] = list(options)  # this question's letters
    user = template("choose_user").substitute(
        evidence=evidence,
        question=escape(question),
        tool=tool.name,
        options="\n".join(f"{letter}. {escape(text)}" for letter, text in options.items()),
    ) + draft_note(draft)

    def parse(data: dict) -> str:
        letter = parse_answer_letter(str(data.get("letter", "")), options)
        if letter is None:
            raise Unusable("no valid option letter")
        return letter

    letter, failure = answerer.call_tool(system, user, tool, parse)
    if letter is None:
        return None, failure
    return ChosenAnswer(
        text=f"{letter}. {options[letter]}", letter=letter, written_by="llm", disclaimer=DISCLAIMERS["clinician"]
    ), ""


def score_options(
    question: str, options: dict[str, str], passages: Sequence[Passage], encoder: Encoder | None = None
) -> dict[str, float]:
    """How well the evidence supports each option: the best evidence sentence's similarity to the option,
    weighted by that sentence's similarity to the question."""
    pool = [s for p in passages for s in split_sentences(p.text)] or [p.text for p in passages if p.text.strip()]
    if not pool:
        return {letter: 0.0 for letter in options}
    similarity = Similarity(pool, encoder)
    relevance = 0.5 + 0.5 * similarity.scores(question)
    result: dict[str, float] = {}
    for letter, text in options.items():
        result[letter] = float(np.max(similarity.scores(text) * relevance))
    return result
