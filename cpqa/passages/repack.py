"""Repacking against "lost in the middle" (Liu et al. 2023; Wang et al. 2024, "Searching for best practices in
RAG", whose "sides" order did best): models use evidence at the start and end of the context best, so the
most relevant passage goes first, the second most relevant last, and the least relevant ones in the middle."""

from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")


def sides_order(n: int) -> list[int]:
    """Relevance ranks (0 = best) in context order: 0, 2, 4, ..., 5, 3, 1."""
    if n < 0:
        raise ValueError("n must not be negative")
    return list(range(0, n, 2)) + list(range(1, n, 2))[::-1]


def repack(ranked: Sequence[T]) -> list[T]:
    """``ranked`` (best first) in the sides order: best first, second best last."""
    return [ranked[i] for i in sides_order(len(ranked))]


def edge_share(positions: Sequence[int | None], lengths: Sequence[int]) -> float:
    """Share of questions whose first relevant item (0-based position, None when absent) sits first or last;
    questions without a relevant item count as misses."""
    if len(positions) != len(lengths):
        raise ValueError("positions and lengths must pair up")
    if not positions:
        return 0.0
    edges = sum(p is not None and (p == 0 or p == n - 1) for p, n in zip(positions, lengths))
    return edges / len(positions)
