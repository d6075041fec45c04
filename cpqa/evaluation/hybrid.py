"""E1 and HSRDR paths for the document-retrieval harness, and the paper's Table II.

Table II describes, for the fused HSRDR ranking, the top 5 documents of every question pooled together, per
category (E1 semantic only, E2 Boolean only, E3 both): ``top5_share`` = the category's share of those documents;
``rrf`` = their mean RRF score; ``entropy`` = the category's term ``-p log2 p`` in the Shannon entropy (bits) of
the category distribution (the three terms sum to ``entropy_total``, reported beside them).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from cpqa.config import Settings
from cpqa.types import RetrievalTrace

CATEGORIES = ("E1", "E2", "E3")
TOP = 5


class E1Path:
    """E1 alone: semantic search over the vector index with the configured query encoder."""

    def __init__(self, settings: Settings, k: int = 100):
        from cpqa.documents.semantic import SemanticSearch

        self.search = SemanticSearch(settings)
        self.k = k

    def __call__(self, question: str) -> list[str]:
        return [pmid for pmid, _ in self.search.search(question, k=self.k)]

    def report(self) -> dict[str, Any]:
        return {"E1_model": self.search.choice.model}


class HSRDRPath:
    """HSRDR (E1 + E2 ladder, RRF) with no temporal filter and the default sources; collects Table II rows."""

    def __init__(self, settings: Settings, config=None):
        from cpqa.documents.hsrdr import HSRDR
        from cpqa.rewrite.rewriter import Rewriter

        self.engine = HSRDR(settings, config=config)
        self.rewriter = Rewriter(settings, llm=None)
        self.top5: list[list[tuple[str, float]]] = []
        self.lost: dict[str, int] = {}

    def run(self, question: str) -> RetrievalTrace:
        trace = RetrievalTrace(question=question)
        rewrite = self.rewriter.rewrite(question)
        docs = self.engine.retrieve(question, rewrite, trace=trace)
        self.top5.append([(c.category, c.rrf) for c, _ in docs[:TOP]])
        for path in trace.lost_paths:
            self.lost[path] = self.lost.get(path, 0) + 1
        return trace

    def __call__(self, question: str) -> list[str]:
        return [c.pmid for c in self.run(question).candidates if c.kept]

    def report(self) -> dict[str, Any]:
        return {"HSRDR_config": self.engine.config.model_dump(), "HSRDR_lost_paths": self.lost,
                "table2": table2(self.top5)}

    def close(self) -> None:
        self.engine.close()


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
        out[cat] = {"rrf": round(sum(scores) / len(scores), 5) if scores else 0.0, "entropy": round(term, 4),
                    "top5_share": round(share, 4), "docs": len(scores)}
    out["entropy_total"] = round(total_entropy, 4)
    out["questions"] = len(top5)
    return out


def read_plain_questions(path: Path, limit: int | None = None) -> list[str]:
    """Questions from a JSONL file whose lines have ``question`` (or ``Question``); a folder reads every file."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no .jsonl question files in {path}")
    questions: list[str] = []
    for file in files:
        taken = 0
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            item = json.loads(line)
            text = item.get("question") or item.get("Question") if isinstance(item, dict) else None
            if not text:
                raise ValueError(f"{file.name} line {number}: no question field")
            questions.append(text)
            taken += 1
            if limit and taken >= limit:
                break
    return questions


def table2_for(settings: Settings, questions: list[str], config=None) -> dict[str, Any]:
    """Table II for questions without gold documents (e.g. consumer health questions)."""
    path = HSRDRPath(settings, config=config)
    try:
        for question in questions:
            path.run(question)
        return {**table2(path.top5), "lost_paths": path.lost}
    finally:
        path.close()
