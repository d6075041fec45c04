"""Document-retrieval evaluation over named retrieval paths (DESIGN.md, "Document retrieval").

``PATHS`` maps a path name to a factory ``factory(settings) -> run`` where ``run(question) -> ranked PMIDs``.
A run may also have ``report() -> dict`` (extra top-level keys for the JSON, e.g. ladder-level usage) and
``close()``. Other paths (E1, HSRDR) plug in by adding an entry to ``PATHS``. The corpus is the store in
``CPQA_HOME``; build it with ``cpqa ingest pubmed ../shared/data/corpus/pubmed_sample.xml.gz``.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel, Field

from cpqa.config import Settings
from cpqa.evaluation.hybrid import E1Path, HSRDRPath
from cpqa.evaluation.jsonl import read_records
from cpqa.evaluation.metrics import average, question_scores

PathRun = Callable[[str], list[str]]
PathFactory = Callable[[Settings], PathRun]


class Question(BaseModel):
    id: str
    question: str
    gold_pmids: list[str] = Field(min_length=1)


def load_questions(path: Path | str, limit: int | None = None) -> list[Question]:
    """Questions ``{id, question, gold_pmids}`` from a JSONL file; a bad line is an error naming the line."""
    def prepare(item: dict, number: int) -> dict:
        return {**item, "id": str(item.get("id", number)), "gold_pmids": [str(p) for p in item.get("gold_pmids") or []]}

    return read_records(path, Question, "question with gold_pmids", limit, prepare)


class E2Path:
    """E2: rule-based rewrite -> ladder on the local store (BM25 within each level)."""

    def __init__(self, settings: Settings, min_docs: int = 20, retmax: int = 100):
        from cpqa.documents.boolean_search import run_ladder
        from cpqa.rewrite.rewriter import Rewriter
        from cpqa.sources.store import Store

        self._run_ladder = run_ladder
        self.rewriter = Rewriter(settings, llm=None)
        self.store = Store(settings.store_path)
        self.min_docs, self.retmax = min_docs, retmax
        self.last_levels: Counter[int] = Counter()  # level number where the ladder stopped
        self.levels_left: Counter[int] = Counter()  # levels not run: 0 = widest, 1 = bag of words (rules)
        self.ladder_sizes: Counter[int] = Counter()

    def __call__(self, question: str) -> list[str]:
        rewrite = self.rewriter.rewrite(question)
        result = self._run_ladder(rewrite.ladder, self.store, min_docs=self.min_docs, retmax=self.retmax)
        self.last_levels[result.last_level or 0] += 1
        self.levels_left[len(rewrite.ladder) - (result.last_level or 0)] += 1
        self.ladder_sizes[len(rewrite.ladder)] += 1
        return result.pmids

    def report(self) -> dict[str, Any]:
        return {"E2_ladder_last_level": {str(k): v for k, v in sorted(self.last_levels.items())},
                "E2_ladder_levels_left": {str(k): v for k, v in sorted(self.levels_left.items())},
                "E2_ladder_levels": {str(k): v for k, v in sorted(self.ladder_sizes.items())},
                "E2_vocabulary": self.rewriter.vocabulary.source}

    def close(self) -> None:
        self.store.close()


PATHS: dict[str, PathFactory] = {"E1": E1Path, "E2": E2Path, "HSRDR": HSRDRPath}


def evaluate(questions: Sequence[Question], names: Sequence[str], settings: Settings,
             paths: dict[str, PathFactory] | None = None,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``{name: {metric: mean, ..., "n": questions, "ms_per_question": ...}, **extra keys}`` for each path."""
    paths = PATHS if paths is None else paths
    unknown = [n for n in names if n not in paths]
    if unknown:
        raise ValueError(f"unknown path(s) {', '.join(unknown)}; known: {', '.join(paths)}")
    output: dict[str, Any] = {}
    for name in names:
        run = paths[name](settings)
        try:
            scores, start = [], time.perf_counter()
            for i, q in enumerate(questions, 1):
                scores.append(question_scores(run(q.question), q.gold_pmids))
                if progress and i % 25 == 0:
                    progress(f"{name}: {i}/{len(questions)}")
            elapsed = (time.perf_counter() - start) * 1000.0
            output[name] = {**average(scores), "n": len(questions),
                            "ms_per_question": round(elapsed / len(questions), 1)}
            if hasattr(run, "report"):
                output.update(run.report())
        finally:
            if hasattr(run, "close"):
                run.close()
    return output


def missing_gold(questions: Sequence[Question], settings: Settings) -> int:
    """How many questions have no gold document in the store (they cannot be found by any path)."""
    from cpqa.sources.store import Store

    with Store(settings.store_path) as store:
        have = store.get_many({p for q in questions for p in q.gold_pmids})
    return sum(not any(p in have for p in q.gold_pmids) for q in questions)
