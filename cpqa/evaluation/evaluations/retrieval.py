"""Document-retrieval evaluation of the product's own retrievers (docs/architecture.md, "Document retrieval").

The paths are the pipeline's objects: E1 = ``Pipeline.semantic``, E2 = ``Pipeline.boolean``, BM25 =
``Pipeline.bm25``, HSRDR = ``Pipeline.documents``, built by ``Pipeline`` from the same settings and options a user's
question gets, and asked the same ``DocumentQuery`` (the pipeline's rewrite, HyDE when on). So "E2 alone" is exactly
the E2 inside HSRDR: E-utilities when configured, the local store otherwise. A variant is a ``PipelineOptions``
change, never a copy: the naive hybrid of RAG tutorials (plain BM25 + the same dense search, RRF k = 60, no ladder,
no reranker) is HSRDR with the Boolean path off, the BM25 path on and the record reranker off.

Table II describes, for the fused HSRDR ranking, the top 5 documents of every question pooled together, per
category (E1 semantic only, E2 Boolean only, E3 both): ``top5_share`` = the category's share of those documents;
``rrf`` = their mean RRF score; ``entropy`` = the category's term ``-p log2 p`` in the Shannon entropy (bits) of
the category distribution (the three terms sum to ``entropy_total``).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from pydantic import BaseModel, Field

from cpqa.sources.jsonl import read_records
from cpqa.evaluation.stats.metrics import average, question_scores
from cpqa.options import PipelineOptions
from cpqa.pipeline import Pipeline
from cpqa.types import StageLog

PATHS = ("E1", "E2", "BM25", "HSRDR")
NAIVE_HYBRID = "naive-hybrid"
NAIVE_HYBRID_OPTIONS = {"e1_weight": 1.0, "e2_weight": 0.0, "bm25_weight": 1.0, "rrf_k": 60, "rerank_records": 0}
CATEGORIES = ("E1", "E2", "E3")
TOP = 5


class Question(BaseModel):
    id: str
    question: str
    gold_pmids: list[str] = Field(min_length=1)


class Run(NamedTuple):
    """One row of the table: a path of the pipeline under options."""

    path: str
    options: PipelineOptions


def standard_runs(options: PipelineOptions, names: Sequence[str]) -> dict[str, Run]:
    """Runs by name: a path under ``options``, or ``naive-hybrid``."""
    runs = {}
    for name in names:
        if name == NAIVE_HYBRID:
            runs[name] = Run("HSRDR", options.with_overrides(**NAIVE_HYBRID_OPTIONS))
        elif name in PATHS:
            runs[name] = Run(name, options)
        else:
            raise ValueError(f"unknown path {name!r}; known: {', '.join([*PATHS, NAIVE_HYBRID])}")
    return runs


def load_questions(path: Path | str, limit: int | None = None) -> list[Question]:
    """Questions ``{id, question, gold_pmids}`` from a JSONL file; a bad line is an error naming the line."""

    def prepare(item: dict, number: int) -> dict:
        return {**item, "id": str(item.get("id", number)), "gold_pmids": [str(p) for p in item.get("gold_pmids") or []]}

    return read_records(path, Question, "question with gold_pmids", limit, prepare)


class _Collector:
    """Per-run extras beside the metrics: E2 ladder usage, HSRDR lost paths and Table II."""

    def __init__(self) -> None:
        self.last_levels: Counter[int] = Counter()  # level number where the ladder stopped
        self.levels_left: Counter[int] = Counter()  # levels not run
        self.ladder_sizes: Counter[int] = Counter()
        self.first_level_counts: list[int] = []  # hits of the most specific level (term mapping widens it)
        self.lost: Counter[str] = Counter()
        self.top5: list[list[tuple[str, float]]] = []
        self.model: str | None = None

    def add(self, path: str, result: Any) -> None:
        if path == "E1":
            self.model = result.model.model if result.model else None
        elif path == "E2":
            self.last_levels[result.last_level or 0] += 1
            self.levels_left[result.ladder_size - (result.last_level or 0)] += 1
            self.ladder_sizes[result.ladder_size] += 1
            if result.levels:
                self.first_level_counts.append(result.levels[0].count)
        elif path == "HSRDR":
            self.top5.append([(d.candidate.category, d.candidate.rrf) for d in result.documents[:TOP]])
            self.lost.update(result.lost_paths)

    def report(self, path: str) -> dict[str, Any]:
        if path == "E1":
            return {"model": self.model}
        if path == "E2":
            return {
                "ladder_last_level": _counts(self.last_levels),
                "ladder_levels_left": _counts(self.levels_left),
                "ladder_levels": _counts(self.ladder_sizes),
                "level1_hits": _hit_summary(self.first_level_counts),
            }
        if path == "HSRDR":
            return {"lost_paths": dict(self.lost), "table2": table2(self.top5)}
        return {}


def _hit_summary(counts: list[int]) -> dict[str, float]:
    """Median hits of ladder level 1 and the share of questions where it found nothing."""
    if not counts:
        return {}
    ordered = sorted(counts)
    empty = sum(c == 0 for c in counts) / len(counts)
    return {"median": float(ordered[len(ordered) // 2]), "empty_share": round(empty, 4), "total": float(sum(counts))}


def _counts(counter: Counter[int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(counter.items())}


def search(pipeline: Pipeline, path: str, question: str, options: PipelineOptions, log: StageLog | None = None):
    """One question through one path of ``pipeline``, asked as the pipeline asks it; the path's typed result."""
    retriever = pipeline.documents if path == "HSRDR" else pipeline.documents.paths[path]
    rewrite = pipeline.rewriter.rewrite(question, options=options.rewrite)
    query = pipeline.document_query(rewrite, rewrite.search_intent or question, options, log or StageLog())
    return retriever.search(query, options.documents)


def evaluate(
    questions: Sequence[Question],
    runs: Mapping[str, Run] | Sequence[str],
    pipeline: Pipeline,
    progress: Callable[[str], None] | None = None,
    per_question: dict[str, list[dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """``{name: {metric: mean, ..., "n", "ms_per_question", extras}}`` per run; a bare name runs with the pipeline's
    own options (``standard_runs``). ``per_question`` receives each run's per-question scores (for paired tests)."""
    if not isinstance(runs, Mapping):
        runs = standard_runs(pipeline.options, runs)
    unknown = sorted({run.path for run in runs.values()} - set(PATHS))
    if unknown:
        raise ValueError(f"unknown path(s) {', '.join(unknown)}; known: {', '.join(PATHS)}")
    output: dict[str, Any] = {}
    for name, run in runs.items():
        scores, extras, start = [], _Collector(), time.perf_counter()
        for i, q in enumerate(questions, 1):
            result = search(pipeline, run.path, q.question, run.options)
            extras.add(run.path, result)
            scores.append(question_scores(result.pmids, q.gold_pmids))
            if progress and i % 25 == 0:
                progress(f"{name}: {i}/{len(questions)}")
        elapsed = (time.perf_counter() - start) * 1000.0
        if per_question is not None:
            per_question[name] = scores
        output[name] = {
            **average(scores),
            "n": len(questions),
            "ms_per_question": round(elapsed / len(questions), 1),
            **extras.report(run.path),
        }
    return output


def compare(
    per_question: Mapping[str, list[dict[str, float]]],
    a: str,
    b: str,
    metrics: Sequence[str] = ("recall@20", "mrr@10", "ndcg@10"),
) -> dict[str, dict[str, Any]]:
    """Run ``a`` against run ``b`` on the same questions: a paired bootstrap per metric."""
    from cpqa.evaluation.stats.significance import paired_bootstrap

    return {
        m: paired_bootstrap([s[m] for s in per_question[a]], [s[m] for s in per_question[b]], m).model_dump()
        for m in metrics
    }


def table2(top5: list[list[tuple[str, float]]]) -> dict[str, Any]:
    """Per category: mean RRF, entropy term and share of the pooled top-5 documents."""
    pooled = [doc for docs in top5 for doc in docs]
    out: dict[str, Any] = {}
    total_entropy = 0.0
    for cat in CATEGORIES:
        scores = [rrf for c, rrf in pooled if c == cat]
        share = len(scores) / len(pooled) if pooled else 0.0
        term = -share * math.log2(share) if share else 0.0
        total_entropy += term
        out[cat] = {
            "rrf": round(sum(scores) / len(scores), 5) if scores else 0.0,
            "entropy": round(term, 4),
            "top5_share": round(share, 4),
            "docs": len(scores),
        }
    out["entropy_total"] = round(total_entropy, 4)
    out["questions"] = len(top5)
    return out


def table2_for(pipeline: Pipeline, questions: Sequence[str]) -> dict[str, Any]:
    """Table II for questions without gold documents (e.g. consumer health questions)."""
    extras = _Collector()
    for question in questions:
        extras.add("HSRDR", search(pipeline, "HSRDR", question, pipeline.options))
    return {**table2(extras.top5), "lost_paths": dict(extras.lost)}


def missing_gold(questions: Sequence[Question], pipeline: Pipeline) -> int:
    """How many questions have no gold document in the store (they cannot be found by any path)."""
    have = pipeline.store.get_many({p for q in questions for p in q.gold_pmids})
    return sum(not any(p in have for p in q.gold_pmids) for q in questions)
