"""Spelling correction by edit distance: a word to the one known word nearest to it.

``Speller`` corrects against any set of words (a symmetric-deletion index, each word length's built when a typo
first needs it). Two sets use it: the
vocabulary's words (``Vocabulary.correct``: a typo fixed where the fix completes a known term), and general English
(``english_correction``): a word English does not use at all ("sympotms", "mamograms", "hereditry") is read as the
one common English word within an edit of it, so a typo neither ends the search nor is asked of the evidence as if it
named a drug. A word English uses, however rarely ("prostrate", "gleeson"), is left as written; so is a drug's or a
gene's name, which no common English word lies an edit from.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache
from typing import Iterable

from cpqa.options import RewriteOptions

_OPTIONS = RewriteOptions()


class Speller:
    """``correct(word)``: ``word``, or the one word of ``words`` nearest to it within one edit (``long_edits`` from
    12 letters on); ``word`` itself when none or several are."""

    min_letters = 5  # shorter words are too often another word an edit away

    def __init__(self, words: Iterable[str], long_edits: int = 2):
        self.words: frozenset[str] = frozenset(words)
        self.long_edits = long_edits
        self._by_length: dict[int, list[str]] = {}
        for w in self.words:
            self._by_length.setdefault(len(w), []).append(w)
        self._deletions: dict[int, dict[str, set[str]]] = {}  # by word length, each built when first needed
        self._lock = threading.Lock()

    def correct(self, word: str) -> str:
        if word in self.words or len(word) < self.min_letters or not word.isalpha():
            return word
        budget = 1 if len(word) < 12 else self.long_edits
        best: dict[int, set[str]] = {}
        for w in self._near(word) if budget == 1 else self.words:
            if abs(len(w) - len(word)) <= budget and (d := _edits(word, w, budget)) <= budget:
                best.setdefault(d, set()).add(w)
        if not best:
            return word
        nearest = best[min(best)]
        return next(iter(nearest)) if len(nearest) == 1 else word

    def _near(self, word: str) -> set[str]:
        """The words that may lie within one edit of ``word``: those sharing a one-letter deletion with it
        (substitutions, transpositions), or equal to it less or plus one letter, instead of aligning ``word``
        against every word."""
        longer, same = self._deletions_of(len(word) + 1), self._deletions_of(len(word))
        near = set(longer.get(word, ()))
        for variant in _deletions(word):
            near |= same.get(variant, set())
            if variant in self.words:
                near.add(variant)
        return near

    def _deletions_of(self, length: int) -> dict[str, set[str]]:
        """The one-letter deletions of the words of ``length`` letters, each to its words: built on the first
        correction that needs them, so a first typo waits for two lengths' index, not every word's."""
        index = self._deletions.get(length)
        if index is None:
            with self._lock:
                index = self._deletions.get(length)
                if index is None:
                    index = {}
                    for w in self._by_length.get(length, ()):
                        for variant in _deletions(w):
                            index.setdefault(variant, set()).add(w)
                    self._deletions[length] = index
        return index


def english_correction(
    word: str, unknown_zipf: float = _OPTIONS.nonword_zipf, known_zipf: float = _OPTIONS.speller_zipf
) -> str:
    """``word`` as written, or the common English word it misspells (lower case): only a word written in lower case
    (a name is capitalised: "Oncomine", "CRAFFT", "VarDict" are not "oncoming", "craft", "verdict"), of six letters
    or more, that English does not use (below ``unknown_zipf``), to the one word within a single edit that English
    uses often (``known_zipf`` and above)."""
    from wordfreq import zipf_frequency

    if not (word.isalpha() and word.islower()) or len(word) <= Speller.min_letters:
        return word
    if zipf_frequency(word, "en") >= unknown_zipf:
        return word
    return _english(known_zipf).correct(word)


@lru_cache(maxsize=2)
def _english(known_zipf: float) -> Speller:
    from wordfreq import get_frequency_dict

    # Zipf as wordfreq rounds it (log10 of the frequency per billion words), read off the table at once.
    return Speller(
        (
            w
            for w, frequency in get_frequency_dict("en").items()
            if w.isalpha() and len(w) >= Speller.min_letters and round(math.log10(frequency) + 9, 2) >= known_zipf
        ),
        long_edits=1,
    )


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _edits(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a transposition is one edit); limit + 1 once it exceeds ``limit``."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(rows[-1][j] + 1, cur[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], rows[-2][j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        rows = [rows[-1], cur]
    return rows[-1][-1]


__all__ = ["Speller", "english_correction"]
