"""Answering without a language model: rank evidence sentences by similarity to the question.

Used when no Anthropic key is configured or Claude fails. The default similarity is lexical (IDF-weighted
coverage of the question's content words), which is fast and deterministic; an injected ``TextEncoder``
(e.g. the bundled MiniLM) switches to cosine similarity of embeddings. The same scoring picks a
multiple-choice option for the retrieval-only baseline.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from cpqa.models.encoders import EmbeddingCache, Encoder
from cpqa.passages.evidence import unquotable
from cpqa.passages.seos import split_sentences as sentence_spans
from cpqa.types import Passage

# Below these, the evidence is too thin to quote as an answer (lexical coverage / cosine similarity).
MIN_LEXICAL_SCORE = 0.3
MIN_DENSE_SCORE = 0.35

_STOP = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves may might must shall
    get got tell know want need please much many thing things really like one
    """.split()
)
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Content words of ``text``, lower-cased and lightly stemmed."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1]


@dataclass(frozen=True)
class Sentence:
    pmid: str
    text: str
    score: float
    rank: int  # the passage's position in the evidence


@lru_cache(maxsize=8192)
def split_sentences(text: str) -> tuple[str, ...]:
    """Sentences of four words or more (SEOS's pysbd splitter; cached, since the same passages recur)."""
    return tuple(text[s.start:s.end] for s in sentence_spans(text) if s.words >= 4)


def passage_sentences(passage: Passage) -> tuple[str, ...]:
    """The passage's sentences of four words or more: those its segmenter recorded, else split now."""
    if not passage.sentences:
        return split_sentences(passage.text)
    pieces = (passage.text[a:b].strip() for a, b in passage.sentences)
    return tuple(p for p in pieces if len(p.split()) >= 4)


class Similarity:
    """Scores texts against a query: lexical coverage over a pool's IDF, or cosine of an encoder's vectors."""

    def __init__(self, pool: Sequence[str], encoder: Encoder | None = None):
        self.pool = list(pool)
        self.encoder = encoder
        self.threshold = MIN_DENSE_SCORE if encoder is not None else MIN_LEXICAL_SCORE
        self._terms = [set(terms(t)) for t in self.pool]
        df = Counter(t for ts in self._terms for t in ts)
        n = len(self.pool)
        self._idf = {t: math.log(1.0 + n / c) for t, c in df.items()}
        self._max_idf = math.log(1.0 + max(n, 1))
        self._vectors = self._encode(self.pool, persist=True) if encoder is not None and self.pool else None

    def _encode(self, texts: list[str], persist: bool = False) -> np.ndarray:
        """Unit vectors; evidence sentences (``persist``) are read from the persistent passage store when the
        encoder is a cache over one, the question never is."""
        if persist and isinstance(self.encoder, EmbeddingCache):
            raw = self.encoder.encode(texts, persist=True)
        else:
            raw = self.encoder.encode(texts)
        vectors = np.asarray(raw, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def lexical(self, query: str) -> np.ndarray:
        """Share of the query's IDF weight that each pool text covers (0..1)."""
        wanted = set(terms(query))
        total = sum(self._idf.get(t, self._max_idf) for t in wanted)
        if not total:
            return np.zeros(len(self.pool), dtype=np.float32)
        return np.array([sum(self._idf[t] for t in wanted & ts) / total for ts in self._terms], dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        if not self.pool:
            return np.zeros(0, dtype=np.float32)
        if self._vectors is None:
            return self.lexical(query)
        return self._vectors @ self._encode([query])[0]


_LABEL = re.compile(r"^([A-Z][A-Za-z /&-]{2,40}):\s")
_RESTATES = ("objective", "aim", "purpose", "introduction", "background", "context", "rationale", "question")
_ANSWERS = ("conclusion", "result", "finding", "interpretation", "summary")


def _section_weight(label: str | None) -> float:
    """Background and objective sentences restate the question; results and conclusions answer it."""
    label = (label or "").lower()
    if any(word in label for word in _RESTATES):
        return 0.7
    if any(word in label for word in _ANSWERS):
        return 1.1
    return 1.0


def _labelled_sentences(passage: Passage) -> list[tuple[str, float]]:
    """The passage's quotable sentences with the weight of the abstract section each falls in (a sentence that
    addresses the reader, or carries a link, markup or citation marker, is evidence only as data: never quoted)."""
    label = passage.section
    result = []
    for sentence in passage_sentences(passage):
        match = _LABEL.match(sentence)
        if match:
            label = match.group(1)
        if unquotable(sentence) is None:
            result.append((sentence, _section_weight(label)))
    return result


def rank_sentences(question: str, passages: Sequence[Passage], encoder: Encoder | None = None
                   ) -> tuple[list[Sentence], float]:
    """Evidence sentences, best first, and the score below which evidence counts as thin."""
    pool: list[tuple[int, Passage, str, float]] = [
        (rank, p, s, w) for rank, p in enumerate(passages) for s, w in _labelled_sentences(p)
    ]
    similarity = Similarity([s for _, _, s, _ in pool], encoder)
    scores = similarity.scores(question)
    ranked = [Sentence(p.pmid, s, float(score) * w, rank) for (rank, p, s, w), score in zip(pool, scores)]
    ranked.sort(key=lambda x: (-x.score, x.rank))
    return ranked, similarity.threshold


def select_extracts(ranked: list[Sentence], threshold: float, limit: int = 3, per_pmid: int = 2) -> list[Sentence]:
    """The best sentences above ``threshold`` and within reach of the best one, at most ``per_pmid`` each."""
    if not ranked or ranked[0].score < threshold:
        return []
    floor = max(threshold, ranked[0].score * 0.6)
    chosen: list[Sentence] = []
    per: Counter[str] = Counter()
    for sentence in ranked:
        if sentence.score < floor or len(chosen) == limit:
            break
        if per[sentence.pmid] < per_pmid and sentence.text not in {c.text for c in chosen}:
            chosen.append(sentence)
            per[sentence.pmid] += 1
    return chosen


def score_options(question: str, options: dict[str, str], passages: Sequence[Passage],
                  encoder: Encoder | None = None) -> dict[str, float]:
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


def unaddressed(concepts: Sequence, passages: Sequence[Passage]) -> list[str]:
    """The question's named treatments that no passage mentions by any of their names.

    Quoting evidence about other drugs in answer to a question about one the evidence never names would mislead:
    an extractive answer abstains instead (a language model makes that judgement itself)."""
    text = " ".join(p.text for p in passages).lower()
    missing = []
    for concept in concepts:
        if concept.kind != "treatment":
            continue
        names = {concept.text, *concept.phrases, *concept.synonyms, *([concept.mesh] if concept.mesh else [])}
        if not any(re.search(rf"\b{re.escape(name.lower())}", text) for name in names if name.strip()):
            missing.append(concept.text)
    return missing
