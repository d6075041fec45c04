"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, 2009): the one implementation every fused ranking uses.

``score(item) = sum over rankings of weight_ranking / (k + rank)``, ranks 1-based, each ranking cut at ``depth``.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)


def rrf_score(rank: int, k: int, weight: float = 1.0) -> float:
    """One ranking's share of an item's fused score: ``weight / (k + rank)``, ``rank`` 1-based."""
    return weight / (k + rank)


def rrf_fuse(
    rankings: Mapping[str, Sequence[T]], *, k: int, weights: Mapping[str, float] | None = None, depth: int | None = None
) -> list[tuple[T, float, dict[str, int]]]:
    """``(item, fused score, {ranking name: 1-based rank})``, best first; ties keep first appearance.

    An item repeated within one ranking counts once, at its best rank."""
    if k < 1:
        raise ValueError("k must be at least 1")
    scores: dict[T, float] = {}
    ranks: dict[T, dict[str, int]] = {}
    for name, items in rankings.items():
        weight = (weights or {}).get(name, 1.0)
        for rank, item in enumerate(items[:depth] if depth else items, 1):
            if name in ranks.setdefault(item, {}):
                continue
            ranks[item][name] = rank
            scores[item] = scores.get(item, 0.0) + rrf_score(rank, k, weight)
    order = sorted(scores, key=lambda item: -scores[item])
    return [(item, scores[item], ranks[item]) for item in order]
