"""Choice-shuffling self-consistency: ask the same question with the options in K orders, map each chosen
letter back to the original option, and take the majority (ties go to the option chosen first)."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Sequence


class Permutation:
    """One reordering of the options; ``shown[i]`` is the original letter displayed at position i."""

    def __init__(self, original: Sequence[str], shown: Sequence[str]):
        if sorted(original) != sorted(shown):
            raise ValueError("a permutation must reorder the same letters")
        self.original = list(original)
        self.shown = list(shown)

    def options(self, options: dict[str, str]) -> dict[str, str]:
        """The options as displayed: displayed letter -> text of the original option placed there."""
        return {display: options[orig] for display, orig in zip(self.original, self.shown)}

    def to_original(self, displayed_letter: str | None) -> str | None:
        if displayed_letter is None or displayed_letter not in self.original:
            return None
        return self.shown[self.original.index(displayed_letter)]


def permutations(letters: Sequence[str], k: int, seed: str) -> list[Permutation]:
    """``k`` orders of ``letters``: the original order first, then distinct seeded shuffles where possible."""
    if k < 1:
        raise ValueError("--shuffle needs K >= 1")
    letters = list(letters)
    rng = random.Random(int(hashlib.sha1(seed.encode()).hexdigest()[:12], 16))
    orders = [tuple(letters)]
    attempts = 0
    while len(orders) < k and attempts < 50 * k:
        attempts += 1
        order = letters[:]
        rng.shuffle(order)
        if tuple(order) not in orders or attempts > 10 * k:  # few letters: repeats allowed once distinct run out
            orders.append(tuple(order))
    return [Permutation(letters, order) for order in orders]


def majority(votes: Sequence[str | None]) -> str | None:
    counted = Counter(v for v in votes if v is not None)
    if not counted:
        return None
    best = max(counted.values())
    return next(v for v in votes if v is not None and counted[v] == best)
