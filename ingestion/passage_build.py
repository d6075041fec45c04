"""``cpqa index build --passages``: segment every stored record with SEOS and embed its passages, ahead of questions.

The build goes through the pipeline's own ``SegmentCache`` and passage ``EmbeddingCache`` over the persistent
``PassageStore``, so a question later finds exactly what the build wrote. Resumable and incremental: a record already
segmented is read back, a passage already embedded is not embedded again. Each record is segmented as the default
sources (D1 abstracts, D2 PMC reviews) would present it; records met in another role are segmented on first sight.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable

from cpqa.documents.hsrdr import natural_source
from cpqa.models.encoders import EmbeddingCache
from cpqa.options import DocumentOptions
from cpqa.passages.dense import node_text
from cpqa.passages.segments import SegmentCache
from cpqa.pipeline import Pipeline
from cpqa.types import Article


@dataclass
class PassageBuildSummary:
    records: int = 0
    segmented: int = 0  # records segmented by this run (the rest were stored already)
    passages: int = 0
    embedded: int = 0  # passages embedded by this run
    sentences: int = 0  # sentences SEOS embedded (every sentence of a record it segments)
    sentences_per_second: float = 0.0  # over the whole build: segmentation and passage embedding
    seconds: float = 0.0
    store_bytes: int = 0


def build_passages(pipeline: Pipeline, *, limit: int | None = None, batch_records: int = 64,
                   progress=None) -> PassageBuildSummary:
    """Segment and embed the store's records (the first ``limit`` of them) into the pipeline's passage store."""
    summary = segment_records(pipeline.store.iter_articles(), pipeline.segments, pipeline.passages.cache,
                              limit=limit, batch_records=batch_records, progress=progress)
    summary.store_bytes = pipeline.passage_store.stats()["bytes"]
    return summary


def segment_records(articles: Iterable[Article], segments: SegmentCache, cache: EmbeddingCache, *,
                    limit: int | None = None, batch_records: int = 64, progress=None) -> PassageBuildSummary:
    """Segment ``articles`` through ``segments`` and embed their passages through ``cache`` (both persisting to
    their store): the build's work, measured."""
    summary = PassageBuildSummary()
    sources = DocumentOptions().sources
    sentences = segments.parser.sentence_cache
    segmented_before, misses_before, sentences_before = segments.segmented, cache.misses, sentences.misses
    start = time.perf_counter()
    batch: list[tuple] = []

    def flush() -> None:
        segments.prepare(batch)
        nodes = [segments.article_nodes(article, source, None) for article, source in batch]
        cache.encode([node_text(n) for group in nodes for n in group], persist=True)
        summary.passages += sum(len(group) for group in nodes)
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for article in articles:
        if limit is not None and summary.records >= limit:
            break
        if not article.pmid or not article.has_abstract:
            continue
        natural = natural_source(article)
        batch.append((article, natural if natural in sources and natural != "D1" else "D1"))
        summary.records += 1
        if len(batch) >= batch_records:
            flush()
    if batch:
        flush()
    summary.seconds = round(time.perf_counter() - start, 2)
    summary.segmented = segments.segmented - segmented_before
    summary.embedded = cache.misses - misses_before
    summary.sentences = sentences.misses - sentences_before
    summary.sentences_per_second = round(summary.sentences / summary.seconds, 1) if summary.seconds else 0.0
    return summary
