"""The HSRDR tuning sweep (issue 15): E2 ranking variants and fusion settings on a tuning split of questions.

Each path runs once per question and setting of its own options (the pipeline's E1, E2 and BM25 retrievers, asked
as the pipeline asks them); every fusion setting is then scored from those rankings with the product's ``rrf_fuse``
and HSRDR's keep rule (records with an abstract, at most ``max_docs``), so a sweep of dozens of settings costs one
retrieval pass. The chosen setting is then measured end to end with ``cpqa eval retrieval`` on questions it was not
tuned on.
"""

from __future__ import annotations

import itertools
import random
from typing import AbstractSet, Any, Callable, Mapping, Sequence

from cpqa.fusion import rrf_fuse
from cpqa.evaluation.stats.metrics import average, question_scores
from cpqa.evaluation.evaluations.retrieval import Question, search
from cpqa.pipeline import Pipeline

E2_VARIANTS = [
    {"ladder_ranking": "ladder", "ladder_min_docs": 50},
    {"ladder_ranking": "weighted", "ladder_level_decay": 0.9, "ladder_min_docs": 200},
    *(
        {"ladder_ranking": "bestmatch", "ladder_level_bonus": b, "ladder_field_weights": w}
        for b, w in ((0.0, (1.0, 1.0, 1.0)), (0.1, (1.0, 1.0, 1.0)), (0.1, (4.0, 1.0, 2.0)))
    ),
]
FUSION_GRID = {
    "e1_weight": (0.75, 1.0, 1.5, 2.0, 3.0),
    "e2_weight": (0.0, 0.25, 0.5, 1.0),
    "bm25_weight": (0.0, 0.5, 1.0, 1.5),
    "rrf_k": (10, 20, 60),
    "fusion_depth": (50, 100),
}
REPORTED = ("recall@10", "recall@20", "mrr@10", "ndcg@10")


def split(
    questions: Sequence[Question], tune: int, seed: int = 13, exclude: AbstractSet[str] = frozenset()
) -> tuple[list[Question], list[Question]]:
    """(tuning questions, held-out questions): a seeded random ``tune`` of those not in ``exclude``, and the rest."""
    pool = [q for q in questions if q.id not in exclude]
    chosen = set(q.id for q in random.Random(seed).sample(pool, min(tune, len(pool))))
    return [q for q in questions if q.id in chosen], [q for q in questions if q.id not in chosen]


def _label(setting: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items())


def sweep(
    questions: Sequence[Question],
    pipeline: Pipeline,
    e2_variants: Sequence[dict] = E2_VARIANTS,
    grid: Mapping[str, Sequence[float]] = FUSION_GRID,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """E2 alone per variant, and HSRDR per (E2 variant x fusion setting), averaged over ``questions``."""
    base = pipeline.options
    say = progress or (lambda message: None)
    e1 = [search(pipeline, "E1", q.question, base).pmids for q in questions]
    bm25 = [search(pipeline, "BM25", q.question, base).pmids for q in questions]
    say(f"E1 and BM25 on {len(questions)} questions")
    e2_rows: list[dict[str, Any]] = []
    fused_rows: list[dict[str, Any]] = []
    for variant in e2_variants:
        options = base.with_overrides(**variant)
        e2 = [search(pipeline, "E2", q.question, options).pmids for q in questions]
        e2_rows.append({"setting": _label(variant), **_scores(e2, questions)})
        say(f"E2 {_label(variant)}")
        keep = _with_abstract(pipeline, [e1, e2, bm25])
        for values in itertools.product(*grid.values()):
            fusion = dict(zip(grid, values))
            documents = options.documents.model_copy(update=fusion)
            ranked = [_fuse({"E1": a, "E2": b, "BM25": c}, documents, keep) for a, b, c in zip(e1, e2, bm25)]
            if any(fusion[w] > 0 for w in ("e1_weight", "e2_weight", "bm25_weight")):
                fused_rows.append({"setting": _label({**variant, **fusion}), **_scores(ranked, questions)})
    best = max(fused_rows, key=lambda r: r["recall@20"] + r["mrr@10"] + r["ndcg@10"])
    return {
        "questions": len(questions),
        "E1": _scores(e1, questions),
        "BM25": _scores(bm25, questions),
        "E2": e2_rows,
        "HSRDR": sorted(fused_rows, key=lambda r: -r["recall@20"]),
        "best": best,
    }


def _fuse(rankings: dict[str, list[str]], options, keep: set[str]) -> list[str]:
    """HSRDR's ranking of these path rankings: RRF over the paths of non-zero weight, then the keep rule."""
    active = {path: r for path, r in rankings.items() if options.weights[path] > 0}
    fused = rrf_fuse(active, k=options.rrf_k, weights=options.weights, depth=options.fusion_depth)
    return [pmid for pmid, _, _ in fused if pmid in keep][: options.max_docs]


def _with_abstract(pipeline: Pipeline, runs: list[list[list[str]]]) -> set[str]:
    pmids = {p for run in runs for ranking in run for p in ranking}
    return {p for p, article in pipeline.store.get_many(pmids).items() if article.has_abstract}


def _scores(rankings: list[list[str]], questions: Sequence[Question]) -> dict[str, float]:
    means = average([question_scores(r, q.gold_pmids) for r, q in zip(rankings, questions)])
    return {m: means[m] for m in REPORTED}
