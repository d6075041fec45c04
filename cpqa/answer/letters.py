"""Find the chosen option letter in a model's free-text answer.

Language models answer multiple-choice questions in many shapes: ``Answer: (B)``, ``the correct option is c.``,
``**D**``, a JSON object, a bare letter, or the option's text. The parser tries the most explicit forms first
and, within a form, takes the last occurrence (chain-of-thought reasoning states its conclusion at the end).
"""

from __future__ import annotations

import json
import re
from typing import Mapping

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
