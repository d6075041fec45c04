"""The embedder x reranker pairing experiment (the paper's Figure 4).

For each embedder (``none`` = BM25 only) the evidence passages of a pair set are indexed once; each query
retrieves the top ``k`` candidates, each reranker (``none`` included) reorders them, and Hits@5 / MRR@5 are
computed against the query's gold passages. Index time and per-query latency are measured. A model whose
weights cannot be loaded here is reported as unavailable with the reason, never skipped or replaced.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from cpqa.config import Settings
from cpqa.models.encoders import (
    MINILM,
    PUBMEDBERT_MATRYOSHKA,
    EmbeddingCache,
    ModelUnavailable,
    hub_reachable,
    weights_cached,
)
from cpqa.models.names import MEDCPT_CROSS
from cpqa.words import passage_bm25_tokens

BM25 = "none"  # the embedder slot of the BM25-only row
NO_RERANK = "none"
FUSION = "fusion"  # cpqa.passages.rerank.FusionReranker: BM25 + dense over the candidates (offline)
PAPER_EMBEDDERS = (
    PUBMEDBERT_MATRYOSHKA,
    "WhereIsAI/UAE-Large-V1",
    "BAAI/bge-large-en-v1.5",
    "Salesforce/SFR-Embedding-Mistral",
)
PAPER_RERANKERS = ("BAAI/bge-reranker-v2-m3", MEDCPT_CROSS)
DEFAULT_EMBEDDERS = (BM25, MINILM, *PAPER_EMBEDDERS)
DEFAULT_RERANKERS = (NO_RERANK, FUSION, *PAPER_RERANKERS)
ALIASES = {"bm25": BM25, "minilm": MINILM}
CUTOFF = 5


class Pair(BaseModel):
    """A query and one passage that answers it; several lines may share a query (several gold passages)."""

    query_id: str
    query: str
    passage_id: str
    passage: str
    pmid: str | None = None
    source: str = ""  # "bioasq" (annotators' snippets) or "synthetic" (written by Claude)


class PairSet:
    """Queries, their gold passage ids, and the pooled passages every query is searched against."""

    def __init__(self, pairs: Sequence[Pair]):
        if not pairs:
            raise ValueError("the pair set is empty")
        self.queries: OrderedDict[str, str] = OrderedDict()
        self.gold: dict[str, set[str]] = {}
        self.passages: OrderedDict[str, str] = OrderedDict()
        for p in pairs:
            self.queries.setdefault(p.query_id, p.query)
            self.gold.setdefault(p.query_id, set()).add(p.passage_id)
            self.passages.setdefault(p.passage_id, p.passage)

    def limit(self, n: int | None) -> "PairSet":
        """The first ``n`` queries with the passages of those queries only."""
        if n is None or n >= len(self.queries):
            return self
        keep = list(self.queries)[:n]
        return PairSet(
            [
                Pair(query_id=q, query=self.queries[q], passage_id=pid, passage=self.passages[pid])
                for q in keep
                for pid in sorted(self.gold[q])
            ]
        )


def passage_id(text: str, prefix: str) -> str:
    """Identical passage texts share one id, so a snippet gold for two questions is one pool entry."""
    return f"{prefix}:{hashlib.sha1(' '.join(text.split()).encode()).hexdigest()[:16]}"


def load_pairs(path: Path) -> list[Pair]:
    if not path.exists():
        raise FileNotFoundError(f"pair file {path} not found")
    pairs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                pairs.append(Pair.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not a pair ({exc.__class__.__name__})") from None
    return pairs


def save_pairs(pairs: Sequence[Pair], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(p.model_dump_json() + "\n" for p in pairs), encoding="utf-8")
    tmp.replace(path)


def pairs_dir(settings: Settings) -> Path:
    return settings.eval_dir / "pairs"


def matrix_path(settings: Settings, pair_file: Path) -> Path:
    """Where the matrix of a pair file is saved (the notebook reads it)."""
    return pairs_dir(settings) / f"matrix-{pair_file.stem}.json"


# ---------------------------------------------------------------- models
def ensure_loadable(model_id: str, settings: Settings) -> None:
    """Raise ``ModelUnavailable`` at once when the weights are neither cached nor downloadable (no hub retries)."""
    if model_id == MINILM or Path(model_id).exists():
        return
    if weights_cached(model_id):
        return
    if not hub_reachable(settings.cpqa_hub_timeout):
        raise ModelUnavailable(f"{model_id}: weights not in the local Hugging Face cache and the hub is unreachable")


def load_embedder(name: str, settings: Settings):
    from cpqa.models.encoders import load_model_by_id

    ensure_loadable(name, settings)
    try:
        return load_model_by_id(name)
    except ModelUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - any load failure is this model being unavailable here
        raise ModelUnavailable(f"{name}: {type(exc).__name__}: {exc}") from None


def shared_cache(caches: dict[str, EmbeddingCache], encoder) -> EmbeddingCache:
    """One embedding cache per encoder, so the fusion reranker reuses the first stage's passage vectors."""
    if encoder.name not in caches:
        caches[encoder.name] = EmbeddingCache(encoder)
    return caches[encoder.name]


def load_pair_reranker(name: str, settings: Settings, fusion_cache: Callable[[], EmbeddingCache]):
    """A LlamaIndex node postprocessor that keeps every candidate, reordered; None for ``none``.
    The fusion reranker scores with the bundled MiniLM (the offline passage encoder)."""
    from cpqa.passages.rerank import CrossEncoderReranker, FusionReranker

    if name == NO_RERANK:
        return None
    if name == FUSION:
        return FusionReranker(fusion_cache(), top_n=None)
    ensure_loadable(name, settings)
    try:
        from cpqa.models.cross_encoder import PairScorer
        from cpqa.models.encoders import onnx_cache_dir

        scorer = PairScorer(name, onnx_cache_dir(settings), runtime=settings.cpqa_runtime)
        return CrossEncoderReranker(scorer, top_n=None)
    except Exception as exc:  # noqa: BLE001
        raise ModelUnavailable(f"{name}: {type(exc).__name__}: {exc}") from None


# ---------------------------------------------------------------- retrieval and scoring
class Cell(BaseModel):
    """One embedder x reranker result."""

    embedder: str
    reranker: str
    available: bool = True
    reason: str = ""
    hits_at_5: float | None = None
    mrr_at_5: float | None = None
    index_s: float | None = None  # indexing (embedding) the passage pool
    query_ms: float | None = None  # mean per query: retrieve + rerank
    query_ms_p95: float | None = None
    queries: int = 0
    passages: int = 0


class FirstStage:
    """Top-k candidate passage ids for a query, by BM25 or by a dense embedder over the pool."""

    def __init__(
        self,
        embedder: str,
        settings: Settings,
        ids: list[str],
        texts: list[str],
        caches: dict[str, EmbeddingCache] | None = None,
    ):
        self.ids = ids
        started = time.perf_counter()
        if embedder == BM25:
            import bm25s

            self.encoder = None
            self._bm25 = bm25s.BM25()
            self._bm25.index(passage_bm25_tokens(texts), show_progress=False)  # the passage reranker's tokenisation
        else:
            self.encoder = load_embedder(embedder, settings)
            cache = shared_cache(caches if caches is not None else {}, self.encoder)
            self._vectors = cache.encode(texts, batch_size=64)
        self.index_s = time.perf_counter() - started

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        k = min(k, len(self.ids))
        if self.encoder is None:
            docs, scores = self._bm25.retrieve(passage_bm25_tokens([query]), k=k, show_progress=False)
            return [(self.ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0])]
        scores = self._vectors @ self.encoder.encode([query])[0]
        top = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[int(i)], float(scores[i])) for i in top]


def rerank(reranker, query: str, candidates: list[tuple[str, float]], texts: dict[str, str]) -> list[str]:
    if reranker is None:
        return [pid for pid, _ in candidates]
    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = [NodeWithScore(node=TextNode(id_=pid, text=texts[pid]), score=s) for pid, s in candidates]
    return [n.node.node_id for n in reranker.postprocess_nodes(nodes, query_str=query)]


def run_matrix(
    pair_set: PairSet,
    settings: Settings,
    embedders: Sequence[str] = DEFAULT_EMBEDDERS,
    rerankers: Sequence[str] = DEFAULT_RERANKERS,
    top_k: int = 20,
    progress: Callable[[str], None] | None = None,
) -> list[Cell]:
    """Every embedder x reranker cell, in the given order (unavailable ones with their reason).

    The bundled MiniLM row runs first: its index pass fills the embedding cache the fusion reranker reads,
    so fusion rows score candidates from indexed vectors (as in the pipeline) and index times stay honest."""
    embedders = list(dict.fromkeys(ALIASES.get(e, e) for e in embedders))
    rerankers = list(dict.fromkeys(ALIASES.get(r, r) for r in rerankers))
    ids, texts = list(pair_set.passages), list(pair_set.passages.values())
    done: dict[tuple[str, str], Cell] = {}
    loaded: dict[str, object] = {}
    caches: dict[str, EmbeddingCache] = {}

    def fusion_cache() -> EmbeddingCache:
        return shared_cache(caches, load_embedder(MINILM, settings))

    for embedder in sorted(embedders, key=lambda e: e != MINILM):
        try:
            stage = FirstStage(embedder, settings, ids, texts, caches)
        except ModelUnavailable as exc:
            done.update(
                {
                    (embedder, r): Cell(embedder=embedder, reranker=r, available=False, reason=str(exc))
                    for r in rerankers
                }
            )
            continue
        for name in rerankers:
            if progress:
                progress(f"{embedder} x {name}")
            if name not in loaded:
                try:
                    loaded[name] = load_pair_reranker(name, settings, fusion_cache)
                except ModelUnavailable as exc:
                    loaded[name] = exc
            model = loaded[name]
            if isinstance(model, ModelUnavailable):
                done[(embedder, name)] = Cell(embedder=embedder, reranker=name, available=False, reason=str(model))
                continue
            done[(embedder, name)] = score_cell(pair_set, stage, model, embedder, name, top_k)
    return [done[(e, r)] for e in embedders for r in rerankers]


def score_cell(pair_set: PairSet, stage: FirstStage, reranker, embedder: str, name: str, top_k: int) -> Cell:
    from cpqa.evaluation.stats.metrics import hits_at, mrr_at

    hits, mrrs, times = [], [], []
    for qid, query in pair_set.queries.items():
        started = time.perf_counter()
        ranked = rerank(reranker, query, stage.search(query, top_k), pair_set.passages)
        times.append((time.perf_counter() - started) * 1000.0)
        hits.append(hits_at(ranked, pair_set.gold[qid], CUTOFF))
        mrrs.append(mrr_at(ranked, pair_set.gold[qid], CUTOFF))
    return Cell(
        embedder=embedder,
        reranker=name,
        hits_at_5=round(float(np.mean(hits)), 4),
        mrr_at_5=round(float(np.mean(mrrs)), 4),
        index_s=round(stage.index_s, 2),
        query_ms=round(float(np.mean(times)), 2),
        query_ms_p95=round(float(np.percentile(times, 95)), 2),
        queries=len(pair_set.queries),
        passages=len(stage.ids),
    )
