"""Rule-based ladder builder: Boolean expressions from concepts, most specific first.

Each level is a logical relaxation of the one before, so on any backend its hits include the previous
level's:

1. every strong concept ANDed, each as its wordings in ``[tiab]`` or its MeSH heading in ``[mh]``;
2. the core concept (the disease, or what the LLM marked core) ANDed with any m of the other strong
   concepts, m falling one by one (without a core concept: any m of all, down to two): the most specific
   terms drop out first wherever they fail to match;
3. AND turned to OR: every word of every concept (weak ones too) and the MeSH headings, a bag of words
   whose ranking the backend's BM25 decides;
4. tags and terms widened: the same words in ``[tw]`` plus singular / plural forms and the vocabulary's
   synonyms.

Synonyms wait for the last level on purpose: every synonym is one more BM25 term, and ORed into the
earlier levels they outweigh the question's own words in the ranking (recall@10 on the BioASQ cancer set
fell from 0.73 to 0.49 with them in the bag-of-words level). Every phrase passes through
``boolean.quote_term``, so text from the question cannot change the structure.
"""

from __future__ import annotations

from itertools import combinations
from typing import Iterable

from cpqa.options import RewriteOptions
from cpqa.sources.boolean import BooleanQueryError, quote_term
from cpqa.rewrite.concepts import STOPWORDS, Concept
from cpqa.rewrite.vocabulary import phrase_key
from cpqa.rewrite.word_forms import normalize_word, plural_of

_DEFAULTS = RewriteOptions()  # for a ladder built outside a pipeline; the rewrite stage passes its own options
NARROW_TAG, WIDE_TAG, ALL_FIELDS = "tiab", "tw", "all"
GENERIC_HEADING = "Neoplasms"
_KIND_RANK = {"disease": 0, "treatment": 1, "other": 2, "intent": 3}


def word_forms(phrase: str, plural: bool = False) -> list[str]:
    """The phrase as written and with its last word singular; with ``plural`` (known noun phrases, such as
    vocabulary terms) also plural: ``lung cancers`` -> ``lung cancer``; ``lung cancer`` -> ``lung cancers``."""
    words = phrase.split()
    if not words:
        return []
    last = words[-1]
    forms = [phrase]
    if last.isalpha() and len(last) > 3:
        singular = normalize_word(last)
        variants = (singular, plural_of(singular)) if plural else (singular,)
        for variant in variants:
            candidate = " ".join([*words[:-1], variant])
            if candidate.lower() not in (f.lower() for f in forms):
                forms.append(candidate)
    return forms


def _terms(phrases: Iterable[str], tag: str) -> list[str]:
    """Tagged quoted terms, distinct regardless of case; wordings with nothing searchable are skipped."""
    parts: list[str] = []
    for phrase in phrases:
        try:
            term = f"{quote_term(phrase)}[{tag}]"
        except BooleanQueryError:
            continue
        if term.lower() not in (p.lower() for p in parts):
            parts.append(term)
    return parts


def concept_expression(concept: Concept) -> str:
    """One concept as an OR group of its own wordings in ``[tiab]`` and its MeSH heading in ``[mh]``."""
    parts = _terms(concept.phrases, NARROW_TAG) + _mesh(concept)
    return _or(parts)


def _mesh(concept: Concept) -> list[str]:
    return _terms([concept.mesh], "mh") if concept.mesh else []


def _words(concept: Concept) -> list[str]:
    """The content words of the concept's wordings; a wording of stopwords only ("ALL") stays whole, so
    the bag of words still finds every document an earlier level found."""
    words: list[str] = []
    for phrase in concept.phrases:
        content = [w for w in phrase.split() if w.lower() not in STOPWORDS]
        words += content or [phrase]
    return words


def _bag_of_words(concepts: list[Concept]) -> str:
    words = _terms([w for c in concepts for w in _words(c)], NARROW_TAG)
    return _or(words + [m for c in concepts for m in _mesh(c)])


def _widest(concepts: list[Concept], options: RewriteOptions) -> str:
    forms: list[str] = []
    for c in concepts:
        plural = c.kind in ("disease", "intent")
        for phrase in [*_words(c), *c.phrases, *_useful_synonyms(c, options)]:
            forms += word_forms(phrase, plural=plural)
    return _or(_terms(forms, WIDE_TAG) + [m for c in concepts for m in _mesh(c)])


def _useful_synonyms(concept: Concept, options: RewriteOptions) -> list[str]:
    """Synonyms that widen the concept: not ones containing a wording already present."""
    own = [phrase_key(p) for p in concept.phrases]
    out = []
    for synonym in concept.synonyms:
        key = phrase_key(synonym)
        if (
            key
            and len(key.split()) <= options.ladder_synonym_words
            and " - " not in synonym
            and not any(o in key for o in own)
        ):
            out.append(synonym)
        if len(out) >= options.ladder_synonyms:
            break
    return out


def rank_concepts(
    concepts: Iterable[Concept], most: int = _DEFAULTS.ladder_and_concepts
) -> tuple[list[Concept], list[Concept]]:
    """(strong concepts to AND, most important first, at most ``most``; the rest)."""
    concepts = list(concepts)
    strong = [c for c in concepts if not c.weak] or concepts[:1]
    strong.sort(key=lambda c: (not c.core, _KIND_RANK.get(c.kind, 2), -len(c.text)))
    kept = strong[:most]
    return kept, [c for c in concepts if c not in kept]


def _core(strong: list[Concept]) -> Concept | None:
    """The core concept every relaxed level keeps: the first specific one. The bare "cancer" (Neoplasms)
    is no core: in a cancer corpus it excludes only the documents that lack the word."""
    return next((c for c in strong if c.core and c.mesh != GENERIC_HEADING), None)


def _and(parts: Iterable[str]) -> str:
    parts = [p for p in parts if p]
    return parts[0] if len(parts) == 1 else " AND ".join(parts)


def _or(parts: Iterable[str]) -> str:
    parts = [p for p in parts if p]
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def _at_least(concepts: list[Concept], m: int) -> str:
    """Any ``m`` of ``concepts`` ANDed: an OR of the AND of each m-subset."""
    expr = {id(c): concept_expression(c) for c in concepts}
    clauses = [_and(expr[id(c)] for c in combo) for combo in combinations(concepts, m)]
    return _or(f"({c})" if " AND " in c else c for c in clauses)


def ranking_expression(concepts: list[Concept]) -> str:
    """The expression whose BM25 ranks E2's union in "bestmatch": every word of every concept and the MeSH
    headings, ORed (the bag-of-words level); "" without concepts."""
    return _bag_of_words(concepts) if concepts else ""


def build_ladder(concepts: list[Concept], options: RewriteOptions = _DEFAULTS) -> list[str]:
    """Boolean expressions from most specific to most relaxed (see the module docstring); at least three
    when there is any concept, none when there is none."""
    if not concepts:
        return []
    strong, others = rank_concepts(concepts, options.ladder_and_concepts)
    levels = [_and(concept_expression(c) for c in strong)]
    core = _core(strong)
    if core is not None:
        rest = [c for c in strong if c is not core]
        for m in range(len(rest) - 1, 0, -1):
            levels.append(_and([concept_expression(core), _at_least(rest, m)]))
    else:
        for m in range(len(strong) - 1, 1, -1):
            levels.append(_at_least(strong, m))
    everything = [*strong, *others]
    levels += [_bag_of_words(everything), _widest(everything, options)]
    ladder = list(dict.fromkeys(level for level in levels if level))
    if len(ladder) < 3:  # one short concept: the last resort searches every field
        ladder.append(
            _or(
                _terms([w for c in everything for w in _words(c)], ALL_FIELDS)
                + [m for c in everything for m in _mesh(c)]
            )
        )
    return list(dict.fromkeys(ladder))
