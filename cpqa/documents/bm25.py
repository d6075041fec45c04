"""Plain BM25 over title + abstract (bm25s, English stopwords, Snowball stemming): the lexical baseline every RAG
tutorial builds, and HSRDR's optional third path (``DocumentOptions.bm25_weight``).

The index is built from the store's records, saved under ``$CPQA_HOME/index/bm25`` and loaded memory-mapped; it
is rebuilt when the store's record count, its newest row or its last change differs from what it was built on (``cpqa
index build`` builds it too).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path


from cpqa.documents.path import DocumentPath, DocumentQuery, PathHits
from cpqa.options import DocumentOptions
from cpqa.types import Article
from cpqa.words import document_bm25_tokens

STATE_FILE = "cpqa_state.json"


def bm25_text(article: Article) -> str:
    return f"{article.title}\n{article.abstract}".strip()


class Bm25Index:
    """A bm25s index and the PMID of each of its rows."""

    def __init__(self, retriever, pmids: list[str], state: dict):
        self.retriever, self.pmids, self.state = retriever, pmids, state
        self._lock = threading.Lock()

    @classmethod
    def build(cls, store, directory: Path | None = None) -> "Bm25Index":
        """Index every stored record that has a PMID; saved to ``directory`` when given."""
        import bm25s

        pmids, texts = [], []
        for article in store.iter_articles():
            if article.pmid:
                pmids.append(article.pmid)
                texts.append(bm25_text(article))
        retriever = bm25s.BM25()
        retriever.index(document_bm25_tokens(texts), show_progress=False)
        index = cls(retriever, pmids, store_state(store))
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            retriever.save(str(directory))
            (directory / "pmids.json").write_text(json.dumps(pmids), encoding="utf-8")
            (directory / STATE_FILE).write_text(json.dumps(index.state), encoding="utf-8")
        return index

    @classmethod
    def open(cls, store, directory: Path) -> "Bm25Index":
        """The saved index when it matches the store, else a fresh build (saved)."""
        import bm25s

        state_file, state = directory / STATE_FILE, store_state(store)
        if state_file.exists() and json.loads(state_file.read_text(encoding="utf-8")) == state:
            retriever = bm25s.BM25.load(str(directory), mmap=True)
            pmids = json.loads((directory / "pmids.json").read_text(encoding="utf-8"))
            return cls(retriever, pmids, state)
        return cls.build(store, directory)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """(PMID, BM25 score) best first; a query with no indexed word finds nothing."""
        tokens = document_bm25_tokens([query])
        if not self.pmids or not tokens.ids[0]:
            return []
        with self._lock:  # bm25s keeps per-call state in the retriever
            ids, scores = self.retriever.retrieve(tokens, k=min(k, len(self.pmids)), show_progress=False, n_threads=1)
        return [(self.pmids[int(i)], float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]


def store_state(store) -> dict:
    """What a saved index must match: the store's record count, newest row and last change (a record revised in
    place, by a PubMed update file, changes neither of the first two)."""
    return {"count": store.count(), "last": store.last_row_id(), "updated": store.last_update()}


class Bm25Retriever(DocumentPath):
    """Plain BM25 as a LlamaIndex retriever: the question's words (not the rewrite) -> PMID nodes (score = BM25).
    The index loads on first use."""

    name = "BM25"

    def __init__(self, store, directory: Path, options: DocumentOptions | None = None):
        super().__init__(options)
        self.store, self.directory = store, directory
        self._index: Bm25Index | None = None
        self._lock = threading.Lock()

    @property
    def index(self) -> Bm25Index:
        with self._lock:
            if self._index is None:
                self._index = Bm25Index.open(self.store, self.directory)
            return self._index

    def hits(self, query: DocumentQuery, options: DocumentOptions) -> PathHits:
        k = (options or self.options).bm25_k
        result = PathHits(path=self.name)
        with result.stage("BM25", k=k) as record:
            result.hits = self.index.search(query.query_str, k)
            record.info["hits"] = len(result.hits)
        return result
