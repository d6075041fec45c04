"""SEOS cross-validated on the chunking benchmark: its settings are chosen on one half of the documents and
judged, beside every rival splitter, on the other half, both ways round, so the reported numbers come from
documents the choice never saw.

The grid sizes chunks by the passage embedder's token window (``window_fill``: the share of the window a chunk
may fill; ``overlap_fill``: the share of a chunk its overlap may take) and the boundary cut-off. A setting is
judged by mean MRR@5 of the two retrievers the product runs over passages (dense, dense + rerank), ties broken
by Hits@5. The setting to ship is the one with the best mean rank over both halves."""

from __future__ import annotations

import itertools
import random
from typing import Callable, Mapping, Sequence

from pydantic import BaseModel

from cpqa.evaluation.evaluations.chunking import BenchDoc, Reranker, SplitterResult, evaluate_splitter, run_splitter
from cpqa.evaluation.evaluations.splitters import Splitter, seos_splitter
from cpqa.models.encoders import EmbeddingCache, TextEncoder

# Passage vectors are the mean of their sentences' vectors, so a chunk may pass the encoder's window; the grid
# reaches past the earlier edge (2.0) to where chunks hold whole records.
GRID = {
    "window_fill": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0),
    "overlap_fill": (0.0, 0.15, 0.3),
    "cutoff_sd": (0.0, 0.5, 1.0, 1.5),
}


class Fold(BaseModel):
    tuned_on: list[str]  # doc ids of the tuning half
    chosen: dict[str, float]
    tuning_score: float
    held_out: dict[str, SplitterResult]  # "SEOS" (the chosen setting) and every rival, on the other half


class CrossValidation(BaseModel):
    docs: int
    grid: dict[str, list[float]]
    criterion: str = "mean MRR@5 of dense and dense+rerank"
    folds: list[Fold]
    held_out_mean: dict[str, dict[str, float]]  # splitter -> retriever -> MRR@5 / Hits@5 over both held-out halves
    shipped: dict[str, float]  # best mean rank over both halves
    scores: list[dict]  # every setting's score on each half

    def as_json(self) -> dict:
        return self.model_dump(by_alias=True, mode="json")


def settings_grid(grid: Mapping[str, Sequence[float]] = GRID) -> list[dict[str, float]]:
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def criterion(result: SplitterResult) -> tuple[float, float]:
    reranked = result.dense_rerank or result.dense
    return ((result.dense.mrr_at_5 + reranked.mrr_at_5) / 2, (result.dense.hits_at_5 + reranked.hits_at_5) / 2)


def halves(docs: Sequence[BenchDoc], seed: int = 0) -> tuple[list[BenchDoc], list[BenchDoc]]:
    order = list(docs)
    random.Random(seed).shuffle(order)
    middle = (len(order) + 1) // 2
    return order[:middle], order[middle:]


def cross_validate(
    docs: Sequence[BenchDoc],
    sentence_encoder: TextEncoder,
    rivals: dict[str, Splitter],
    passage_cache: EmbeddingCache,
    reranker: Reranker | None,
    *,
    window_tokens: int,
    grid: Mapping[str, Sequence[float]] = GRID,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> CrossValidation:
    parts = halves(docs, seed)
    settings = settings_grid(grid)
    sentence_cache = EmbeddingCache(sentence_encoder)  # shared: every setting embeds the same sentences

    def evaluate(splitter: Splitter, half: Sequence[BenchDoc]) -> SplitterResult:
        chunks, seconds = run_splitter(splitter, half)
        return evaluate_splitter(half, chunks, seconds, passage_cache, reranker)

    results = [
        [
            evaluate(
                seos_splitter(sentence_cache, passage_encoder=passage_cache, window_tokens=window_tokens, **s), half
            )
            for half in parts
        ]
        for s in settings
    ]
    if progress:
        progress(f"SEOS grid: {len(settings)} settings on both halves")
    rival_results = {name: [evaluate(split, half) for half in parts] for name, split in rivals.items()}

    folds = []
    for tune, judge in ((0, 1), (1, 0)):
        best = max(range(len(settings)), key=lambda i: criterion(results[i][tune]))
        held = {"SEOS": results[best][judge], **{name: r[judge] for name, r in rival_results.items()}}
        folds.append(
            Fold(
                tuned_on=[d.doc_id for d in parts[tune]],
                chosen=settings[best],
                tuning_score=criterion(results[best][tune])[0],
                held_out=held,
            )
        )
        if progress:
            progress(f"tuned on half {tune + 1}: {settings[best]}")
    ranks = [sorted(range(len(settings)), key=lambda i: criterion(results[i][h]), reverse=True) for h in (0, 1)]
    mean_rank = {i: sum(r.index(i) for r in ranks) / 2 for i in range(len(settings))}
    shipped = settings[min(mean_rank, key=lambda i: (mean_rank[i], -sum(criterion(results[i][h])[0] for h in (0, 1))))]
    sizes = [sum(len(d.queries) for d in part) for part in parts]
    judged = [sizes[1], sizes[0]]  # queries judged in fold 0 (half 2) and fold 1 (half 1)
    return CrossValidation(
        docs=len(docs),
        grid={k: list(v) for k, v in grid.items()},
        folds=folds,
        held_out_mean={name: _pooled([f.held_out[name] for f in folds], judged) for name in folds[0].held_out},
        shipped=shipped,
        scores=[{**s, "half_1": criterion(r[0])[0], "half_2": criterion(r[1])[0]} for s, r in zip(settings, results)],
    )


def _pooled(results: list[SplitterResult], weights: list[int]) -> dict[str, float]:
    """Per retriever, Hits@5 and MRR@5 over the union of the held-out halves (weighted by their questions)."""
    total = sum(weights) or 1
    out: dict[str, float] = {}
    for retriever in ("bm25", "dense", "dense_rerank"):
        scores = [getattr(r, retriever) for r in results]
        if any(s is None for s in scores):
            continue
        out[f"{retriever}_hits@5"] = sum(s.hits_at_5 * w for s, w in zip(scores, weights)) / total
        out[f"{retriever}_mrr@5"] = sum(s.mrr_at_5 * w for s, w in zip(scores, weights)) / total
    return out
