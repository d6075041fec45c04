"""The eager passage build: segment stored records with SEOS and keep their layouts and sentence vectors, ahead of
questions (``cpqa index build``, ``./setup.sh``, and ``cpqa ingest`` for the records it adds).

The build goes through the product's own ``SegmentCache`` over the persistent ``PassageStore``, so a question later
finds exactly what the build wrote. Resumable and incremental: a record already stored is skipped without being
read twice. Each record is segmented as the default sources (D1 abstracts, D2 PMC reviews) present it; records met in
another role are segmented on first sight.
"""

from __future__ import annotations

from typing import Callable, Iterable

from cpqa.config import Settings
from cpqa.passages.bulk import PassageBuildSummary, passage_segmenter, segment_records
from cpqa.passages.passage_store import PASSAGES_FILE, PassageStore
from cpqa.types import Article

__all__ = ["PassageBuildSummary", "build_passages", "passages_after_ingest"]


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


def passages_after_ingest(settings: Settings, store, changed: int, enabled: bool = True) -> dict | None:
    """After ``cpqa ingest`` changed ``changed`` records: segment the new ones into the data home's passage store,
    when the home has one (``cpqa index build`` made it), so they need no second manual step. None: nothing done."""
    if not enabled or changed == 0 or not (settings.index_dir / PASSAGES_FILE).exists():
        return None
    return build_passages(settings, store.iter_articles()).__dict__
