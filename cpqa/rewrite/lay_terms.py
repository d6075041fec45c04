"""Lay words: what patients write ("womb cancer", "blood in my poo", "chemo and radio") read as the clinical terms
that records use ("endometrial cancer", "rectal bleeding", "radiotherapy").

The table (``data/lay_terms.toml``) gives each mapping its kind, its MeSH heading where one exists (so the
vocabulary links the concept to its MeSH / Disease Ontology synonyms) and the public lay glossary it reflects. A
phrase matches on normalised words (``normalize_word``: case, UK spelling, plural), with determiners skipped inside
it ("blood in my poo" is "blood in poo"), the longest first. A word that is also ordinary English carries the context
it needs, so it stays ordinary elsewhere: "radio" is radiotherapy only within two words of a treatment word and never
as "the radio", "the change" is the menopause only after "through" / "after" and beside a woman's symptom, "wee" is
urine but not before "bit". Where the vocabulary knows a longer phrase across a lay phrase ("hydatidiform mole"), the
vocabulary's reading wins.

Used by the rewrite (``concepts.process_question`` makes each lay phrase a concept of its clinical terms;
``gloss`` names them in the search intent) and by anything that must read a lay word as clinical:
``clinical_terms("pain in my tummy")`` -> ``["abdominal pain", ...]``.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib.resources import files
from typing import Iterable, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cpqa.options import RewriteOptions
from cpqa.rewrite.vocabulary import Kind, Term, Vocabulary, phrase_key, tokenize, word_spans
from cpqa.rewrite.word_forms import normalize_word
from cpqa.words import STOPWORDS

LayKind = Literal["body part", "symptom", "disease", "treatment", "test", "function", "person"]
DETERMINERS = frozenset("a an the my his her their your our its this that these those some".split())
SEARCHED = RewriteOptions().lay_searched  # clinical terms searched beside the lay words at every level
GLOSSED = RewriteOptions().lay_glossed  # clinical terms the search intent names after a lay phrase
_CONCEPT_KIND: dict[str, Kind] = {"disease": "disease", "treatment": "treatment"}  # the other kinds: "other"


class LayTerm(BaseModel):
    """One row of the table: lay phrases, the clinical terms they mean, and the context an ambiguous one needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lay: tuple[str, ...] = Field(min_length=1)
    clinical: tuple[str, ...] = Field(min_length=1)
    mesh: str | None = None
    kind: LayKind
    source: str = Field(min_length=10)
    exact: bool = False  # the phrases as written (lower case), not by their singular: "secondaries" is not "secondary"
    near: frozenset[str] = frozenset()  # one of these words within ``window`` words either side
    window: int = Field(default=5, ge=1, le=12)
    preceded_by: frozenset[str] = frozenset()  # one of these words right before the phrase
    not_near: frozenset[str] = frozenset()
    not_preceded_by: frozenset[str] = frozenset()
    not_followed_by: frozenset[str] = frozenset()
    note: str = ""  # why the context

    @field_validator("near", "preceded_by", "not_near", "not_preceded_by", "not_followed_by", mode="before")
    @classmethod
    def _normalised(cls, words: Iterable[str]) -> frozenset[str]:
        return frozenset(normalize_word(w) for w in words)

    @property
    def contextual(self) -> bool:
        """Whether the phrases are also ordinary English (they need a context to mean this)."""
        return bool(self.near or self.preceded_by)

    def fits(self, words: list[str], start: int, end: int) -> bool:
        """Whether ``words[start:end]`` (normalised words) stands in the context this term needs."""
        before = words[start - 1] if start else ""
        after = words[end] if end < len(words) else ""
        around = {*words[max(0, start - self.window) : start], *words[end : end + self.window]}
        return (
            (not self.preceded_by or before in self.preceded_by)
            and (not self.near or bool(around & self.near))
            and before not in self.not_preceded_by
            and after not in self.not_followed_by
            and not around & self.not_near
        )


class LayMatch(NamedTuple):
    surface: str  # the words as the text writes them
    start: int  # character offsets in the text
    end: int
    term: LayTerm


class Reading(NamedTuple):
    """A lay phrase as a concept's fields (``concepts.Concept``)."""

    phrases: list[str]  # searched at every ladder level: the lay words when unambiguous, the first clinical terms
    synonyms: list[str]  # the other clinical terms, then the linked vocabulary term's name and synonyms
    mesh: str | None
    kind: Kind


class LayTable:
    """The lay phrases, indexed by their first word (normalised, or as written for ``exact`` rows), longest first."""

    def __init__(self, terms: Iterable[LayTerm]):
        self.terms = tuple(terms)
        self._index: dict[tuple[bool, str], list[tuple[tuple[str, ...], LayTerm]]] = {}
        for term in self.terms:
            for phrase in term.lay:
                words = _phrase_words(phrase, term.exact)
                if words:
                    self._index.setdefault((term.exact, words[0]), []).append((words, term))
        for entries in self._index.values():
            entries.sort(key=lambda entry: -len(entry[0]))

    def find(self, text: str, vocabulary: Vocabulary | None = None) -> list[LayMatch]:
        """The lay phrases of ``text``, left to right, none overlapping; with ``vocabulary``, none that a phrase of
        the vocabulary crosses or covers more widely."""
        spans = word_spans(text)
        written = [w for w, _, _ in spans]
        words = [normalize_word(w) for w in written]
        found: list[LayMatch] = []
        i = 0
        while i < len(words):
            hit = self._at(words, written, i, vocabulary)
            if hit is None:
                i += 1
                continue
            end, term = hit
            start_char, end_char = spans[i][1], spans[end - 1][2]
            found.append(LayMatch(text[start_char:end_char], start_char, end_char, term))
            i = end
        return found

    def _at(
        self, words: list[str], written: list[str], i: int, vocabulary: Vocabulary | None
    ) -> tuple[int, LayTerm] | None:
        candidates = [*self._index.get((False, words[i]), ()), *self._index.get((True, written[i]), ())]
        for phrase, term in sorted(candidates, key=lambda entry: -len(entry[0])):
            end = _extent(written if term.exact else words, i, phrase)
            if end is None or not term.fits(words, i, end):
                continue
            if vocabulary is not None and _crossed(vocabulary, words, i, end):
                continue
            return end, term
        return None


def _phrase_words(phrase: str, exact: bool = False) -> tuple[str, ...]:
    """A lay phrase's words (normalised unless ``exact``); determiners after the first word are left out (the
    text's are skipped)."""
    words = [w if exact else normalize_word(w) for w in tokenize(phrase)]
    return tuple(words[:1] + [w for w in words[1:] if w not in DETERMINERS])


def _extent(words: list[str], start: int, phrase: tuple[str, ...]) -> int | None:
    """The end of ``phrase`` read from ``words[start]`` (whose first word matches), determiners skipped."""
    j = start + 1
    for word in phrase[1:]:
        while j < len(words) and words[j] in DETERMINERS and words[j] != word:
            j += 1
        if j >= len(words) or words[j] != word:
            return None
        j += 1
    return j


def _crossed(vocabulary: Vocabulary, words: list[str], start: int, end: int) -> bool:
    """Whether a vocabulary phrase of two words or more covers ``words[start:end]`` and more, or crosses its edge."""
    for s in range(max(0, start - vocabulary.max_words + 1), end):
        found = vocabulary.longest_match(words, s)
        if found is None or found[1] < 2:
            continue
        e = s + found[1]
        if (s <= start and e >= end and e - s > end - start) or s < start < e or s < end < e:
            return True
    return False


@lru_cache(maxsize=1)
def lay_table() -> LayTable:
    """The packaged table (``cpqa/rewrite/data/lay_terms.toml``), loaded once."""
    text = files("cpqa.rewrite").joinpath("data", "lay_terms.toml").read_text(encoding="utf-8")
    return LayTable(LayTerm.model_validate(row) for row in tomllib.loads(text)["term"])


def lay_matches(text: str, vocabulary: Vocabulary | None = None) -> list[LayMatch]:
    """The lay phrases of ``text`` with their table rows (kind, clinical terms, MeSH heading, source)."""
    return lay_table().find(text, vocabulary)


def clinical_terms(text: str, vocabulary: Vocabulary | None = None) -> list[str]:
    """The clinical terms the lay words of ``text`` mean, in order, distinct: "a lump in my breast" -> ["breast
    mass", "palpable breast mass", "breast lump"]; [] when it has none."""
    return _distinct([t for match in lay_matches(text, vocabulary) for t in match.term.clinical])


def with_clinical_terms(synonyms: list[str], text: str) -> list[str]:
    """``synonyms`` and, after them, the clinical terms of the lay words in ``text`` (a concept a language model
    left in lay words)."""
    return _distinct([*synonyms, *clinical_terms(text)])


def read(match: LayMatch, vocabulary: Vocabulary | None = None, searched: int = SEARCHED) -> Reading:
    """A lay phrase as a concept: its first clinical terms (and its own words, when they are not ordinary English
    and hold no stopword) searched together, and the vocabulary term of its MeSH heading linked for the rest."""
    term = match.term
    linked = _linked(term, vocabulary) if vocabulary is not None else None
    own = [] if term.contextual or set(tokenize(match.surface)) & STOPWORDS else [_plain(match.surface)]
    phrases = _distinct([*own, *term.clinical[:searched]])
    more = [*term.clinical[searched:], *([linked.name, *linked.synonyms] if linked else [])]
    kind = linked.kind if linked else _CONCEPT_KIND.get(term.kind, "other")
    return Reading(phrases, _distinct(more, exclude=phrases), term.mesh or (linked.mesh if linked else None), kind)


def gloss(text: str, vocabulary: Vocabulary | None = None, most: int = GLOSSED) -> str:
    """``text`` with each lay phrase followed by its first clinical terms in brackets, for the searches that read
    the question's words (BM25, the semantic path, the passages): "womb cancer" -> "womb cancer (endometrial cancer
    or uterine cancer)". Terms the text names already are not repeated; a phrase met twice is glossed once."""
    parts: list[str] = []
    named = f" {phrase_key(text)} "
    last = 0
    glossed: set[int] = set()
    for match in lay_matches(text, vocabulary):
        if id(match.term) in glossed:
            continue
        glossed.add(id(match.term))
        new: list[str] = []
        for clinical in match.term.clinical:
            key = phrase_key(clinical)
            if len(new) < most and f" {key} " not in named and not any(key in phrase_key(n) for n in new):
                new.append(clinical)
        if new:
            parts += [text[last : match.end], f" ({' or '.join(new)})"]
            last = match.end
            named += " ".join(phrase_key(n) for n in new) + " "
    return "".join(parts) + text[last:]


def _linked(term: LayTerm, vocabulary: Vocabulary) -> Term | None:
    """The vocabulary term of the row's MeSH heading (found by a clinical term or the heading), or without a
    heading the first one a clinical term names."""
    found = [t for t in (vocabulary.lookup(p) for p in (*term.clinical, *([term.mesh] if term.mesh else []))) if t]
    if term.mesh:
        return next((t for t in found if t.mesh == term.mesh), None)
    return found[0] if found else None


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[-/]", " ", text).split())


def _distinct(phrases: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """Phrases distinct by normalised key, without MeSH's inverted forms ("Neoplasms, Hormone-Dependent")."""
    seen = {phrase_key(p) for p in exclude}
    out = []
    for phrase in phrases:
        key = phrase_key(phrase)
        if key and key not in seen and "," not in phrase:
            seen.add(key)
            out.append(phrase)
    return out
