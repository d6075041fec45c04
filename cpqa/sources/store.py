"""The local article store: one SQLite row per article (PubMed record and/or PMC full text), the
records' own XML (zlib) for NCBI-identical efetch answers, and a Boolean search index (``text_index``: SQLite
FTS5 in the same file, or tantivy beside it).

A row holds two parts: the PubMed side (``pm_*``) and the PMC side (``pmc_*``). A PMC article whose
PMID is already stored merges into that row; ``get`` returns both parts merged. The search index holds no
stored text; FTS5's entries are deleted with the values recomputed from the stored parts (``fts_values`` must
stay deterministic; an index's version changing rebuilds it). Thread-safe: pooled connections (WAL) handed to
one thread at a time, multi-statement reads in one snapshot, writes serialised by a lock (and by SQLite across
processes)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from cpqa.sources.boolean import parse, to_query
from cpqa.sources.clean_text import CLEANING
from cpqa.sources.store_reads import StoreReads, id_chunks
from cpqa.sources.store_rows import Kind, Row, UpsertSummary, fts_values, merge_parts, record_kind, unpack
from cpqa.sources.fts5_index import SCHEMA as FTS5_SCHEMA, Fts5Index
from cpqa.sources.store_search import BM25_WEIGHTS, date_key, restrict_dates
from cpqa.sources.text_index import IndexedRow, TextIndex, check_engine
from cpqa.types import Article, SearchResult

__all__ = ["Store", "UpsertSummary", "Kind"]

BATCH_SIZE = 2000
_CHUNK = 500  # ids per IN (...) query
_MAX_IDLE = 8  # pooled connections kept open
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS articles (
    id INTEGER PRIMARY KEY,
    pmid TEXT UNIQUE,
    pmcid TEXT,
    dp_key TEXT,            -- publication date as YYYYMMDD, 00 for missing parts
    pm_data BLOB, pm_raw BLOB, pm_hash TEXT,       -- zlib JSON / zlib XML / content hash
    pmc_data BLOB, pmc_raw BLOB, pmc_hash TEXT,
    updated REAL
);
CREATE INDEX IF NOT EXISTS articles_pmcid ON articles(pmcid);
DROP INDEX IF EXISTS articles_dp;
CREATE INDEX IF NOT EXISTS articles_dp_pmid ON articles(dp_key) WHERE pmid IS NOT NULL;  -- covers [dp] scans
-- Covers id -> (date, PMID) lookups, so filtering and ranking never read the rows' blobs.
CREATE INDEX IF NOT EXISTS articles_meta ON articles(id, dp_key, pmid);
-- When each row last changed: derived indexes (BM25, the vectors) find the records revised since they were built.
CREATE INDEX IF NOT EXISTS articles_updated ON articles(updated);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
    + FTS5_SCHEMA
)


class StoreDamaged(sqlite3.DatabaseError):
    """The store file is not a usable SQLite database; the message names the file and the way out."""


class Store(StoreReads):
    """SQLite store at ``path``; use as a context manager or call ``close()``. ``engine`` (``fts5`` or
    ``tantivy``) chooses the search index of a new store; given for an existing store that has the other one, the
    index is rebuilt in the engine asked for. Left out, a store keeps the engine it has (``fts5`` when new)."""

    def __init__(self, path: str | Path, engine: str | None = None):
        if engine is not None:
            check_engine(engine)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._idle: list[sqlite3.Connection] = []  # pooled connections: threads come and go (HTTP server)
        self._pool_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        try:
            with self._conn() as conn:
                conn.executescript(_SCHEMA)
                row = conn.execute("SELECT value FROM meta WHERE key='search_engine'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(
                f"the evidence store {self.path} is damaged ({exc}): move it aside and ingest again "
                "(`cpqa ingest pubmed FILE...`, then `cpqa index build`), or restore it from a "
                "backup"
            ) from None
        had = row[0] if row else "fts5"
        self.engine = engine or had
        self._text = open_text_index(self.engine, self.path)
        with self._conn() as conn:
            stale = had != self.engine or self._text.needs_rebuild(conn)
        if stale:
            self.rebuild_index(previous=had)

    # ------------------------------------------------------------ connections
    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """A connection for this thread's exclusive use until the block ends."""
        with self._pool_lock:
            if self._closed:
                raise RuntimeError(f"store {self.path} is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        try:
            yield conn
        finally:
            with self._pool_lock:
                keep = not self._closed and len(self._idle) < _MAX_IDLE
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: several statements see one snapshot."""
        with self._conn() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, serialised across this process's threads (and, by SQLite, processes)."""
        with self._write_lock, self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")  # outside the try: a failed BEGIN has nothing to roll back
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                self._text.rolled_back()
                raise
            self._text.committed(conn)

    @contextmanager
    def _writes(self) -> Iterator[None]:
        """A run of write transactions; at its end the search index lets go of what it holds for writing."""
        try:
            yield
        finally:
            with self._write_lock:
                self._text.release()

    def close(self) -> None:
        """Close idle connections; ones in use close when their block ends."""
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        self._text.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ writing
    def upsert(self, records: Iterable[tuple[Article, bytes | None]], kind: Kind | None = None) -> UpsertSummary:
        """Add or update records in transactions of ``BATCH_SIZE``. ``kind`` says which side of the
        row a record fills; by default it is read from the raw XML (``<article>`` = PMC)."""
        summary = UpsertSummary()
        iterator = iter(records)
        with self._writes():
            while batch := list(islice(iterator, BATCH_SIZE)):
                summary.merge(self._upsert_batch(batch, kind))
        return summary

    def _upsert_batch(self, batch: list[tuple[Article, bytes | None]], kind: Kind | None) -> UpsertSummary:
        summary = UpsertSummary()
        with self._transaction() as conn:
            rows = self._load_rows(conn, batch)
            next_id = (conn.execute("SELECT max(id) FROM articles").fetchone()[0] or 0) + 1
            touched: dict[int, tuple[Row, tuple | None]] = {}
            for article, raw in batch:
                next_id = self._apply(rows, touched, article, raw, kind or record_kind(article, raw), next_id, summary)
            self._write(conn, touched.values())
        return summary

    def _load_rows(self, conn: sqlite3.Connection, batch: list[tuple[Article, bytes | None]]) -> dict[str, Row]:
        """Existing rows for the batch, indexed by 'pmid:N' and 'pmc:PMCN' keys."""
        pmids = sorted({a.pmid for a, _ in batch if a.pmid})
        pmcids = sorted({a.pmcid for a, _ in batch if a.pmcid})
        rows: dict[str, Row] = {}
        cols = "id, pmid, pmcid, pm_data, pm_raw, pm_hash, pmc_data, pmc_raw, pmc_hash, updated"
        for column, values in (("pmid", pmids), ("pmcid", pmcids)):
            for chunk in id_chunks(values):
                marks = ",".join("?" * len(chunk))
                for r in conn.execute(f"SELECT {cols} FROM articles WHERE {column} IN ({marks})", chunk):
                    row = Row(r[0], r[1], r[2], r[3:9], updated=r[9])
                    if row.pmid:
                        rows.setdefault(f"pmid:{row.pmid}", row)
                    if row.pmcid and (f"pmc:{row.pmcid}" not in rows or not row.pmid):
                        rows[f"pmc:{row.pmcid}"] = row
        return rows

    def _apply(
        self,
        rows: dict[str, Row],
        touched: dict,
        article: Article,
        raw: bytes | None,
        kind: Kind,
        next_id: int,
        summary: UpsertSummary,
    ) -> int:
        if not article.pmid and not (kind == "pmc" and article.pmcid):
            summary.skipped.append(
                (
                    article.key or article.title[:60] or "(untitled)",
                    "no PMID" if kind == "pubmed" else "no PMID or PMCID",
                )
            )
            return next_id
        row = rows.get(f"pmid:{article.pmid}") if article.pmid else None
        if row is None and article.pmcid:
            candidate = rows.get(f"pmc:{article.pmcid}")
            if candidate is not None and (candidate.pmid is None or candidate.pmid == article.pmid or not article.pmid):
                row = candidate
        # The cleaning version is part of the digest: records parsed under another one count as changed, so
        # re-ingesting a file cleans them (cpqa.sources.clean_text).
        digest = hashlib.sha1(
            CLEANING.encode() + (raw if raw is not None else article.model_dump_json().encode())
        ).hexdigest()
        if row is None:
            row = Row(next_id, new=True)
            next_id += 1
            summary.added += 1
        else:
            if row.hash[kind] == digest or (raw is None and row.raw[kind] is not None):
                summary.unchanged += 1
                return next_id
            summary.updated += 1
        if row.id not in touched:  # remember what the FTS index holds for this row before the change
            touched[row.id] = (row, None if row.new or not row.pmid else fts_values(row.article))
        row.set_part(kind, article, raw, digest)
        merged = row.article
        row.pmid, row.pmcid = merged.pmid, merged.pmcid
        for key in (f"pmid:{row.pmid}" if row.pmid else None, f"pmc:{row.pmcid}" if row.pmcid else None):
            if key:
                rows[key] = row
        return next_id

    def _write(self, conn: sqlite3.Connection, touched: Iterable[tuple[Row, tuple | None]]) -> None:
        now = time.time()
        upserts: list[tuple] = []
        deletes: list[IndexedRow] = []
        inserts: list[IndexedRow] = []
        for row, old_fts in touched:
            merged = row.article
            dp = _dp_key(merged)
            new_fts = fts_values(merged) if row.pmid else None
            # when the record's text last changed: a row re-read under a new cleaning version with the same text
            # keeps its time, so the derived indexes (BM25, the vectors) do not embed it again
            stamp = row.updated if old_fts is not None and old_fts == new_fts and row.updated else now
            upserts.append(
                (
                    row.id,
                    row.pmid,
                    row.pmcid,
                    dp,
                    row.packed["pubmed"],
                    row.raw["pubmed"],
                    row.hash["pubmed"],
                    row.packed["pmc"],
                    row.raw["pmc"],
                    row.hash["pmc"],
                    stamp,
                )
            )
            if old_fts is not None:
                deletes.append((row.id, None, old_fts))
            if new_fts is not None:
                inserts.append((row.id, dp, new_fts))
        self._text.remove(conn, deletes)
        conn.executemany("INSERT OR REPLACE INTO articles VALUES (?,?,?,?,?,?,?,?,?,?,?)", upserts)
        self._text.add(conn, inserts)

    def delete(self, pmids: Iterable[str]) -> int:
        """Remove the rows of these PMIDs (with any PMC full text merged into them); returns how many."""
        wanted = sorted({str(p) for p in pmids})
        removed = 0
        with self._writes(), self._transaction() as conn:
            for chunk in id_chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT id, pm_data, pmc_data FROM articles WHERE pmid IN ({marks})", chunk
                ).fetchall()
                self._text.remove(
                    conn, [(rid, None, fts_values(merge_parts(unpack(pm), unpack(pmc)))) for rid, pm, pmc in rows]
                )
                conn.executemany("DELETE FROM articles WHERE id = ?", [(r[0],) for r in rows])
                removed += len(rows)
        return removed

    def meta(self, key: str) -> str | None:
        """A value the store keeps about itself (the FTS version, the files ``cpqa ingest`` finished)."""
        with self._read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def rebuild_index(self, previous: str | None = None) -> None:
        """Re-create the search index from the stored parts; ``previous``, the engine that held it until now, is
        emptied (so a store converted to tantivy does not keep FTS5 postings too)."""
        with self._writes(), self._transaction() as conn:
            if previous and previous != self.engine:
                old = open_text_index(previous, self.path)
                try:
                    old.clear(conn)
                    conn.execute("DELETE FROM meta WHERE key = ?", (old.version_key,))
                finally:
                    old.close()
            self._text.clear(conn)
            last = 0
            while batch := list(self._parts_after(conn, "WHERE pmid IS NOT NULL", last, BATCH_SIZE)):
                self._text.add(conn, [(rid, _dp_key(a), fts_values(a)) for rid, a in batch])
                last = batch[-1][0]
            self._text.built(conn)
            conn.execute("INSERT OR REPLACE INTO meta VALUES('search_engine', ?)", (self.engine,))

    # ------------------------------------------------------------ search
    def search(
        self, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None, maxdate: str | None = None
    ) -> SearchResult:
        """PubMed Boolean search: total count and PMIDs ranked by BM25 (ties: latest stored first; hits
        without a text term, e.g. a bare date range, newest publication first). Raises
        ``BooleanQueryError`` for a malformed query or date."""
        node = restrict_dates(parse(term), mindate, maxdate)
        limit = (max(0, int(retmax)), max(0, int(retstart)))
        with self._read() as conn:
            count, pmids = self._text.search(conn, node, limit)
        return SearchResult(count=count, pmids=pmids, query_translation=to_query(node))

    def score(
        self, term: str, pmids: Sequence[str], weights: Sequence[float] = BM25_WEIGHTS, depth: int = 10_000
    ) -> dict[str, float]:
        """Field-weighted BM25 of each of ``pmids`` for the text terms of ``term`` (higher is better; one weight
        per FTS column, ``FTS_COLUMNS`` order). PMIDs matching none of the terms are left out, and on FTS5 those
        outside the best ``depth`` matches too."""
        return self.score_soon(term, weights, depth, start=False)(pmids)

    def score_soon(
        self, term: str, weights: Sequence[float] = BM25_WEIGHTS, depth: int = 10_000, start: bool = True
    ) -> Callable[[Sequence[str]], dict[str, float]]:
        """``score(term, pmids, weights, depth)`` as a function of ``pmids``, its ranked pass begun now in a thread of
        its own where the engine ranks without the rows wanted (FTS5): E2 scores its ladder's union while the ladder
        runs."""
        node = parse(term)

        def ranked() -> dict[int, float] | None:
            with self._read() as conn:
                return self._text.ranked(conn, node, weights, depth)

        early = None
        if start and self._text.ranks_alone:  # tantivy scores the rows asked for, once they are known
            pool = ThreadPoolExecutor(max_workers=1)
            early = pool.submit(ranked)
            pool.shutdown(wait=False)  # its thread ends with the pass; nobody waits here

        def scores(pmids: Sequence[str]) -> dict[str, float]:
            if not (wanted := sorted(set(pmids))):
                return {}
            with self._read() as conn:
                ids = self._row_ids(conn, wanted)
                rows = early.result() if early is not None else self._text.ranked(conn, node, weights, depth)
                if rows is None:
                    return self._text.score(conn, node, ids, weights, depth)
            return {pmid: rows[row_id] for row_id, pmid in ids.items() if row_id in rows}

        return scores


def open_text_index(engine: str, store_path: Path) -> TextIndex:
    """The store's search index in ``engine`` (tantivy's folder sits beside the store file)."""
    if engine == "tantivy":
        from cpqa.sources.tantivy_index import TantivyIndex

        return TantivyIndex(store_path.with_suffix(".tantivy"))
    return Fts5Index()


def _dp_key(article: Article) -> str | None:
    """The publication date as ``YYYYMMDD`` (00 for missing parts), or None."""
    return date_key(article.pub_date) if article.pub_date else (f"{article.year}0000" if article.year else None)
