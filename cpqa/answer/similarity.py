"""Similarity of evidence sentences to a question: word coverage over a pool's IDF, or the cosine of an encoder's
vectors; ``scores_by_kind`` scores a patient page's sentences and a research record's by their own encoders."""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from cpqa.models.encoders import Encoder, unit_rows
from cpqa.words import content_terms


class Similarity:
    """Scores texts against a query: lexical coverage over a pool's IDF, or cosine of an encoder's vectors."""

    def __init__(self, pool: Sequence[str], encoder: Encoder | None = None):
        self.pool = list(pool)
        self.encoder = encoder
        self._terms = [set(content_terms(t)) for t in self.pool]
        df = Counter(t for ts in self._terms for t in ts)
        n = len(self.pool)
        self._idf = {t: math.log(1.0 + n / c) for t, c in df.items()}
        self._max_idf = math.log(1.0 + max(n, 1))
        self._vectors = self._encode(self.pool) if encoder is not None and self.pool else None

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (an evidence sentence's come from the passage store through the passage cache)."""
        return unit_rows(self.encoder.encode(texts))  # type: ignore[union-attr]

    def lexical(self, query: str) -> np.ndarray:
        """Share of the query's IDF weight that each pool text covers (0..1)."""
        wanted = set(content_terms(query))
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


def scores_by_kind(
    question: str, pool: Sequence[tuple[bool, str]], encoder: Encoder | None, research: Encoder | None = None
) -> np.ndarray:
    """The similarity to ``question`` of each (is a patient page's, sentence) of ``pool``: by ``encoder`` (or word
    coverage over the whole pool), a research sentence by ``research`` where given."""
    if research is None:
        return Similarity([text for _, text in pool], encoder).scores(question)
    scores = np.zeros(len(pool), dtype=np.float32)
    for kind, scorer in ((True, encoder), (False, research)):  # patient pages, then research
        mine = [i for i, (page, _) in enumerate(pool) if page == kind]
        if mine:
            scores[mine] = Similarity([pool[i][1] for i in mine], scorer).scores(question)
    return scores
