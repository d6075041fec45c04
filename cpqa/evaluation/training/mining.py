"""The product's own retrievers, as a user's question meets them, for mining hard negatives.

``Miner`` builds one ``Pipeline`` over a data home (offline profile, no language model) and asks its E1 and BM25
paths the same ``DocumentQuery`` a question gets (``cpqa.evaluation.evaluations.retrieval.search`` does the same per
path; here the question is rewritten once for both). ``passages`` runs ``Pipeline.retrieve`` (the passage stage,
segmenting records into a passage store of its own, so the data home is only read) and ``chooser_ranking`` the
extractive answerer's sentence ranking over them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from cpqa.types import Article, Passage, StageLog


class Miner:
    def __init__(self, home: Path, passages_path: Path | None = None):
        from cpqa.config import get_settings
        from cpqa.pipeline import Pipeline

        settings = get_settings(cpqa_home=home, cpqa_profile="offline")
        if not settings.store_path.exists():
            raise FileNotFoundError(f"no store in {home}: build the data home first (cpqa ingest, cpqa index build)")
        self.pipeline = Pipeline(settings, passages_path=passages_path)
        self.options = self.pipeline.options

    def close(self) -> None:
        self.pipeline.close()

    def __enter__(self) -> "Miner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def encoder_name(self) -> str:
        """The model E1 serves with (the offline profile: MiniLM over the home's MiniLM index)."""
        return self.pipeline.semantic.semantic.choice.model

    def query(self, question: str):
        pipeline = self.pipeline
        rewrite = pipeline.rewriter.rewrite(question, options=self.options.rewrite)
        return pipeline.document_query(rewrite, rewrite.search_intent or question, self.options, StageLog())

    def document_hits(self, question: str, depth: int) -> dict[str, list[str]]:
        """The question's top ``depth`` PMIDs by E1 and by BM25, best first."""
        query = self.query(question)
        return {
            "E1": self.pipeline.semantic.search(query, self.options.documents).pmids[:depth],
            "BM25": self.pipeline.bm25.search(query, self.options.documents).pmids[:depth],
        }

    def kept_records(self, question: str) -> list[str]:
        """HSRDR's kept records for ``question`` in the fusion's order (the record reranker off: it learns from
        that order), as the pipeline asks it."""
        options = self.options.documents.model_copy(update={"rerank_records": 0})
        return self.pipeline.documents.search(self.query(question), options).pmids

    def bm25_text(self, text: str, k: int) -> list[str]:
        """Plain BM25 over the store for any text (a title), without the question's rewrite."""
        return [pmid for pmid, _ in self.pipeline.bm25.index.search(text, k)]

    def articles(self, pmids: Sequence[str]) -> dict[str, Article]:
        return self.pipeline.store.get_many(list(pmids))

    def all_pmids(self) -> list[str]:
        return list(self.pipeline.store.pmids())

    def passages(self, question: str) -> list[Passage]:
        """The pipeline's top passages for ``question`` (HSRDR, SEOS, dense + rerank, record prior)."""
        return list(self.pipeline.retrieve(question).trace.passages)

    def chooser_ranking(self, question: str, passages: Sequence[Passage]) -> list[tuple[str, str]]:
        """(PMID, sentence) best first, as the extractive answerer ranks the passages' sentences for a patient."""
        ranked, _ = self.pipeline.answerer.rank(question, passages, self.options.answer, patient=True)
        return [(s.pmid, s.text) for s in ranked]


def interleave(*rankings: Sequence[str]) -> list[str]:
    """Rankings merged rank by rank (first of each, then second of each, ...), each PMID once."""
    seen: set[str] = set()
    merged: list[str] = []
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking) and ranking[rank] not in seen:
                seen.add(ranking[rank])
                merged.append(ranking[rank])
    return merged
