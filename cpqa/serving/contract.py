"""What the API's schema says the screen refuses, so a schema-driven client or tester finds no request the schema allows
and the server refuses.

The screen (:func:`cpqa.safety.screening.check_question`) refuses a question with no letter once its text is
NFKC-normalised: "0", "???" and "½" are refused, "é", "你好", "™" (TM) and "Ⅻ" (XII) are not. ``question_pattern``
is the same rule as a JSON-schema ``pattern``: one character class of every character whose NFKC form holds a
letter, spelled so that ECMA-262 in Unicode mode (the ``u`` flag, as JSON-schema validators use it), Python's ``re``
and Rust's ``regex`` read it alike (``\\uXXXX`` in the Basic Multilingual Plane, the characters themselves beyond
it). ``\\p{L}`` is not used: Python's ``re`` lacks it, and letters alone would not be the screen's rule.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from pydantic_core import PydanticCustomError

PMID_PATTERN = "^[0-9]{1,9}$"
QUESTION_RULE = "at least one letter, in any script"


def bears_letter(char: str) -> bool:
    """Whether the screen counts ``char`` as a letter: its NFKC form holds one (``str.isalpha``)."""
    return any(ch.isalpha() for ch in unicodedata.normalize("NFKC", char))


@lru_cache(maxsize=1)
def question_pattern() -> str:
    """The JSON-schema ``pattern`` a question must match: one character the screen counts as a letter, anywhere.
    Built once, from this Python's Unicode tables (the server's own, so schema and screen agree)."""
    ranges: list[list[int]] = []
    for point in range(0x110000):
        if 0xD800 <= point <= 0xDFFF or not bears_letter(chr(point)):
            continue
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    return "[" + "".join(_spell(a) if a == b else f"{_spell(a)}-{_spell(b)}" for a, b in ranges) + "]"


def _spell(point: int) -> str:
    return f"\\u{point:04X}" if point <= 0xFFFF else chr(point)


def question_schema(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` for a question: the pattern and what it means (the screen refuses the rest with 422)."""
    schema["pattern"] = question_pattern()
    schema["examples"] = ["Does tamoxifen reduce the risk of breast cancer recurrence?"]
    schema["description"] = (
        f"the question: {QUESTION_RULE} (the pattern is every character whose NFKC form is a letter, read in "
        "Unicode mode); a question without one is refused with 422"
    )


def json_integer(value: Any) -> Any:
    """JSON schema's integer: ``5`` and ``5.0``, never ``true`` or ``"5"`` (pydantic's lax mode takes those). A
    ``mode="before"`` field validator, so the fields' JSON schema keeps its ``minimum`` and ``maximum``."""
    if isinstance(value, (bool, str, bytes)):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value
