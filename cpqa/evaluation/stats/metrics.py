"""Ranking metrics with binary relevance, per question, and their averages over a question set.

``ranked`` is a list of document ids, best first (duplicates after the first occurrence are ignored);
``gold`` is the set of relevant ids. A question without gold documents is an input error, not a zero.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

DEFAULT_KS = (5, 10, 20)


def _top(ranked: Sequence[str], k: int) -> list[str]:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    seen: set[str] = set()
    out = []
    for doc in ranked:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
            if len(out) == k:
                break
    return out


def _gold(gold: Iterable[str]) -> set[str]:
    gold = set(gold)
    if not gold:
        raise ValueError("a question needs at least one gold document")
    return gold


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """|gold ∩ top k| / |gold|."""
    gold = _gold(gold)
    return len(gold.intersection(_top(ranked, k))) / len(gold)


def hits_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 when any gold document is in the top k, else 0."""
    gold = _gold(gold)
    return float(any(doc in gold for doc in _top(ranked, k)))


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 / rank of the first gold document within the top k, else 0."""
    gold = _gold(gold)
    for rank, doc in enumerate(_top(ranked, k), 1):
        if doc in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """DCG of the top k with gain 1 per gold document, over the ideal DCG (all gold first)."""
    gold = _gold(gold)
    dcg = sum(1.0 / math.log2(rank + 1) for rank, doc in enumerate(_top(ranked, k), 1) if doc in gold)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold), k) + 1))
    return dcg / ideal


def question_scores(ranked: Sequence[str], gold: Iterable[str], ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Every metric of the protocol for one question: recall@k and hits@k for each k, MRR@10, nDCG@10."""
    gold = _gold(gold)
    scores: dict[str, float] = {}
    for k in ks:
        scores[f"recall@{k}"] = recall_at(ranked, gold, k)
    for k in ks:
        scores[f"hits@{k}"] = hits_at(ranked, gold, k)
    scores["mrr@10"] = mrr_at(ranked, gold, 10)
    scores["ndcg@10"] = ndcg_at(ranked, gold, 10)
    return scores


def average(per_question: Sequence[dict[str, float]], digits: int = 4) -> dict[str, float]:
    """The mean of each metric over questions (every question must have the same metrics)."""
    if not per_question:
        return {}
    keys = list(per_question[0])
    if any(list(q) != keys for q in per_question):
        raise ValueError("every question must be scored with the same metrics")
    return {key: round(sum(q[key] for q in per_question) / len(per_question), digits) for key in keys}
