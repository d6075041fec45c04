"""The answer ranker: which of the research sentences about a question's subject states its answer.

Similarity ranks the sentences that share the question's words first, and those are often the ones that restate its
topic ("PRF1 mutations were studied in 40 families") rather than answer it ("PRF1 mutations cause familial
haemophagocytic lymphohistiocytosis"). The ranker is a logistic regression over what tells them apart, read from the
sentence, its record and the question (``features``): its similarity and place, whether the addressing rule accepts
it and names its subject, the specialist words and symbols it adds to the question's (an answer names something the
question does not), the share of the question it covers, a number, its abstract section. Trained by ``cpqa train
ranker`` on the BioASQ train split's factoid and list questions (a sentence is positive when it names one of the
question's exact answers), its weights and their provenance in ``cpqa/models/trained/answer_ranker.json``; it orders
the best ``AnswerOptions.ranker_candidates`` sentences by similarity, and the quotes are chosen from them as before
(sentences the rule accepts first). Off by default (``AnswerOptions.ranker``): its gain on the tuning split did not
hold on questions never tuned on (docs/results.md, issue 35).
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.answer.extractive import Sentence
from cpqa.answer.intent import Addressing, record_text
from cpqa.types import Passage
from cpqa.words import content_terms, is_specialist

TRAINED_RANKER = Path(__file__).resolve().parents[1] / "models" / "trained" / "answer_ranker.json"
FEATURES = (
    "similarity",
    "similarity_share_of_best",
    "log_place",
    "first",
    "rule_accepts",
    "names_subject",
    "new_specialist_words",
    "new_symbols",
    "adds_a_specialist_word",
    "question_covered",
    "has_number",
    "asks_which_x_new_words",
    "asks_list_x_new_words",
    "names_subject_x_new_words",
    "conclusions",
    "results",
    "background",
    "log_words",
    "is_title",
    "log_passage_rank",
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
_SYMBOL = re.compile(r"[A-Z].*\d|\d.*[A-Z]|^[A-Z]{2,}$")  # BRCA1, IL-6, HER2, TP53, EGFR
_WHICH = re.compile(r"\s*(?:which|what|name|list|how)\b", re.IGNORECASE)
_LIST = re.compile(r"^\s*list\b|\blist\b", re.IGNORECASE)
_COUNT_CAP = 5  # counts above this say no more (part of the features, as trained)


def features(
    question: str, sentence: Sentence, place: int, best: float, passage: Passage, addressing: Addressing
) -> list[float]:
    """The ranker's reading of one candidate (in ``FEATURES``' order): ``place`` among the candidates by similarity,
    ``best`` the first candidate's similarity."""
    asked = set(content_terms(question))
    words = set(content_terms(sentence.text))
    tokens = _WORD.findall(sentence.text)
    new = [t for t in tokens if is_specialist(t.lower()) and not set(content_terms(t)) <= asked]
    symbols = [t for t in tokens if _SYMBOL.search(t) and not set(content_terms(t)) <= asked]
    record = record_text(passage)
    subject = addressing.names_subject(sentence.text, record)
    accepts = subject and addressing.addresses(sentence.text, record)
    section = (passage.section or "").lower()
    n_new = min(len(new), _COUNT_CAP)
    return [
        sentence.score,
        sentence.score / best if best > 0 else 0.0,
        math.log1p(place),
        float(place == 0),
        float(accepts),
        float(subject),
        float(n_new),
        float(min(len(symbols), _COUNT_CAP)),
        float(n_new > 0),
        len(asked & words) / max(len(asked), 1),
        float(bool(re.search(r"\d", sentence.text))),
        float(bool(_WHICH.match(question))) * n_new,
        float(bool(_LIST.search(question))) * n_new,
        float(subject) * n_new,
        float("conclu" in section),
        float("result" in section),
        float("backg" in section or "intro" in section),
        math.log(max(len(sentence.text.split()), 1)),
        float(sentence.text == (passage.title or "")),
        math.log1p(sentence.rank),
    ]


def candidate_features(
    question: str, ranked: Sequence[Sentence], passages: Sequence[Passage], addressing: Addressing, top: int
) -> np.ndarray:
    """The features of the first ``top`` of ``ranked`` (best by similarity first), one row each."""
    head = list(ranked[:top])
    best = head[0].score if head else 0.0
    rows = [features(question, s, i, best, passages[s.rank], addressing) for i, s in enumerate(head)]
    return np.array(rows, dtype=np.float64).reshape(len(head), len(FEATURES))


class AnswerRanker:
    """``probabilities(question, ranked, passages, addressing, top)``: for each of the first ``top`` candidates, the
    probability that it names the answer, by (passage, sentence)."""

    def __init__(
        self,
        mean: Sequence[float] | np.ndarray,
        scale: Sequence[float] | np.ndarray,
        weights: Sequence[float] | np.ndarray,
        bias: float,
    ):
        if not len(mean) == len(scale) == len(weights) == len(FEATURES):
            raise ValueError(f"the ranker reads {len(FEATURES)} features; its weights have {len(weights)}")
        self.mean, self.scale = np.asarray(mean, dtype=np.float64), np.asarray(scale, dtype=np.float64)
        self.weights, self.bias = np.asarray(weights, dtype=np.float64), float(bias)

    @classmethod
    def load(cls, path: Path | str = TRAINED_RANKER) -> "AnswerRanker":
        return _load(str(path))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros(0)
        logits = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def probabilities(
        self, question: str, ranked: Sequence[Sentence], passages: Sequence[Passage], addressing: Addressing, top: int
    ) -> dict[tuple[int, str], float]:
        head = ranked[:top]
        found = self.predict(candidate_features(question, head, passages, addressing, top))
        return {(s.rank, s.text): float(p) for s, p in zip(head, found)}


@lru_cache(maxsize=4)
def _load(path: str) -> AnswerRanker:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{path}: trained on other features than the ranker reads: cpqa train ranker again")
    return AnswerRanker(data["mean"], data["scale"], data["weights"], data["bias"])


__all__ = ["AnswerRanker", "FEATURES", "TRAINED_RANKER", "candidate_features", "features"]
