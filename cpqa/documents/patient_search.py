"""Search over the patient-information store (``cpqa.sources.patient_store``): plain BM25 and dense, fused by RRF.

- BM25 (bm25s, ``document_bm25_tokens``: stopwords, Snowball stems) over "title. heading. text": a question naming
  a condition finds its page, and the heading words ("symptoms", "treatment") pick the section.
- Dense: the pipeline's sentence embedder over "focus: heading. text" (its first ``DENSE_WORDS`` words), unit
  vectors saved as float16, widened to float32 in memory once (about 25 MB for MedQuAD; widening them per question
  cost 11 ms of each question's 20), and searched by inner product: it matches a question's meaning when its words
  differ from the page's.
- The two rankings are fused by ``rrf_fuse`` (the one RRF), dense weighted above BM25
  (``DocumentOptions.patient_*``); each path contributes its best ``depth``.

MedQuAD's questions are never indexed (they are the evaluation's queries). The index lives under
``$CPQA_HOME/index/patient`` (BM25 files, ``vectors.npy``, ``keys.json``, ``state.json``), is loaded memory-mapped,
and is rebuilt on opening when the store's content digest or the encoder differs from what it was built on, as
``cpqa.documents.bm25`` does for the article store.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from cpqa.options import DocumentOptions
from cpqa.config import Settings
from cpqa.fusion import rrf_fuse
from cpqa.looked_for import LOOK_EVERY_S, LookedFor
from cpqa.documents.page_focus import focus_tier
from cpqa.models.encoders import Encoder, unit_rows
from cpqa.sources.patient_store import PatientStore
from cpqa.types import PatientHit, PatientSection
from cpqa.words import document_bm25_tokens

# The fusion's k, weights and depth are options (``DocumentOptions.patient_*``, with how they were chosen): dense
# leads, and BM25 adds what only its words find (a page's overview section names its condition most and would win
# every question about it).
# The dense path reads a section's opening words only (``DocumentOptions.patient_dense_words``, with how it was
# chosen): MiniLM was trained on 128-token inputs, and a section leads with its point.
DENSE_WORDS = DocumentOptions().patient_dense_words
# What an index's rows are made of (``bm25_text``, ``dense_text``): a saved index of another version is rebuilt.
INDEX_VERSION = f"1:{DENSE_WORDS}"
STATE_FILE, KEYS_FILE, VECTORS_FILE, BM25_DIR = "state.json", "keys.json", "vectors.npy", "bm25"


def patient_index_dir(settings: Settings) -> Path:
    return settings.index_dir / "patient"


def bm25_text(section: PatientSection) -> str:
    return f"{section.title}. {section.heading}. {section.text}"


def dense_text(section: PatientSection) -> str:
    """The section's opening ``DENSE_WORDS`` words, led by its focus and heading."""
    words = f"{section.focus or section.title}: {section.heading}. {section.text}".split()
    return " ".join(words[:DENSE_WORDS])


def encoder_name(encoder: Encoder | None) -> str | None:
    return None if encoder is None else str(getattr(encoder, "name", type(encoder).__name__))


def saved_state(store: PatientStore, encoder: Encoder | None, directory: Path) -> dict | None:
    """What the saved index was built on, when that is the store's content now (and, given one, the encoder)."""
    state_file = directory / STATE_FILE
    saved = json.loads(state_file.read_text(encoding="utf-8")) if state_file.exists() else None
    if saved is None or saved.get("version") != INDEX_VERSION or saved.get("digest") != store.digest():
        return None
    return None if encoder is not None and saved.get("encoder") != encoder_name(encoder) else saved


class PatientIndex:
    """The BM25 index and unit vectors of every stored section, and the key of each row."""

    def __init__(self, retriever: Any, keys: list[str], vectors: np.ndarray | None, state: dict):
        self.retriever, self.keys, self.vectors, self.state = retriever, keys, vectors, state
        self._lock = threading.Lock()
        self._widened: np.ndarray | None = None  # ``vectors`` as float32, made on the first dense search

    @classmethod
    def build(cls, store: PatientStore, encoder: Encoder | None, directory: Path | None = None) -> "PatientIndex":
        """Index every stored section (vectors only with an encoder); saved to ``directory`` when given."""
        import bm25s

        state: dict[str, Any] = {"version": INDEX_VERSION, "digest": store.digest(), "encoder": encoder_name(encoder)}
        sections = list(store.iter_sections())
        keys = [s.key for s in sections]
        retriever = None
        if sections:
            retriever = bm25s.BM25()
            retriever.index(document_bm25_tokens([bm25_text(s) for s in sections]), show_progress=False)
        vectors = None
        if encoder is not None:
            vectors = unit_rows(encoder.encode([dense_text(s) for s in sections])).astype(np.float16)
            vectors = vectors.reshape(len(sections), -1)
        del sections
        state["count"] = len(keys)
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / STATE_FILE).unlink(missing_ok=True)  # written last: a build cut short reads as stale
            if retriever is not None:
                retriever.save(str(directory / BM25_DIR), show_progress=False)
            (directory / VECTORS_FILE).unlink(missing_ok=True)
            if vectors is not None:
                np.save(directory / VECTORS_FILE, vectors)
            (directory / KEYS_FILE).write_text(json.dumps(keys), encoding="utf-8")
            (directory / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")
        return cls(retriever, keys, vectors, state)

    @classmethod
    def open(cls, store: PatientStore, encoder: Encoder | None, directory: Path) -> "PatientIndex":
        """The saved index when it matches the store (and, given one, the encoder), else a fresh build (saved)."""
        import bm25s

        saved = saved_state(store, encoder, directory)
        if saved is None:
            return cls.build(store, encoder, directory)
        keys = json.loads((directory / KEYS_FILE).read_text(encoding="utf-8"))
        retriever = bm25s.BM25.load(str(directory / BM25_DIR), mmap=True, show_progress=False) if keys else None
        vectors_file = directory / VECTORS_FILE
        vectors = np.load(vectors_file, mmap_mode="r") if vectors_file.exists() else None
        return cls(retriever, keys, vectors, saved)

    @property
    def has_vectors(self) -> bool:
        return self.vectors is not None and len(self.keys) > 0

    def bm25(self, query: str, k: int) -> list[str]:
        """Keys best first by BM25; a query with no indexed word finds nothing."""
        tokens = document_bm25_tokens([query])
        if self.retriever is None or not tokens.ids[0]:
            return []
        with self._lock:  # bm25s keeps per-call state in the retriever
            ids, scores = self.retriever.retrieve(tokens, k=min(k, len(self.keys)), show_progress=False, n_threads=1)
        return [self.keys[int(i)] for i, s in zip(ids[0], scores[0]) if s > 0]

    def dense(self, vector: np.ndarray, k: int) -> list[str]:
        """Keys best first by inner product with a unit query vector."""
        if self.vectors is None or not self.keys:
            return []
        if self._widened is None:
            self._widened = np.asarray(self.vectors, dtype=np.float32)
        scores = self._widened @ np.asarray(vector, dtype=np.float32).reshape(-1)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return [self.keys[int(i)] for i in top[np.argsort(-scores[top], kind="stable")]]


class PatientSearch(BaseRetriever):
    """Patient sections for a question: ``search`` gives typed hits, LlamaIndex's ``retrieve`` the same as nodes
    (id ``patient:<key>``, the section's text, its provenance as metadata). Without an encoder only BM25 runs.
    The index opens (or is rebuilt) on first use."""

    def __init__(
        self,
        store: PatientStore,
        directory: Path,
        encoder: Encoder | None = None,
        *,
        options: DocumentOptions | None = None,
        build_missing: bool = True,
    ):
        """``build_missing``: build a missing or stale index on first use; False (a question waiting): search nothing
        until ``cpqa ingest medquad`` has built it, looking again at most once a minute (``ready``)."""
        super().__init__()
        self.store, self.directory, self.encoder = store, directory, encoder
        options = options or DocumentOptions()
        self.rrf_k, self.depth = options.patient_rrf_k, options.patient_depth
        self.weights = {"bm25": options.patient_bm25_weight, "dense": options.patient_dense_weight}
        self.build_missing = build_missing
        self._index: LookedFor[PatientIndex] = LookedFor(self._opened, every=0.0 if build_missing else LOOK_EVERY_S)

    @classmethod
    def build(cls, store: PatientStore, encoder: Encoder | None, directory: Path, **options: Any) -> "PatientSearch":
        """Build (and save) the index now, e.g. after ``cpqa ingest medquad``."""
        search = cls(store, directory, encoder, **options)
        search._index.set(PatientIndex.build(store, encoder, directory))
        return search

    def _opened(self) -> PatientIndex | None:
        if self.build_missing or saved_state(self.store, self.encoder, self.directory) is not None:
            return PatientIndex.open(self.store, self.encoder, self.directory)
        return None

    @property
    def index(self) -> PatientIndex | None:
        return self._index.get()

    @property
    def ready(self) -> bool:
        return self.index is not None

    def rankings(self, query: str, depth: int | None = None) -> dict[str, list[str]]:
        """Each path's keys, best first (``bm25``, and ``dense`` with an encoder and vectors); none while the index
        is not built (``ready``)."""
        depth = depth or self.depth
        index = self.index
        if index is None:
            return {}
        rankings = {"bm25": index.bm25(query, depth)}
        if self.encoder is not None and index.has_vectors:
            rankings["dense"] = index.dense(unit_rows(self.encoder.encode([query]))[0], depth)
        return rankings

    def fuse(self, rankings: dict[str, list[str]]) -> list[tuple[str, float, dict[str, int]]]:
        """``(key, fused score, {path: rank})`` best first."""
        return rrf_fuse(rankings, k=self.rrf_k, weights=self.weights)

    def search(
        self,
        query: str,
        k: int = 10,
        kinds: frozenset[str] = frozenset(),
        pool: int = 0,
        asked: str = "",
        focus_pool: int = 0,
    ) -> list[PatientHit]:
        """The ``k`` best sections for ``query``, fused by reciprocal rank. Of the first ``focus_pool``, those of a page
        whose condition ``asked`` names (``focus_tier``: the question with its conditions' names) come first, and
        within each tier, those of one of ``kinds`` (the kinds of section the question asks for) among the first
        ``pool`` or on such a page: a testicular cancer page's sections before another condition's "how common is
        it?"."""
        if not query.strip():
            return []
        depth = max(k, pool, focus_pool if asked else 0)
        fused = self.fuse(self.rankings(query, max(depth, self.depth)))[:depth]
        sections = self.store.get(key for key, _, _ in fused)
        hits = [
            PatientHit(section=sections[key], score=score, bm25_rank=ranks.get("bm25"), dense_rank=ranks.get("dense"))
            for key, score, ranks in fused
            if key in sections  # a key the store lost since the index was opened
        ]
        if not (kinds or asked):
            return hits[:k]

        def order(place: int) -> tuple[int, bool]:
            section = hits[place].section
            tier = focus_tier(section.title, asked) if asked and place < focus_pool else 2
            return tier, not ((place < pool or tier < 2) and section.kind in kinds)

        return [hits[i] for i in sorted(range(len(hits)), key=order)][:k]  # stable: the fused order within each

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [patient_node(hit) for hit in self.search(query_bundle.query_str)]


def patient_node(hit: PatientHit) -> NodeWithScore:
    """A hit as a LlamaIndex node: the section's text, with where it comes from as metadata."""
    section = hit.section
    metadata = {
        "key": section.key,
        "site": section.site,
        "url": section.url,
        "title": section.title,
        "heading": section.heading,
        "focus": section.focus,
        "kind": section.kind,
        "bm25_rank": hit.bm25_rank,
        "dense_rank": hit.dense_rank,
    }
    node = TextNode(
        id_=f"patient:{section.key}",
        text=section.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=[k for k in metadata if k not in ("site", "title", "heading")],
    )
    return NodeWithScore(node=node, score=hit.score)


def open_patient_search(
    settings: Settings, encoder: Encoder | None, options: DocumentOptions | None = None
) -> PatientSearch | None:
    """The data home's patient search, or None when it holds no patient pages (``cpqa ingest medquad``)."""
    if not settings.patient_store_path.exists():
        return None
    store = PatientStore(settings.patient_store_path)
    if store.count() == 0:
        store.close()
        return None
    return PatientSearch(store, patient_index_dir(settings), encoder, options=options, build_missing=False)
