"""Sentences, one module for the product: ``sentence_bounds`` for records' prose (SEOS, the quotes) and ``split_rough``
for text that only needs its sentences apart, fast (a question to truncate, a passage's sentences to screen, an
answer's sentences to check for citations).

Sentence boundaries of scientific prose, by rule: a full stop, question or exclamation mark followed by space and
a sentence opening (a capital, a digit, or a gene-style word such as "p53" or "mRNA"), unless the mark ends an
abbreviation ("e.g.", "et al.", "vs.", "Fig.", an initial) or splits a number the record itself broke ("59. 3"),
plus a structured-abstract label glued to the previous sentence ("(EDs).DATA SOURCE:").

It replaced pysbd (issue 27): on 1,500 sample abstracts the two agree on 77 % of records outright, and where they
differ pysbd mostly splits broken decimals ("lod score 87. 69") and ellipses that this keeps whole, while this is
about 150 times faster (180,000 against 1,100 sentences per second on this machine), which matters because every
record met for the first time is split at question time.
"""

from __future__ import annotations

import re

# Abbreviations that end with a full stop inside a sentence (lower-cased, without their final stop).
_ABBREVIATIONS = (
    r"e\.g|i\.e|et al|vs|cf|figs?|refs?|vol|approx|ca|dr|mrs?|ms|prof|inc|ltd|jr|sr|resp|s?spp?|subsp|var|"
    r"viz|al|eqs?|tab|suppl|dept|univ|incl|pts|nos|st\.dev|s\.d|s\.e"
)
_BOUNDARY = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?(?:[A-Z0-9]|[a-z]+[A-Z0-9]))|\.(?=[A-Z]{2,}[A-Z /&-]*:)")
_ABBREVIATION_END = re.compile(rf"(?:(?<![\w-])(?:{_ABBREVIATIONS})|(?:^|(?<=[\s(]))[A-Za-z]|\bNo)\.$", re.I)
_BROKEN_NUMBER = re.compile(r"\d\.\s+\d")
_LOOKBACK = 12  # characters before a mark that an abbreviation can span
# After . ! ? (a closing quote or bracket or two stay with their sentence) and whitespace, before more text.
_ROUGH_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]])|(?<=[.!?][\"')\]]{2}))\s+(?=\S)")


def sentence_bounds(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence of ``text[start:end]``, stripped of surrounding whitespace, in ``text``
    coordinates."""
    end = len(text) if end is None else end
    bounds: list[tuple[int, int]] = []
    cursor = start
    for match in _BOUNDARY.finditer(text, start, end):
        mark = match.start() + 1  # just after the full stop (or other mark)
        if _ABBREVIATION_END.search(text, max(cursor, mark - _LOOKBACK), mark) or _BROKEN_NUMBER.match(text, mark - 2):
            continue
        _add(text, cursor, mark if match.group(0).startswith(".") and len(match.group(0)) == 1 else match.end(), bounds)
        cursor = match.end()
    _add(text, cursor, end, bounds)
    return bounds


def _add(text: str, start: int, end: int, bounds: list[tuple[int, int]]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        first = start + len(piece) - len(piece.lstrip())
        bounds.append((first, first + len(stripped)))


def split_rough(text: str) -> list[str]:
    """``text`` cut after every sentence mark followed by space, abbreviations and all (no look at what follows): the
    splitter for text whose sentences need only be apart, run where ``sentence_bounds``' care costs too much or a
    quoted extract must keep its closing quotation mark."""
    return _ROUGH_END.split(text)


__all__ = ["sentence_bounds", "split_rough"]
