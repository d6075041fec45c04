"""A cancer's stage or grade named by number: "stage 3", "Stage IIIA", "grade 4". A patient asking what stage 3 means,
or how long people live at stage 4, asks about that stage: an answer must name it, not only the disease. Arabic and
Roman numerals name the same stage, a sub-stage its stage ("IIIA" is stage 3). A text listing three stages or more
of one kind ("Stage 0; Stage I; Stage II; Stage III; Stage IV") is about staging, not about one stage, so it names
none of them."""

from __future__ import annotations

import re
from functools import lru_cache

from cpqa.options import RewriteOptions

_MARK = re.compile(r"\b(stage|grade)\s+(0|[1-4]|iv|iii|ii|i)(?:[abc])?\b", re.IGNORECASE)
_NUMBER = {"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "i": "1", "ii": "2", "iii": "3", "iv": "4"}


@lru_cache(maxsize=4096)
def stage_marks(text: str, listing: int = RewriteOptions().stage_list) -> frozenset[str]:
    """The stages and grades ``text`` names, as marks ("stage3", "grade2"); none of a kind it lists (``listing``
    distinct stages of it or more)."""
    marks: dict[str, set[str]] = {}
    for kind, number in _MARK.findall(text):
        marks.setdefault(kind.lower(), set()).add(_NUMBER[number.lower()])
    return frozenset(f"{kind}{n}" for kind, numbers in marks.items() if len(numbers) < listing for n in numbers)


_ROMAN = {"1": "I", "2": "II", "3": "III", "4": "IV"}


def roman_stages(text: str) -> list[str]:
    """The stages ``text`` writes in Arabic numerals, written as cancer.gov's pages write them ("stage 3": "stage
    III"), so a search for the page's words finds them."""
    return [f"{kind} {_ROMAN[n]}" for kind, n in _MARK.findall(text) if n in _ROMAN]


__all__ = ["roman_stages", "stage_marks"]
