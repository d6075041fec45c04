"""The chunking benchmark (docs/architecture.md, "Chunking"): every splitter chunks every document, the chunks of a
splitter are pooled, and each query ranks its splitter's pool with BM25, dense retrieval, and dense
retrieval followed by the profile's reranker. A chunk is a hit when it comes from the query's document
and holds at least half of the gold span's characters. Also: mean chunk words, chunks per second, and
Pk / WindowDiff (word level) of the chunk starts against the true segment boundaries.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from cpqa.models.encoders import EmbeddingCache
from cpqa.sources.jsonl import read_records
from cpqa.evaluation.stats.metrics import hits_at, mrr_at
from cpqa.evaluation.evaluations.splitters import ChunkSpan, Splitter
from cpqa.evaluation.data.shared import SHARED_DATA
from cpqa.words import passage_bm25_tokens

K = 5
RERANK_DEPTH = 20  # dense candidates handed to the reranker
Reranker = Callable[..., list[int]]  # (query, candidate texts, their vectors) -> candidate indices, best first


# ------------------------------------------------------------------ benchmark file
class BenchSegment(BaseModel):
    pmid: str
    start: int
    end: int


class BenchQuery(BaseModel):
    question: str
    pmid: str
    gold_span: tuple[int, int]


class BenchDoc(BaseModel):
    doc_id: str
    text: str
    segments: list[BenchSegment]
    queries: list[BenchQuery]


def default_bench_path() -> Path:
    """``../shared/data/bench/chunking_dev.jsonl`` beside the checkout."""
    return SHARED_DATA / "bench" / "chunking_dev.jsonl"


def load_bench(path: Path | str, limit: int | None = None) -> list[BenchDoc]:
    return read_records(path, BenchDoc, "chunking benchmark record", limit)


# ------------------------------------------------------------------ results
class RetrieverScore(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    hits_at_5: float = Field(alias="hits@5")
    mrr_at_5: float = Field(alias="mrr@5")


class SplitterResult(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    bm25: RetrieverScore
    dense: RetrieverScore
    dense_rerank: RetrieverScore | None = Field(default=None, alias="dense+rerank")
    chunks: int
    mean_words: float
    chunks_per_s: float
    pk: float
    windowdiff: float


class ChunkingReport(BaseModel):
    bench: str
    docs: int
    queries: int
    models: dict[str, str]
    splitters: dict[str, SplitterResult]

    def as_json(self) -> dict:
        return self.model_dump(by_alias=True, mode="json")


# ------------------------------------------------------------------ segmentation metrics
def boundary_string(text: str, offsets: Iterable[int]) -> str:
    """One character per word: "1" where a boundary follows the word, else "0"."""
    starts = [i for i, ch in enumerate(text) if not ch.isspace() and (i == 0 or text[i - 1].isspace())]
    marks = ["0"] * len(starts)
    for offset in offsets:
        word = int(np.searchsorted(starts, offset, side="left"))
        if 0 < word < len(starts):
            marks[word - 1] = "1"
    return "".join(marks)


def segmentation_errors(text: str, true_starts: Sequence[int], chunk_starts: Sequence[int]) -> tuple[float, float]:
    """(Pk, WindowDiff) with k = half the mean true segment length in words."""
    from nltk.metrics.segmentation import pk, windowdiff

    ref = boundary_string(text, true_starts)
    hyp = boundary_string(text, chunk_starts)
    k = max(2, int(round(len(ref) / (2.0 * (ref.count("1") + 1)))))
    if len(ref) <= k:
        return 0.0, 0.0
    return float(pk(ref, hyp, k=k, boundary="1")), float(windowdiff(ref, hyp, k, boundary="1"))


# ------------------------------------------------------------------ retrieval
def holds_gold(chunk: ChunkSpan, gold: tuple[int, int]) -> bool:
    overlap = min(chunk.end, gold[1]) - max(chunk.start, gold[0])
    return overlap * 2 >= gold[1] - gold[0]


def hit_scores(ranked: Sequence[int], hits: set[int], k: int = K) -> tuple[float, float]:
    """(Hits@k, MRR@k) of one question; no chunk holding the gold span scores zero."""
    if not hits:
        return 0.0, 0.0
    ids, gold = [str(i) for i in ranked], {str(i) for i in hits}
    return hits_at(ids, gold, k), mrr_at(ids, gold, k)


def _score(rankings: Sequence[Sequence[int]], hits: Sequence[set[int]]) -> RetrieverScore:
    scores = [hit_scores(r, h) for r, h in zip(rankings, hits)]
    n = max(1, len(scores))
    return RetrieverScore(hits_at_5=sum(s[0] for s in scores) / n, mrr_at_5=sum(s[1] for s in scores) / n)


def bm25_rankings(corpus: list[str], queries: list[str], k: int = K) -> list[list[int]]:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(passage_bm25_tokens(corpus), show_progress=False)  # the passage reranker's tokenisation
    tokens = passage_bm25_tokens(queries)
    ids, _ = retriever.retrieve(tokens, k=min(k, len(corpus)), show_progress=False, n_threads=1)
    return [list(map(int, row)) for row in ids]


def chunk_vectors(cache: EmbeddingCache, corpus: list[str], given: Sequence[Any]) -> np.ndarray:
    """Each chunk's passage vector: the splitter's own (SEOS: the mean of its sentences'), else its text embedded."""
    missing = [i for i, v in enumerate(given) if v is None]
    encoded = cache.encode([corpus[i] for i in missing]) if missing else np.zeros((0, cache.encoder.dim))
    filled = dict(zip(missing, encoded))
    rows = [np.asarray(v, dtype=np.float32) if v is not None else filled[i] for i, v in enumerate(given)]
    return np.stack(rows) if rows else np.zeros((0, cache.encoder.dim), dtype=np.float32)


def dense_rankings(vectors: np.ndarray, cache: EmbeddingCache, queries: list[str], k: int) -> list[list[int]]:
    scores = cache.encoder.encode(queries) @ vectors.T
    return [list(map(int, np.argsort(-row, kind="stable")[:k])) for row in scores]


def fusion_reranker(postprocessor) -> Reranker:
    """Adapt a LlamaIndex ``BaseNodePostprocessor`` (cpqa.passages.rerank) to the benchmark's reranker signature."""
    from llama_index.core.schema import NodeWithScore, TextNode

    def rerank(query: str, texts: list[str], vectors: np.ndarray | None = None) -> list[int]:
        nodes = [
            NodeWithScore(
                node=TextNode(id_=str(i), text=t, embedding=None if vectors is None else vectors[i].tolist()), score=0.0
            )
            for i, t in enumerate(texts)
        ]
        return [int(n.node.node_id) for n in postprocessor.postprocess_nodes(nodes, query_str=query)]

    return rerank


# ------------------------------------------------------------------ the benchmark
def run_splitter(splitter: Splitter, docs: Sequence[BenchDoc]) -> tuple[list[list[ChunkSpan]], float]:
    """Chunks of every document and the seconds it took."""
    start = time.perf_counter()
    chunks = [splitter(doc.text) for doc in docs]
    return chunks, time.perf_counter() - start


def evaluate_splitter(
    docs: Sequence[BenchDoc],
    chunks: list[list[ChunkSpan]],
    seconds: float,
    passage_cache: EmbeddingCache,
    reranker: Reranker | None,
) -> SplitterResult:
    pool = [(d, c) for d, doc_chunks in enumerate(chunks) for c in doc_chunks]
    keys = [docs[d].text[c.key_start : c.key_end] for d, c in pool]
    returned = [docs[d].text[c.start : c.end] for d, c in pool]
    queries = [(d, q) for d, doc in enumerate(docs) for q in doc.queries]
    hits = [{i for i, (cd, c) in enumerate(pool) if cd == d and holds_gold(c, q.gold_span)} for d, q in queries]
    questions = [q.question for _, q in queries]

    bm25 = _score(bm25_rankings(keys, questions), hits)
    vectors = chunk_vectors(passage_cache, keys, [c.vector for _, c in pool])
    dense_ranked = dense_rankings(vectors, passage_cache, questions, RERANK_DEPTH if reranker else K)
    reranked = None
    if reranker is not None:
        order = [
            [cands[i] for i in reranker(q, [returned[c] for c in cands], vectors[cands])]
            for q, cands in zip(questions, dense_ranked)
        ]
        reranked = _score(order, hits)

    errors = [
        segmentation_errors(doc.text, [s.start for s in doc.segments], [c.start for c in doc_chunks])
        for doc, doc_chunks in zip(docs, chunks)
    ]
    return SplitterResult(
        bm25=bm25,
        dense=_score(dense_ranked, hits),
        dense_rerank=reranked,
        chunks=len(pool),
        mean_words=float(np.mean([len(t.split()) for t in returned])) if returned else 0.0,
        chunks_per_s=len(pool) / seconds if seconds > 0 else 0.0,
        pk=float(np.mean([e[0] for e in errors])),
        windowdiff=float(np.mean([e[1] for e in errors])),
    )


def run_benchmark(
    docs: Sequence[BenchDoc],
    splitters: dict[str, Splitter],
    passage_cache: EmbeddingCache,
    reranker: Reranker | None,
    *,
    bench: str = "",
    models: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ChunkingReport:
    results = {}
    for name, splitter in splitters.items():
        chunks, seconds = run_splitter(splitter, docs)
        results[name] = evaluate_splitter(docs, chunks, seconds, passage_cache, reranker)
        if progress:
            progress(f"{name}: {results[name].model_dump_json(by_alias=True)}")
    return ChunkingReport(
        bench=bench, docs=len(docs), queries=sum(len(d.queries) for d in docs), models=models or {}, splitters=results
    )
