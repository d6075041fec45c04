"""SEOS layouts of the records a question retrieved, shared across questions and processes.

A record is segmented once: a bounded in-process LRU over the persistent ``PassageStore``, keyed by the record's
content, its source and the segmenter's settings. Records met for the first time are segmented together: their
sentences go through the sentence embedder in one call, each record is laid out from its own rows, then every new
chunk goes through the passage embedder in one call (window by window past its token window). Each question gets
fresh nodes carrying its own retrieval category and, as their embeddings, the stored passage vectors, so nothing
stored is embedded again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np
from llama_index.core.schema import TextNode

from cpqa.models.encoders import EmbeddingCache, TextEncoder, unit_rows
from cpqa.passages.layout import RecordLayout
from cpqa.passages.passage_store import PassageStore
from cpqa.passages.records import article_nodes, source_text
from cpqa.passages.seos import SPECIAL_TOKENS, SEOSNodeParser
from cpqa.types import Article, RetrievedDocument

LAYOUT_VERSION = "layout3"  # sentence rules (cpqa.sentences), chunks as sentence runs, passage vectors


def embed_passages(
    encoder: TextEncoder | EmbeddingCache, items: Sequence[tuple[str, Sequence[int], RecordLayout]]
) -> int:
    """Set each layout's passage vectors, all chunks of all ``items`` (text, word pieces per sentence, layout) in one
    encoder call: a chunk's text, in windows of the encoder's token window when longer, the windows' vectors
    averaged by their word pieces. Returns the texts embedded."""
    window = encoder.max_tokens - SPECIAL_TOKENS
    texts: list[str] = []
    owners: list[tuple[int, int, int]] = []  # (item, chunk, word pieces) per window
    for number, (text, sizes, layout) in enumerate(items):
        for c, chunk in enumerate(layout.chunks):
            for first, end in _windows(sizes, chunk.first, chunk.end, window):
                texts.append(text[layout.sentences[first][0] : layout.sentences[end - 1][1]])
                owners.append((number, c, sum(sizes[first:end])))
    if not texts:
        return 0
    rows = encoder.encode(texts)
    sums = [np.zeros((len(layout.chunks), rows.shape[1]), dtype=np.float32) for _, _, layout in items]
    for (number, c, weight), row in zip(owners, rows):
        sums[number][c] += max(weight, 1) * row
    for (_, _, layout), total in zip(items, sums):
        layout.passages = unit_rows(total)
    return len(texts)


def _windows(sizes: Sequence[int], first: int, end: int, window: int) -> list[tuple[int, int]]:
    """Sentences ``first..end`` grouped into consecutive runs of at most ``window`` word pieces (a longer sentence
    alone; the encoder cuts it)."""
    runs: list[tuple[int, int]] = []
    start, used = first, 0
    for i in range(first, end):
        if i > start and used + sizes[i] > window:
            runs.append((start, i))
            start, used = i, 0
        used += sizes[i]
    if end > start:
        runs.append((start, end))
    return runs


class SegmentCache:
    """``nodes(documents)``: the SEOS nodes of retrieved documents, with passage vectors; thread-safe.

    ``vectors``: the passage embedder's cache: it embeds new chunks, and receives every record's sentence vectors
    (cut to its dimension), which the extractive answer reads. Without one, passage vectors are the means of their
    sentences' vectors."""

    def __init__(
        self,
        parser: SEOSNodeParser,
        store: PassageStore | None = None,
        vectors: EmbeddingCache | None = None,
        max_records: int = 4_000,
    ):
        self.parser, self.store, self.vectors = parser, store, vectors
        self.max_records = max_records
        self.segmented = 0  # records this process segmented (not found in memory or in the store)
        self.sentences_embedded = 0  # their sentences, each embedded once
        self.passages_embedded = 0  # their chunks' windows
        self._items: OrderedDict[str, RecordLayout] = OrderedDict()
        self._lock = threading.Lock()
        p = parser
        o = p.options
        shape = f"{p.target}{p.unit}|{p.overlap}|{o.gap_window}|{o.cutoff_sd}|{o.min_fraction}"
        self._settings = f"{p.model.name}|{shape}|{LAYOUT_VERSION}"

    @property
    def dim(self) -> int | None:
        """The passage vectors' dimension (a Matryoshka passage embedder cuts the sentence vectors)."""
        return self.vectors.encoder.dim if self.vectors is not None else None

    def key(self, article: Article, source: str) -> str:
        # A retraction is the record's status, not its text: it does not change the segments.
        text = article.model_dump_json(exclude={"retracted_by"})
        return hashlib.sha1(f"{self._settings}\x00{source}\x00{text}".encode()).hexdigest()

    def known(self, items: Sequence[tuple[Article, str]]) -> list[bool]:
        """Whether each (article, source) is laid out already, in memory or in the store (no segmentation)."""
        keys = [self.key(article, source) for article, source in items]
        with self._lock:
            missing = [k for k in keys if k not in self._items]
        stored = self.store.has(missing) if self.store is not None and missing else set()
        return [k not in missing or k in stored for k in keys]

    def layouts(self, items: Sequence[tuple[Article, str]]) -> list[RecordLayout]:
        """The layout of each (article, source): from memory, the store, or segmented now (all new records in one
        encoder call) and stored."""
        keys = [self.key(article, source) for article, source in items]
        with self._lock:
            found = {k: self._items[k] for k in keys if k in self._items}
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing and self.store is not None:
            found.update(self.store.get(missing))
        fresh = {k: item for k, item in zip(keys, items) if k not in found}
        if fresh:
            made = self._segment(list(fresh.values()))
            found.update(zip(fresh, made))
            if self.store is not None:
                self.store.put((k, article.pmid, layout) for (k, (article, _)), layout in zip(fresh.items(), made))
        with self._lock:
            for k in keys:
                self._items[k] = found[k]
                self._items.move_to_end(k)
            while len(self._items) > self.max_records:
                self._items.popitem(last=False)
        return [found[k] for k in keys]

    def _segment(self, items: Sequence[tuple[Article, str]]) -> list[RecordLayout]:
        plans = []
        texts: list[str] = []
        for article, _ in items:
            text, sections = source_text(article)
            plan = self.parser.plan(text, sections)
            plans.append((text, sections, plan))
            texts += [text[s.start : s.end] for spans in plan for s in spans]
        vectors = self.parser.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
        layouts, offset = [], 0
        for text, sections, plan in plans:
            count = sum(len(spans) for spans in plan)
            layouts.append(self.parser.lay_out(text, sections, plan, vectors[offset : offset + count]))
            offset += count
        if self.vectors is not None:
            embedded = embed_passages(
                self.vectors,
                [
                    (text, [span.size for spans in plan for span in spans], layout)
                    for (text, _, plan), layout in zip(plans, layouts)
                ],
            )
            with self._lock:
                self.passages_embedded += embedded
        with self._lock:
            self.segmented += len(items)
            self.sentences_embedded += len(texts)
        return layouts

    def record_nodes(
        self,
        article: Article,
        source: str,
        layout: RecordLayout,
        category: str | None = None,
        evidence_type: str | None = None,
    ) -> list[TextNode]:
        """The record's nodes for one question, with passage vectors; its sentence vectors go to ``vectors``."""
        nodes = article_nodes(
            article, layout, source=source, category=category, embeddings=layout.passage_vectors(self.dim)
        )
        for node in nodes:
            node.metadata["evidence_type"] = evidence_type
        if self.vectors is not None and layout.sentences:
            text, _ = source_text(article)
            self.vectors.remember([text[a:b] for a, b in layout.sentences], layout.sentence_vectors(self.dim))
        return nodes

    def nodes(self, documents: Sequence[RetrievedDocument]) -> list[TextNode]:
        layouts = self.layouts([(d.article, d.candidate.source) for d in documents])
        return [
            node
            for d, layout in zip(documents, layouts)
            for node in self.record_nodes(
                d.article, d.candidate.source, layout, d.candidate.category, d.candidate.evidence_type
            )
        ]
