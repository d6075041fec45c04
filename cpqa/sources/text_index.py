"""The store's Boolean search index, behind one small interface with two engines.

``fts5`` (``Fts5Index``) lives inside the store's SQLite file and changes in the store's own transactions: nothing
to install, always consistent, fast enough to about 100k records. ``tantivy`` (``TantivyIndex``, a Lucene-style
engine in Rust) keeps its index in a folder beside the store and answers with skipping postings and bit-packed
counts: at 1M records its esearch p95 is tens of milliseconds where FTS5's is over a second (docs/results.md,
"Scale, measured (issue 19)").

Both index the same text (``store_rows.fts_values``) under the same field tags and rank by field-weighted BM25
(``BM25_WEIGHTS``); they differ in stemming (Porter in FTS5, Snowball English in tantivy), so counts can differ by
a few percent on words the two stem differently. The engine is a property of the store (recorded in its meta
table): ``Store(path, engine=...)`` chooses it for a new store, or converts an existing one by rebuilding."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from cpqa.sources.boolean import Node

ENGINES = ("fts5", "tantivy")


def check_engine(engine: str) -> str:
    """``engine`` if it names one of ``ENGINES``; ValueError saying which exist otherwise."""
    if engine not in ENGINES:
        raise ValueError(f"unknown search engine {engine!r}: choose one of {', '.join(ENGINES)}")
    return engine


# (row id, publication date key or None, indexed text in FTS_COLUMNS order)
IndexedRow = tuple[int, str | None, tuple[str, ...]]


class TextIndex:
    """Boolean search over the store's articles. Writes happen inside the store's SQLite transaction (``conn``);
    ``committed`` runs after that transaction commits, ``rolled_back`` after it rolls back."""

    name = ""
    version = ""
    ranks_alone = False  # ``ranked`` scores the best matches without being told the rows wanted
    version_key = ""  # the store meta key holding the version this index was built with

    def add(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        raise NotImplementedError

    def remove(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        """Take these rows out; ``rows`` carry the text they were indexed with (FTS5 needs it, being contentless)."""
        raise NotImplementedError

    def clear(self, conn: sqlite3.Connection) -> None:
        raise NotImplementedError

    def search(self, conn: sqlite3.Connection, node: Node, limit: tuple[int, int]) -> tuple[int, list[str]]:
        """(total count, PMIDs of the ``limit`` = (retmax, retstart) slice), ranked by field-weighted BM25; ties and
        hits without a text term (a bare date range), newest first."""
        raise NotImplementedError

    def score(
        self, conn: sqlite3.Connection, node: Node, ids: dict[int, str], weights: Sequence[float], depth: int
    ) -> dict[str, float]:
        """Field-weighted BM25 (one weight per FTS column) of the rows ``ids`` (row id -> PMID) for ``node``'s
        text terms, higher is better; rows matching none are left out."""
        raise NotImplementedError

    def ranked(
        self, conn: sqlite3.Connection, node: Node, weights: Sequence[float], depth: int
    ) -> dict[int, float] | None:
        """``score``'s scores of every row among the best ``depth`` matches (row id -> score), for an engine that
        ranks without being told the rows wanted, so the pass can start before they are known; None for an engine
        that scores given rows only."""
        return None

    def needs_rebuild(self, conn: sqlite3.Connection) -> bool:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (self.version_key,)).fetchone()
        return row is None or row[0] != self.version

    def built(self, conn: sqlite3.Connection) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (self.version_key, self.version))

    def committed(self, conn: sqlite3.Connection) -> None:
        """The store's transaction committed (FTS5: nothing left to do)."""

    def rolled_back(self) -> None:
        """The store's transaction rolled back (FTS5: SQLite undid everything)."""

    def release(self) -> None:
        """A run of writes ended (an upsert, a delete, a rebuild): let other processes write (FTS5: nothing held)."""

    def close(self) -> None:
        self.release()
