"""The eager passage build: segment stored records with SEOS and keep their layouts and sentence vectors, ahead of
questions (``cpqa index build``, ``./setup.sh``, and ``cpqa ingest`` for the records it adds).

The build goes through the product's own ``SegmentCache`` over the persistent ``PassageStore``, so a question later
finds exactly what the build wrote. Resumable and incremental: a record already stored is skipped without being
read twice. Each record is segmented as the default sources (D1 abstracts, D2 PMC reviews) present it; records met in
another role are segmented on first sight.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

from cpqa.config import Settings
from cpqa.documents.hsrdr import natural_source
from cpqa.models.encoders import EmbeddingCache, load_encoder
from cpqa.options import DocumentOptions, PassageOptions
from cpqa.passages.passage_store import PASSAGES_FILE, PassageStore
from cpqa.passages.segments import SegmentCache
from cpqa.passages.seos import SEOSNodeParser
from cpqa.types import Article


@dataclass
class PassageBuildSummary:
    records: int = 0  # records with an abstract that were looked at
    segmented: int = 0  # records segmented by this run (the rest were stored already)
    passages: int = 0  # passages of the records segmented by this run
    sentences: int = 0  # sentences embedded by this run (each once)
    passage_windows: int = 0  # passage texts embedded by this run (a chunk past the encoder's window is several)
    seconds: float = 0.0
    records_per_second: float = 0.0  # records segmented by this run, per wall second
    store_bytes: int = 0


def passage_segmenter(
    settings: Settings,
    store: PassageStore | None,
    options: PassageOptions | None = None,
    vectors: EmbeddingCache | None = None,
) -> SegmentCache:
    """The segmenter a ``Pipeline`` builds, without the rest of the pipeline: the sentence embedder, SEOS sized by
    the passage embedder's window, and the passage embedder (``vectors``: its cache, when the caller has one)."""
    options = options or PassageOptions()
    encoder, _ = load_encoder("sentence_embedder", settings)
    if vectors is None:
        passage_encoder, _ = load_encoder("passage_retriever", settings, matryoshka_dim=options.matryoshka_dim)
        vectors = EmbeddingCache(passage_encoder, max_items=10_000)
    return SegmentCache(
        SEOSNodeParser(EmbeddingCache(encoder, max_items=10_000), window_tokens=vectors.encoder.max_tokens),
        store=store,
        vectors=vectors,
    )


def build_passages(
    settings: Settings,
    articles: Iterable[Article],
    *,
    limit: int | None = None,
    batch_records: int = 256,
    progress: Callable[[int], None] | None = None,
) -> PassageBuildSummary:
    """Segment ``articles`` (the first ``limit`` with an abstract) into the data home's passage store."""
    with PassageStore(settings.index_dir / PASSAGES_FILE) as store:
        summary = segment_records(
            articles, passage_segmenter(settings, store), limit=limit, batch_records=batch_records, progress=progress
        )
        summary.store_bytes = store.stats()["bytes"]
    return summary


def segment_records(
    articles: Iterable[Article],
    segments: SegmentCache,
    *,
    limit: int | None = None,
    batch_records: int = 256,
    progress: Callable[[int], None] | None = None,
) -> PassageBuildSummary:
    """Segment ``articles`` through ``segments`` (persisting to its store) in batches: the build's work, measured."""
    summary = PassageBuildSummary()
    sources = DocumentOptions().sources
    segmented_before, sentences_before = segments.segmented, segments.sentences_embedded
    windows_before = segments.passages_embedded
    start = time.perf_counter()
    batch: list[tuple[Article, str]] = []

    def flush() -> None:
        new = [item for item, known in zip(batch, segments.known(batch)) if not known]
        if new:
            summary.passages += sum(len(layout.chunks) for layout in segments.layouts(new))
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
    summary.sentences = segments.sentences_embedded - sentences_before
    summary.passage_windows = segments.passages_embedded - windows_before
    summary.records_per_second = round(summary.segmented / summary.seconds, 1) if summary.seconds else 0.0
    return summary


def passages_after_ingest(settings: Settings, store, changed: int, enabled: bool = True) -> dict | None:
    """After ``cpqa ingest`` changed ``changed`` records: segment the new ones into the data home's passage store,
    when the home has one (``cpqa index build`` made it), so they need no second manual step. None: nothing done."""
    if not enabled or changed == 0 or not (settings.index_dir / PASSAGES_FILE).exists():
        return None
    return build_passages(settings, store.iter_articles()).__dict__
