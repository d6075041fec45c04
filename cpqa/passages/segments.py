"""SEOS passages of the documents a question retrieved, shared across questions: a record is segmented once (a
bounded in-process LRU, read through the persistent ``PassageStore`` when one is given, so once across processes
too), keyed by its content, its source and the segmenter's settings; each question gets copies carrying its own
retrieval category."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Sequence

from llama_index.core.schema import TextNode

from cpqa.passages.passage_store import PassageStore
from cpqa.passages.seos import SEOSNodeParser, segment_article, source_text
from cpqa.types import Article, RetrievedDocument


class SegmentCache:
    """``nodes(documents)``: the SEOS nodes of retrieved documents; thread-safe."""

    def __init__(self, parser: SEOSNodeParser, max_articles: int = 20_000, store: PassageStore | None = None):
        self.parser = parser
        self.max_articles = max_articles
        self.store = store
        self.segmented = 0  # records this process segmented (not found in memory or in the store)
        self._items: OrderedDict[str, list[TextNode]] = OrderedDict()
        self._lock = threading.Lock()
        p = parser
        # "sentences": nodes carry their sentence offsets (records stored before that are segmented again)
        self._settings = (f"{p.model.name}|{p.target}{p.unit}|{p.overlap}|{p.window}|{p.cutoff_sd}|{p.min_fraction}"
                          "|sentences")

    def key(self, article: Article, source: str) -> str:
        # A retraction is the record's status, not its text: it does not change the segments.
        text = article.model_dump_json(exclude={"retracted_by"})
        return hashlib.sha1(f"{self._settings}\x00{source}\x00{text}".encode()).hexdigest()

    def article_nodes(self, article: Article, source: str, category: str | None,
                      evidence_type: str | None = None) -> list[TextNode]:
        key = self.key(article, source)
        with self._lock:
            cached = self._items.get(key)
            if cached is not None:
                self._items.move_to_end(key)
        if cached is None and self.store is not None:
            cached = self.store.nodes(key)
        if cached is None:
            cached = segment_article(article, source=source, category=None, parser=self.parser)
            with self._lock:
                self.segmented += 1
            if self.store is not None:
                self.store.put_nodes(key, article.pmid, cached)
        with self._lock:
            self._items[key] = cached
            self._items.move_to_end(key)
            while len(self._items) > self.max_articles:
                self._items.popitem(last=False)
        # Copies: cached nodes are shared between threads, the category belongs to this question.
        update = {"category": category, "evidence_type": evidence_type}
        return [n.model_copy(update={"metadata": {**n.metadata, **update}}) for n in cached]

    def prepare(self, items: Sequence[tuple[Article, str]]) -> int:
        """Embed, in one batch, the sentences of the records among ``items`` (article, source) that are neither
        in memory nor stored, so segmenting them next finds every sentence vector cached: SEOS alone embeds one
        record's few sentences at a time, and per-call overhead dominates. Returns the sentences embedded."""
        keys = [self.key(article, source) for article, source in items]
        with self._lock:
            fresh = [k for k in keys if k not in self._items]
        stored = self.store.has_segments(fresh) if self.store is not None and fresh else set()
        texts = []
        for (article, _), key in zip(items, keys):
            if key in fresh and key not in stored:
                text, sections = source_text(article)
                for _, start, end in sections or [(None, 0, len(text))]:
                    texts += [text[span.start:span.end] for span in self.parser.sentences(text, start, end)]
        if texts:
            self.parser.sentence_cache.encode(texts, persist=True)
        return len(texts)

    def nodes(self, documents: Sequence[RetrievedDocument]) -> list[TextNode]:
        self.prepare([(d.article, d.candidate.source) for d in documents])
        return [node for d in documents
                for node in self.article_nodes(d.article, d.candidate.source, d.candidate.category,
                                               d.candidate.evidence_type)]
