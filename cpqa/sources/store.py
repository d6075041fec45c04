"""The local article store: one SQLite row per article (PubMed record and/or PMC full text), the
records' own XML (zlib) for NCBI-identical efetch answers, and an FTS5 index for Boolean search.

A row holds two parts: the PubMed side (``pm_*``) and the PMC side (``pmc_*``). A PMC article whose
PMID is already stored merges into that row; ``get`` returns both parts merged. The FTS5 table is
contentless, so stored text is not duplicated; its entries are deleted with the values recomputed
from the stored parts (``fts_values`` must stay deterministic; ``FTS_VERSION`` rebuilds the index
when it changes). Thread-safe: pooled connections (WAL) handed to one thread at a time, multi-statement
reads in one snapshot, writes serialised by a lock (and by SQLite across processes)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import zlib
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from cpqa.sources.boolean import parse, to_query
from cpqa.sources.ncbi.pubmed_xml import article_to_pubmed_xml
from cpqa.sources.ncbi.xmlio import as_pmcid
from cpqa.sources.store_rows import Kind, Row, UpsertSummary, fts_values, merge_parts, record_kind, unpack
from cpqa.sources.store_search import BM25_WEIGHTS, FTS_COLUMNS, CompiledQuery, compile_query, date_key
from cpqa.types import Article, SearchResult

__all__ = ["Store", "UpsertSummary", "Kind"]

FTS_VERSION = "1"
BATCH_SIZE = 2000
_CHUNK = 500  # ids per IN (...) query
_MAX_IDLE = 8  # pooled connections kept open
_FTS_COLS = ", ".join(FTS_COLUMNS)
_SCHEMA = f"""
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
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
    {_FTS_COLS}, content='', tokenize='porter unicode61 remove_diacritics 2');
"""
_FTS_MARKS = ", ".join("?" * len(FTS_COLUMNS))
_FTS_INSERT = f"INSERT INTO articles_fts(rowid, {_FTS_COLS}) VALUES(?, {_FTS_MARKS})"
_FTS_DELETE = f"INSERT INTO articles_fts(articles_fts, rowid, {_FTS_COLS}) VALUES('delete', ?, {_FTS_MARKS})"


def _chunks(items: list, size: int = _CHUNK) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class StoreDamaged(sqlite3.DatabaseError):
    """The store file is not a usable SQLite database; the message names the file and the way out."""


class Store:
    """SQLite store at ``path``; use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._idle: list[sqlite3.Connection] = []  # pooled connections: threads come and go (HTTP server)
        self._pool_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        try:
            with self._conn() as conn:
                conn.executescript(_SCHEMA)
                row = conn.execute("SELECT value FROM meta WHERE key='fts_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(f"the evidence store {self.path} is damaged ({exc}): move it aside and ingest again "
                               "(`cpqa ingest pubmed FILE...`, then `cpqa index build`), or restore it from a "
                               "backup") from None
        if row is None or row[0] != FTS_VERSION:
            self.rebuild_fts()

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
                raise

    def close(self) -> None:
        """Close idle connections; ones in use close when their block ends."""
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

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
        cols = "id, pmid, pmcid, pm_data, pm_raw, pm_hash, pmc_data, pmc_raw, pmc_hash"
        for column, values in (("pmid", pmids), ("pmcid", pmcids)):
            for chunk in _chunks(values):
                marks = ",".join("?" * len(chunk))
                for r in conn.execute(f"SELECT {cols} FROM articles WHERE {column} IN ({marks})", chunk):
                    row = Row(r[0], r[1], r[2], r[3:])
                    if row.pmid:
                        rows.setdefault(f"pmid:{row.pmid}", row)
                    if row.pmcid and (f"pmc:{row.pmcid}" not in rows or not row.pmid):
                        rows[f"pmc:{row.pmcid}"] = row
        return rows

    def _apply(self, rows: dict[str, Row], touched: dict, article: Article, raw: bytes | None, kind: Kind,
               next_id: int, summary: UpsertSummary) -> int:
        if not article.pmid and not (kind == "pmc" and article.pmcid):
            summary.skipped.append((article.key or article.title[:60] or "(untitled)",
                                    "no PMID" if kind == "pubmed" else "no PMID or PMCID"))
            return next_id
        row = rows.get(f"pmid:{article.pmid}") if article.pmid else None
        if row is None and article.pmcid:
            candidate = rows.get(f"pmc:{article.pmcid}")
            if candidate is not None and (candidate.pmid is None or candidate.pmid == article.pmid or not article.pmid):
                row = candidate
        digest = hashlib.sha1(raw if raw is not None else article.model_dump_json().encode()).hexdigest()
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
        upserts, deletes, inserts = [], [], []
        for row, old_fts in touched:
            merged = row.article
            dp = date_key(merged.pub_date) if merged.pub_date else (f"{merged.year}0000" if merged.year else None)
            upserts.append((row.id, row.pmid, row.pmcid, dp, row.packed["pubmed"], row.raw["pubmed"],
                            row.hash["pubmed"], row.packed["pmc"], row.raw["pmc"], row.hash["pmc"], now))
            if old_fts is not None:
                deletes.append((row.id, *old_fts))
            if row.pmid:
                inserts.append((row.id, *fts_values(merged)))
        conn.executemany(_FTS_DELETE, deletes)
        conn.executemany("INSERT OR REPLACE INTO articles VALUES (?,?,?,?,?,?,?,?,?,?,?)", upserts)
        conn.executemany(_FTS_INSERT, inserts)

    def delete(self, pmids: Iterable[str]) -> int:
        """Remove the rows of these PMIDs (with any PMC full text merged into them); returns how many."""
        wanted = sorted({str(p) for p in pmids})
        removed = 0
        with self._transaction() as conn:
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(f"SELECT id, pm_data, pmc_data FROM articles WHERE pmid IN ({marks})",
                                    chunk).fetchall()
                conn.executemany(_FTS_DELETE, [(rid, *fts_values(merge_parts(unpack(pm), unpack(pmc))))
                                               for rid, pm, pmc in rows])
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

    def rebuild_fts(self) -> None:
        """Re-create the FTS5 index from the stored parts."""
        with self._transaction() as conn:
            conn.execute("INSERT INTO articles_fts(articles_fts) VALUES('delete-all')")
            last = 0
            while batch := list(self._parts_after(conn, "WHERE pmid IS NOT NULL", last, BATCH_SIZE)):
                conn.executemany(_FTS_INSERT, [(rid, *fts_values(a)) for rid, a in batch])
                last = batch[-1][0]
            conn.execute("INSERT OR REPLACE INTO meta VALUES('fts_version', ?)", (FTS_VERSION,))

    # ------------------------------------------------------------ reading
    @staticmethod
    def _parts_after(conn: sqlite3.Connection, where: str, last: int, limit: int) -> Iterator[tuple[int, Article]]:
        """Up to ``limit`` (id, merged article) rows with id > ``last``, restricted by ``where``."""
        clause = f"{where} AND id > ?" if where else "WHERE id > ?"
        for rid, pm, pmc in conn.execute(f"SELECT id, pm_data, pmc_data FROM articles {clause} ORDER BY id LIMIT ?",
                                         (last, limit)).fetchall():
            yield rid, merge_parts(unpack(pm), unpack(pmc))

    def get(self, pmid: str) -> Article | None:
        return self.get_many([pmid]).get(str(pmid))

    def get_many(self, pmids: Iterable[str]) -> dict[str, Article]:
        return self._articles_by("pmid", [str(p) for p in pmids])

    def get_by_pmcid(self, pmcid: str) -> Article | None:
        value = as_pmcid(pmcid)
        return self._articles_by("pmcid", [value]).get(value)

    def _articles_by(self, column: str, keys: list[str]) -> dict[str, Article]:
        found: dict[str, Article] = {}
        with self._read() as conn:
            for chunk in _chunks(sorted(set(keys))):
                marks = ",".join("?" * len(chunk))
                for key, pm, pmc in conn.execute(
                        f"SELECT {column}, pm_data, pmc_data FROM articles WHERE {column} IN ({marks}) "
                        "ORDER BY pmid IS NULL", chunk):
                    found.setdefault(key, merge_parts(unpack(pm), unpack(pmc)))
        return found

    def raw_xml(self, pmids: Iterable[str]) -> dict[str, bytes]:
        """Each record's PubMed XML as stored (NCBI's own bytes), or rendered from the article when
        the record arrived without XML."""
        found: dict[str, bytes] = {}
        with self._read() as conn:
            for chunk in _chunks(sorted({str(p) for p in pmids})):
                marks = ",".join("?" * len(chunk))
                for pmid, raw, pm, pmc in conn.execute(
                        f"SELECT pmid, pm_raw, pm_data, pmc_data FROM articles WHERE pmid IN ({marks})", chunk):
                    found[pmid] = zlib.decompress(raw) if raw else article_to_pubmed_xml(
                        merge_parts(unpack(pm), unpack(pmc)))
        return found

    def raw_pmc_xml(self, pmcids: Iterable[str]) -> dict[str, bytes]:
        """Each PMC article's JATS as stored, keyed by "PMC..." id; ids without full text are absent."""
        wanted = sorted({as_pmcid(p) for p in pmcids})
        found: dict[str, bytes] = {}
        with self._read() as conn:
            for chunk in _chunks(wanted):
                marks = ",".join("?" * len(chunk))
                for pmcid, raw in conn.execute(f"SELECT pmcid, pmc_raw FROM articles WHERE pmcid IN ({marks}) "
                                               "AND pmc_raw IS NOT NULL", chunk):
                    found.setdefault(pmcid, zlib.decompress(raw))
        return found

    def count(self) -> int:
        with self._conn() as conn:
            return conn.execute("SELECT count(*) FROM articles").fetchone()[0]

    def last_row_id(self) -> int:
        """The newest row's id (0 when empty): with ``count``, tells derived indexes whether records were added."""
        with self._conn() as conn:
            return conn.execute("SELECT coalesce(max(id), 0) FROM articles").fetchone()[0]

    def pmids(self) -> list[str]:
        with self._conn() as conn:
            return [r[0] for r in conn.execute("SELECT pmid FROM articles WHERE pmid IS NOT NULL ORDER BY id")]

    def iter_articles(self, batch_size: int = 1000) -> Iterator[Article]:
        """Every article in storage order, read in batches (each batch its own short read)."""
        last = 0
        while True:
            with self._conn() as conn:
                batch = list(self._parts_after(conn, "", last, batch_size))
            if not batch:
                return
            yield from (article for _, article in batch)
            last = batch[-1][0]

    # ------------------------------------------------------------ search
    def search(self, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None,
               maxdate: str | None = None) -> SearchResult:
        """PubMed Boolean search: total count and PMIDs ranked by BM25 (ties: latest stored first; hits
        without a text term, e.g. a bare date range, newest publication first). Raises
        ``BooleanQueryError`` for a malformed query."""
        node = parse(term)
        query = compile_query(node, mindate, maxdate)
        limit = (max(0, int(retmax)), max(0, int(retstart)))
        with self._read() as conn:
            count, pmids = self._run_search(conn, query, limit)
        return SearchResult(count=count, pmids=pmids, query_translation=to_query(node))

    def score(self, term: str, pmids: Sequence[str], weights: Sequence[float] = BM25_WEIGHTS,
              depth: int = 10_000) -> dict[str, float]:
        """Field-weighted BM25 of each of ``pmids`` for the text terms of ``term`` (higher is better; one weight
        per FTS column, ``FTS_COLUMNS`` order). One ranked pass over the matches (a per-row FTS5 seek costs ~0.5 ms
        a row): PMIDs outside the best ``depth`` matches, or matching none of the terms, are left out."""
        rank_match = compile_query(parse(term)).rank_match
        wanted = set(pmids)
        if not rank_match or not wanted:
            return {}
        columns = ", ".join(str(float(w)) for w in weights)
        with self._read() as conn:
            ids = {row_id: pmid for chunk in _chunks(sorted(wanted)) for row_id, pmid in conn.execute(
                f"SELECT id, pmid FROM articles WHERE pmid IN ({', '.join('?' * len(chunk))})", chunk)}
            rows = conn.execute(f"SELECT rowid, bm25(articles_fts, {columns}) AS score FROM articles_fts "
                                "WHERE articles_fts MATCH ? ORDER BY score LIMIT ?", (rank_match, depth)).fetchall()
        return {ids[row_id]: -score for row_id, score in rows if row_id in ids}

    @staticmethod
    def _run_search(conn: sqlite3.Connection, query: CompiledQuery, limit: tuple[int, int]) -> tuple[int, list[str]]:
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        if query.fts_match is not None and not query.date_ranges:
            count = conn.execute("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH ?",
                                 (query.fts_match,)).fetchone()[0]
            rows = conn.execute(
                f"SELECT a.pmid FROM (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
                "WHERE articles_fts MATCH ? ORDER BY score, rowid DESC LIMIT ? OFFSET ?) r JOIN articles a ON a.id = r.id "
                "ORDER BY r.score, r.id DESC", (query.fts_match, *limit)).fetchall()
        elif query.fts_match is not None:  # FTS hits filtered by date: one pass, no set operations
            dates = "".join(" AND a.dp_key BETWEEN ? AND ?" for _ in query.date_ranges)
            bounds = [b for pair in query.date_ranges for b in pair]
            source = ("FROM articles_fts JOIN articles a INDEXED BY articles_meta ON a.id = articles_fts.rowid "
                      f"WHERE articles_fts MATCH ?{dates}")
            count = conn.execute(f"SELECT count(*) {source}", (query.fts_match, *bounds)).fetchone()[0]
            rows = conn.execute(f"SELECT a.pmid, bm25(articles_fts, {weights}) AS score {source} "
                                "ORDER BY score, a.id DESC LIMIT ? OFFSET ?",
                                (query.fts_match, *bounds, *limit)).fetchall()
        else:
            count = conn.execute(f"SELECT count(*) FROM ({query.hits_sql})", query.params).fetchone()[0]
            if query.rank_match:
                ranked = (f"LEFT JOIN (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
                          "WHERE articles_fts MATCH ?) r ON r.id = h.id")
                params = [*query.params, query.rank_match, *limit]
            else:
                ranked, params = "LEFT JOIN (SELECT NULL AS id, NULL AS score) r ON 0", [*query.params, *limit]
            rows = conn.execute(
                f"SELECT a.pmid FROM ({query.hits_sql}) h JOIN articles a INDEXED BY articles_meta ON a.id = h.id {ranked} "
                "ORDER BY r.score IS NULL, r.score, CASE WHEN r.score IS NULL THEN a.dp_key END DESC, a.id DESC "
                "LIMIT ? OFFSET ?", params).fetchall()
        return count, [r[0] for r in rows]
