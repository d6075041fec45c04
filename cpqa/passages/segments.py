"""SEOS passages of the documents a question retrieved, shared across questions: a record is segmented once per
process (a bounded LRU keyed by its content and source) and each question gets copies carrying its own retrieval
category."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Iterable

from llama_index.core.schema import TextNode

from cpqa.passages.seos import SEOSNodeParser, segment_article
from cpqa.types import Article, RetrievedDocument


class SegmentCache:
    """``nodes(documents)``: the SEOS nodes of retrieved documents; thread-safe."""

    def __init__(self, parser: SEOSNodeParser, max_articles: int = 20_000):
        self.parser = parser
        self.max_articles = max_articles
        self._items: OrderedDict[str, list[TextNode]] = OrderedDict()
        self._lock = threading.Lock()

    def article_nodes(self, article: Article, source: str, category: str | None) -> list[TextNode]:
        key = hashlib.sha1(f"{source}\x00{article.model_dump_json()}".encode()).hexdigest()
        with self._lock:
            cached = self._items.get(key)
            if cached is not None:
                self._items.move_to_end(key)
        if cached is None:
            cached = segment_article(article, source=source, category=None, parser=self.parser)
            with self._lock:
                self._items[key] = cached
                while len(self._items) > self.max_articles:
                    self._items.popitem(last=False)
        # Copies: cached nodes are shared between threads, the category belongs to this question.
        return [n.model_copy(update={"metadata": {**n.metadata, "category": category}}) for n in cached]

    def nodes(self, documents: Iterable[RetrievedDocument]) -> list[TextNode]:
        return [node for d in documents
                for node in self.article_nodes(d.article, d.candidate.source, d.candidate.category)]
