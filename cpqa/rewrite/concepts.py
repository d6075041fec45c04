"""Rule-based query processing: spelling, normalisation, key concepts and intent of a question.

A question's lay phrases ("womb cancer", "blood in my poo"; ``lay_terms``) become concepts of their clinical terms
first. The rest is split into runs of content words (stopwords and punctuation end a run). Inside a run the
longest phrase the vocabulary knows becomes one concept (with its MeSH heading and synonyms); a
hyphenated compound or a phrase followed by its abbreviation in brackets ("biochemical recurrence (BCR)", the
span found by NCBI's Ab3P) becomes one phrase concept; every other content word is a concept of its own. Words too
generic to identify a document ("patients", "effect", "role"), and words only the asker's story uses ("they told my
dad ..."; ``narrative``), are kept apart as ``weak`` concepts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Literal, Sequence

from pydantic import BaseModel, Field

from cpqa.rewrite.lay_terms import SEARCHED, LayMatch, lay_matches
from cpqa.rewrite.lay_terms import read as read_lay
from cpqa.rewrite.narrative import narrative_spans, story_word
from cpqa.rewrite.spelling import english_correction
from cpqa.rewrite.vocabulary import Kind, Term, Vocabulary, phrase_key
from cpqa.rewrite.word_forms import normalize_word
from cpqa.words import STOPWORDS

Intent = Literal[
    "treatment", "diagnosis", "prognosis", "risk", "side_effects", "screening", "prevention", "mechanism", "general"
]

# Words that occur in questions but identify no document on their own.
WEAK_WORDS = frozenset(
    """
able affect among analysis another answer approach associated association based benefit better case cause
change clinical compared comparison concept condition consider current data day design designed develop
different does earlier early effect effective enough evaluation evidence factor favorable find good great help
human important improve improved include increase information issue job kind know last late level long low
lower main major matter mean method necessary need new normal number often one outcome part patient people
person place play population possible potential predict present problem provide rate real reason receive
reduce relation relationship relevant result risk role safe same scale should significant similar specific
still study subset suggest take there time truly type use used useful using value way well what work worth
year
"""
    # light verbs: "does being overweight make you more likely to ..." asks about being overweight, not making
    """
make makes made making give gives gave given go goes went gone come comes came keep keeps kept put seem become
became bring brought
"""
    # indefinite pronouns: "can anyone get it?" asks about no one in particular
    """
anyone anybody anything everyone everybody everything someone somebody something nobody nothing
"""
    # a negated auxiliary, typed with or without its apostrophe ("if they say you cant have surgery"), and "say"
    """
can't cant cannot don't dont doesn't doesnt didn't didnt won't wont isn't isnt aren't arent wasn't wasnt
shouldn't shouldnt couldn't couldnt wouldn't wouldnt haven't havent hasn't hasnt say says said saying
""".split()
)

# An abbreviation in brackets, a word (letters in any script, digits, inner - ' /), or one other character.
_TOKEN = re.compile(r"\(\s*([^\W\d_][\w-]{1,9})\s*\)|([^\W_]+(?:[-'/][^\W_]+)*)|(\S)")

_INTENT_CUES: tuple[tuple[Intent, tuple[str, ...]], ...] = (
    ("side_effects", ("side effect", "adverse", "toxicit", "complication", "tolera")),
    ("screening", ("screen", "mammogra", "colonoscop", "pap smear", "early detection")),
    ("prevention", ("prevent", "reduce the risk", "lower the risk", "avoid")),
    ("diagnosis", ("diagnos", "detect", "biopsy", "imaging", "test", "marker", "staging", "sign", "symptom")),
    (
        "prognosis",
        ("prognos", "survival", "surviv", "outcome", "recurren", "relapse", "life expectancy", "predict", "mortality"),
    ),
    ("risk", ("risk", "cause", "associated", "incidence", "hereditary", "inherit", "genetic", "exposure")),
    (
        "treatment",
        (
            "treat",
            "therap",
            "drug",
            "chemo",
            "surgery",
            "surgical",
            "radiation",
            "manage",
            "cure",
            "dose",
            "dosage",
            "adjuvant",
            "resection",
        ),
    ),
    ("mechanism", ("mechanism", "pathway", "express", "mutation", "receptor", "gene")),
)


class Concept(BaseModel):
    """A key concept of the question and the phrases that may name it in an abstract."""

    text: str  # as normalised from the question
    phrases: list[str] = Field(default_factory=list)  # the concept's own wordings (narrow level)
    synonyms: list[str] = Field(default_factory=list)  # further names (wider levels)
    mesh: str | None = None
    kind: Kind = "other"
    core: bool = False  # the main subject (the disease): relaxed levels keep it
    weak: bool = False  # too generic to require


class ProcessedQuestion(BaseModel):
    normalized: str
    concepts: list[Concept]
    intent: Intent
    corrections: dict[str, str] = Field(default_factory=dict)
    lay: dict[str, list[str]] = Field(default_factory=dict)  # lay phrase -> the clinical terms searched for it


_INTENT_PATTERNS = [
    (intent, re.compile(r"\b(?:" + "|".join(map(re.escape, cues)) + ")", re.IGNORECASE))
    for intent, cues in _INTENT_CUES
]


def detect_intent(text: str) -> Intent:
    """The first intent whose cue starts a word of ``text`` ("treat" in "treated", not in "retreat")."""
    for intent, pattern in _INTENT_PATTERNS:
        if pattern.search(text):
            return intent
    return "general"


def _runs(question: str) -> list[list[tuple[str, str | None]]]:
    """Runs of (word, abbreviation-following-it) between stopwords, numbers and punctuation; a number just before a
    bracketed abbreviation ends the name it abbreviates ("receptor kinase 1 (GRK1)")."""
    runs: list[list[tuple[str, str | None]]] = [[]]
    number = ""  # a number right after a run's word, kept only if an abbreviation follows it
    for m in _TOKEN.finditer(question):
        abbr, word, _ = m.groups()
        if abbr and runs[-1]:
            if number:
                runs[-1].append((number, None))
            runs[-1][-1] = (runs[-1][-1][0], abbr)
            runs.append([])
        elif word and word.isdigit() and runs[-1] and not number:
            number = word
            continue
        elif word and word.lower() not in STOPWORDS and not word.isdigit():
            if number:
                runs.append([])
            runs[-1].append((word, None))
        elif runs[-1]:
            runs.append([])
        number = ""
    return [r for r in runs if r]


@lru_cache(maxsize=1)
def _ab3p():
    from pyab3p import Ab3p

    return Ab3p()


def defined_abbreviations(text: str) -> dict[str, str]:
    """Abbreviations ``text`` defines ("biochemical recurrence (BCR)"), short form -> long form, found by NCBI's
    Ab3P."""
    return {found.short_form: found.long_form for found in _ab3p().get_abbrs(text)}


def _abbreviated_span(words: list[str], abbr: str, defined: dict[str, str]) -> int:
    """How many trailing words an abbreviation stands for: Ab3P's long form when it found one, else the longest
    tail whose first word starts with the abbreviation's first letter (0 when none fits)."""
    if abbr in defined:
        return min(len(defined[abbr].split()), len(words))
    first = abbr[0].lower()
    for n in range(min(len(abbr), len(words)), 1, -1):
        if words[-n].lower().startswith(first):
            return n
    return 0


def process_question(question: str, vocab: Vocabulary, lay_searched: int = SEARCHED) -> ProcessedQuestion:
    """Correct, normalise and split ``question`` into concepts (see the module docstring); ``lay_searched``: the
    clinical terms a lay phrase is searched by at every level."""
    corrections: dict[str, str] = {}
    concepts: dict[str, Concept] = {}

    def add(concept: Concept) -> None:
        key = phrase_key(concept.text)
        if not any(key == phrase_key(p) for c in concepts.values() for p in c.phrases):
            concepts.setdefault(key, concept)

    defined = defined_abbreviations(question)
    coded = frozenset(phrase_key(m.group(1)) for m in _CODE.finditer(question))
    lay = lay_matches(question, vocab)
    start = 0
    for match in [*lay, None]:  # the text between lay phrases in runs; each lay phrase one concept
        for run in _runs(question[start : match.start if match else len(question)]):
            _add_run(run, vocab, defined, corrections, add, coded)
        if match is not None:
            add(_lay(match, vocab, lay_searched))
            start = match.end
    normalized = question
    for wrong, right in corrections.items():
        normalized = re.sub(rf"\b{re.escape(wrong)}\b", right, normalized, flags=re.IGNORECASE)
    normalized = " ".join(normalized.split())
    return ProcessedQuestion(
        normalized=normalized,
        concepts=_told_weak(list(concepts.values()), normalized),
        intent=detect_intent(normalized),
        corrections=corrections,
        lay={m.surface: list(m.term.clinical[:lay_searched]) for m in lay},
    )


def _add_run(
    run: list[tuple[str, str | None]],
    vocab: Vocabulary,
    defined: dict[str, str],
    corrections: dict[str, str],
    add: Callable[[Concept], None],
    coded: frozenset[str] = frozenset(),
) -> None:
    """One run's concepts: known phrases, single words, and a phrase its bracketed abbreviation names."""
    words = _corrected([w for w, _ in run], vocab, corrections)
    abbr = run[-1][1]
    tail: list[str] = []
    if abbr:
        span = max(1, _abbreviated_span(words, abbr, defined))
        words, tail = words[:-span], words[-span:]
    _add_words(words, vocab, add, coded)
    if abbr and tail:  # tail is only cut off after an abbreviation
        surface = " ".join(tail)
        term = vocab.lookup(surface)
        if term:
            add(_known(surface, term, extra=[abbr]))
        else:
            add(Concept(text=surface, phrases=[_as_phrase(surface), abbr]))


def _lay(match: LayMatch, vocab: Vocabulary, searched: int) -> Concept:
    """A lay phrase as the concept of its clinical terms: "womb cancer" searched as endometrial cancer."""
    reading = read_lay(match, vocab, searched)
    return Concept(
        text=match.surface,
        phrases=reading.phrases,
        synonyms=reading.synonyms,
        mesh=reading.mesh,
        kind=reading.kind,
        core=reading.kind == "disease",
    )


def _corrected(words: list[str], vocab: Vocabulary, corrections: dict[str, str]) -> list[str]:
    """Words (as written; returned lower case) with typos fixed: a word English does not use, to the common English
    word an edit from it (``english_correction``: "sympotms"); then a word an edit from a vocabulary word, but only
    where the fix completes a term the vocabulary knows (such a word is often a different, correct word: "addition",
    "tripe palms")."""
    written, words = words, [w.lower() for w in words]
    for j, word in enumerate(written):
        if (english := english_correction(word)) != word:
            corrections[words[j]] = english
            words[j] = english
    norms = [phrase_key(w) or w for w in words]
    fixed = [w if not w.isalpha() or is_weak(n) else vocab.correct(n) for w, n in zip(words, norms)]
    out = list(words)
    i = 0
    while i < len(words):
        plain = vocab.longest_match(norms, i)
        trial = vocab.longest_match(norms[:i] + fixed[i:], i)
        if trial and (not plain or trial[1] > plain[1]):
            for j in range(i, i + trial[1]):
                if fixed[j] != norms[j] and fixed[j][0] == norms[j][0]:
                    corrections[words[j]] = fixed[j]
                    out[j] = fixed[j]
            i += trial[1]
        else:
            i += plain[1] if plain else 1
    return out


# A code name's letters: "RTA 408", "AMG-334" (a drug), whatever disease the letters alone abbreviate.
_CODE = re.compile(r"\b([A-Za-z]{2,6})[ -]?\d")


def _add_words(words: list[str], vocab: Vocabulary, add, coded: frozenset[str] = frozenset()) -> None:
    """Longest known phrases first; every other word is a concept of its own. A disease's abbreviation written as a
    code's letters (``coded``) is a word, not the disease."""
    norms = [phrase_key(w) for w in words]
    i = 0
    while i < len(words):
        match = vocab.longest_match(norms, i)
        if match and match[1] == 1 and norms[i] in coded and vocab.is_short_form(norms[i]):
            match = None
        if match:
            term, n = match
            add(_known(" ".join(words[i : i + n]), term))
            i += n
            continue
        word = words[i]
        add(Concept(text=word, phrases=[_as_phrase(word)], weak=is_weak(normalize_word(word))))
        i += 1


def _told_weak(concepts: list[Concept], question: str) -> list[Concept]:
    """Concepts only the asker's story names (``story_word``: "told", "dad" in "they told my dad its in the lymph
    nodes") made weak; a condition, a treatment or a MeSH term stays required."""
    if not narrative_spans(question):
        return concepts

    def told(concept: Concept) -> bool:
        known = concept.weak or concept.kind in ("disease", "treatment") or concept.mesh
        return not known and story_word(concept.text, question)

    return [c.model_copy(update={"weak": True}) if told(c) else c for c in concepts]


def is_weak(word: str) -> bool:
    """Generic words, also inflected: ``improving``, ``increased``, ``ones``."""
    if len(word) < 3 or word in WEAK_WORDS:
        return True
    for suffix, repl in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", ""), ("ly", ""), ("s", "")):
        if word.endswith(suffix) and word[: -len(suffix)] + repl in WEAK_WORDS:
            return True
    return False


def _known(surface: str, term: Term, extra: Sequence[str] = ()) -> Concept:
    phrases = _distinct([_as_phrase(surface), term.name, *extra])
    return Concept(
        text=surface,
        phrases=phrases,
        synonyms=_distinct(term.synonyms, exclude=phrases),
        mesh=term.mesh,
        kind=term.kind,
        core=term.kind == "disease",
    )


def _as_phrase(text: str) -> str:
    """Hyphens and slashes join words of one phrase: ``patient-controlled`` -> ``patient controlled``."""
    return re.sub(r"[-/]", " ", text)


def _distinct(phrases: list[str], exclude: Sequence[str] = ()) -> list[str]:
    """Phrases distinct by normalised key; MeSH's inverted forms ("Sarcoma, Ewing") are left out."""
    seen = {phrase_key(p) for p in exclude}
    out = []
    for p in phrases:
        key = phrase_key(p)
        if key and key not in seen and "," not in p:
            seen.add(key)
            out.append(p)
    return out
