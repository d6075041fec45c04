"""Token id lists into model inputs: batches of similar length bounded by padded tokens, padded to arrays."""

from __future__ import annotations

from typing import Sequence

import numpy as np

BATCH_TOKENS = 512  # padded tokens per forward call: on 2 cores larger batches run slower per token


def token_batches(lengths: Sequence[int], batch_size: int, budget: int = BATCH_TOKENS) -> list[list[int]]:
    """Indices grouped into batches of similar length, longest first: at most ``batch_size`` texts and, past the
    first, at most ``budget`` padded tokens each. One long sentence among short ones would otherwise pad the whole
    batch to its length (41 sentences padded to 258 word pieces took 2.1 s instead of 0.2 s)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < batch_size and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def padded(columns: dict[str, list[list[int]]], pad_id: int) -> dict[str, np.ndarray]:
    """Token id lists as right-padded int64 arrays (ids with ``pad_id``, masks and type ids with 0)."""
    width = max(len(row) for row in columns["input_ids"])
    out = {}
    for name, rows in columns.items():
        fill = pad_id if name == "input_ids" else 0
        out[name] = np.array([row + [fill] * (width - len(row)) for row in rows], dtype=np.int64)
    return out


__all__ = ["BATCH_TOKENS", "padded", "token_batches"]
