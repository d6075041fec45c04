"""``cpqa bench passages``: what the persistent passage layer costs to build and to read, measured at scale.

1. **Build.** The first ``build_records`` stored records are segmented with SEOS into a fresh passage store through
   the product's own ``SegmentCache`` (``cpqa.passages.bulk``, what ``cpqa index build`` runs): records,
   sentences and passages per second, bytes per passage and per record (layouts and int8 sentence vectors), the
   projected hours and gigabytes per million records and for all of PubMed (36M records).
2. **Scale.** For each size, the built sample is replicated under rewritten PMIDs until the store holds that many
   records, each replica a row of its own (layout and vectors). Then, with cold in-memory caches, each query reads
   the passages of ``candidates`` random records and ranks them for a question as the pipeline does
   (``SegmentCache.nodes`` + ``PassageRetriever.search``): p50 / p95 milliseconds and the store's bytes.
"""

from __future__ import annotations

import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

from pydantic import BaseModel

from cpqa.config import Settings
from cpqa.models.encoders import load_encoder
from cpqa.options import PassageOptions
from cpqa.passages.dense import PassageRetriever
from cpqa.passages.passage_store import PassageStore
from cpqa.passages.segments import SegmentCache
from cpqa.sources.store import Store
from cpqa.types import Article, Candidate, RetrievedDocument
from cpqa.passages.bulk import passage_segmenter, segment_records

QUESTIONS = (
    "Does tamoxifen reduce the risk of breast cancer recurrence?",
    "What are the side effects of radiotherapy for prostate cancer?",
    "Is immunotherapy effective for advanced melanoma?",
    "How is colorectal cancer screened?",
)


class BuildRate(BaseModel):
    records: int
    sentences: int
    passages: int
    seconds: float
    records_per_s: float
    sentences_per_s: float
    passages_per_s: float
    bytes_per_passage: float
    bytes_per_record: float
    hours_per_million_records: float  # wall hours on this machine (all its cores)
    gb_per_million_records: float
    gb_for_pubmed: float  # 36M records


class ScalePoint(BaseModel):
    records: int
    store_bytes: int
    queries: int
    candidates: int
    retrieval_p50_ms: float
    retrieval_p95_ms: float


class PassageBench(BaseModel):
    models: dict[str, str]
    cores: int
    build: BuildRate
    scale: list[ScalePoint]


PUBMED_RECORDS = 36_000_000


def _pipeline_parts(settings: Settings, store: PassageStore) -> tuple[SegmentCache, PassageRetriever]:
    """The segmenter and passage retriever as ``Pipeline`` builds them, over ``store``."""
    retriever = PassageRetriever.load(settings)
    return passage_segmenter(settings, store, vectors=retriever.cache), retriever


def measure_build(settings: Settings, articles: Sequence[Article], path: Path) -> BuildRate:
    with PassageStore(path) as store:
        summary = segment_records(articles, passage_segmenter(settings, store))
        stats = store.stats()
    seconds = max(summary.seconds, 1e-9)
    per_record = stats["bytes"] / max(1, summary.records)
    return BuildRate(
        records=summary.records,
        sentences=summary.sentences,
        passages=summary.passages,
        seconds=summary.seconds,
        records_per_s=summary.records / seconds,
        sentences_per_s=summary.sentences / seconds,
        passages_per_s=summary.passages / seconds,
        bytes_per_passage=stats["bytes"] / max(1, summary.passages),
        bytes_per_record=per_record,
        hours_per_million_records=1e6 / (summary.records / seconds) / 3600,
        gb_per_million_records=per_record * 1e6 / 1e9,
        gb_for_pubmed=per_record * PUBMED_RECORDS / 1e9,
    )


def grow(path: Path, articles: Sequence[Article], segments: SegmentCache, records: int, seed: int = 0) -> list[Article]:
    """Replicate the built ``articles`` in the store at ``path`` under rewritten PMIDs until it holds ``records``
    records; returns every record it holds (originals and replicas)."""
    layouts = segments.layouts([(a, "D1") for a in articles])
    rng = random.Random(seed)
    held = list(articles)
    with PassageStore(path) as store:
        replica = 0
        while len(held) < records:
            replica += 1
            copies = [
                article.model_copy(update={"pmid": str(900_000_000 + replica * 1_000_000 + i)})
                for i, article in enumerate(articles[: records - len(held)])
            ]
            store.put((segments.key(copy, "D1"), copy.pmid, layout) for copy, layout in zip(copies, layouts))
            held += copies
        rng.shuffle(held)
    return held


def measure_retrieval(
    settings: Settings, path: Path, held: Sequence[Article], queries: int, candidates: int, seed: int = 0
) -> tuple[float, float]:
    """p50 / p95 ms of reading and ranking the passages of ``candidates`` random records, cold caches each time."""
    rng = random.Random(seed)
    times = []
    for q in range(queries):
        picked = rng.sample(list(held), min(candidates, len(held)))
        documents = [RetrievedDocument(candidate=Candidate(pmid=a.pmid, category="E2"), article=a) for a in picked]
        with PassageStore(path) as store:
            segments, retriever = _pipeline_parts(settings, store)
            start = time.perf_counter()
            nodes = segments.nodes(documents)
            retriever.search(QUESTIONS[q % len(QUESTIONS)], nodes, PassageOptions())
            times.append((time.perf_counter() - start) * 1000.0)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def run(
    settings: Settings,
    sizes: Sequence[int],
    build_records: int = 200,
    queries: int = 40,
    candidates: int = 50,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> PassageBench:
    with Store(settings.store_path) as store:
        articles = [a for a in store.iter_articles() if a.pmid and a.has_abstract][:build_records]
    if not articles:
        raise ValueError(f"no records with an abstract in {settings.store_path}: ingest some first")
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        base = Path(tmp) / "passages.sqlite"
        build = measure_build(settings, articles, base)
        if progress:
            progress(f"build: {build.model_dump_json()}")
        points = []
        for size in sorted(sizes):
            path = Path(tmp) / f"passages-{size}.sqlite"
            with sqlite3.connect(base) as source, sqlite3.connect(path) as target:
                source.backup(target)
            with PassageStore(path) as store:
                held = grow(path, articles, passage_segmenter(settings, store), size)
            p50, p95 = measure_retrieval(settings, path, held, queries, candidates)
            size_bytes = sum(f.stat().st_size for f in Path(tmp).glob(path.name + "*"))
            points.append(
                ScalePoint(
                    records=size,
                    store_bytes=size_bytes,
                    queries=queries,
                    candidates=candidates,
                    retrieval_p50_ms=p50,
                    retrieval_p95_ms=p95,
                )
            )
            if progress:
                progress(f"{size} records: {points[-1].model_dump_json()}")
            path.unlink()
    sentence_encoder, _ = load_encoder("sentence_embedder", settings)
    passage_encoder, _ = load_encoder("passage_retriever", settings)
    return PassageBench(
        models={"sentence_embedder": sentence_encoder.name, "passage_retriever": passage_encoder.name},
        cores=os.cpu_count() or 1,
        build=build,
        scale=points,
    )
