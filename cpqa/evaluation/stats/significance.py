"""Paired significance for two retrieval runs on the same questions: the mean per-question difference of a metric,
its percentile bootstrap confidence interval (questions resampled with replacement, the pairing kept), and a
two-sided p-value from the bootstrap distribution of the difference (Efron and Tibshirani's paired bootstrap)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from pydantic import BaseModel

RESAMPLES = 10_000


class PairedDifference(BaseModel):
    metric: str
    mean_a: float
    mean_b: float
    difference: float  # mean of a - b
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    wins: int  # questions where a > b
    losses: int


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    metric: str = "",
    *,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """How run ``a`` differs from run ``b`` on one metric (per-question values in the same question order)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or not len(x):
        raise ValueError("paired runs need the same, non-empty list of questions")
    diff = x - y
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    # Two-sided: how often the resampled difference falls on the other side of zero, doubled.
    p = min(1.0, 2.0 * min(float((means <= 0).mean()), float((means >= 0).mean()))) if diff.any() else 1.0
    return PairedDifference(
        metric=metric,
        mean_a=round(float(x.mean()), 4),
        mean_b=round(float(y.mean()), 4),
        difference=round(float(diff.mean()), 4),
        ci_low=round(float(low), 4),
        ci_high=round(float(high), 4),
        p_value=round(p, 4),
        n=len(diff),
        wins=int((diff > 0).sum()),
        losses=int((diff < 0).sum()),
    )
