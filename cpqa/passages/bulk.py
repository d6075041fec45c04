"""Segmenting many records at once, ahead of questions: the segmenter a ``Pipeline`` builds, made without the rest of
the pipeline (the eager build in ``cpqa index build`` and ``cpqa ingest``, and the passage benchmark, use it), and the
batched loop that fills a ``SegmentCache``'s store with the records' layouts and vectors."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable

from cpqa.config import Settings
from cpqa.documents.hsrdr import natural_source
from cpqa.models.encoders import EmbeddingCache, TextEncoder, load_encoder
from cpqa.options import DocumentOptions, PipelineOptions
from cpqa.passages.passage_store import PassageStore
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
    options: PipelineOptions | None = None,
    *,
    vectors: EmbeddingCache | None = None,
    sentence_encoder: TextEncoder | None = None,
) -> SegmentCache:
    """The segmenter: SEOS over the sentence embedder's vectors, its chunks sized by the window of the encoder that
    embeds passages (not the sentence embedder's), and that passage embedder (``vectors``: its cache, when the caller
    has one). Where the caller's cache belongs to the sentence embedder too (the pipeline's, offline), it serves both,
    so the extractive answer reads the vectors SEOS made. A segmenter made without one keeps the two apart, as the
    eager build always has: int8 activations are quantised per batch, so a vector depends on what it was batched with,
    and sharing would change the stored vectors in their last digits."""
    options = options or PipelineOptions()
    if sentence_encoder is None:
        sentence_encoder, _ = load_encoder("sentence_embedder", settings)
    shared = vectors is not None and vectors.encoder is sentence_encoder
    if vectors is None:
        passage_encoder, _ = load_encoder("passage_retriever", settings, matryoshka_dim=options.passages.matryoshka_dim)
        vectors = EmbeddingCache(passage_encoder)
    sentences = vectors if shared else EmbeddingCache(sentence_encoder)
    seos = SEOSNodeParser(sentences, window_tokens=vectors.encoder.max_tokens, options=options.segmentation)
    return SegmentCache(seos, store=store, vectors=vectors)


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
