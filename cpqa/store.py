"""The local article store: one SQLite row per article (PubMed record and/or PMC full text), the
records' own XML (zlib) for NCBI-identical efetch answers, and an FTS5 index for Boolean search.

A row holds two parts: the PubMed side (``pm_*``) and the PMC side (``pmc_*``). A PMC article whose
PMID is already stored merges into that row; ``get`` returns both parts merged. The FTS5 table is
contentless, so stored text is not duplicated; its entries are deleted with the values recomputed
from the stored parts (``fts_values`` must stay deterministic; ``FTS_VERSION`` rebuilds the index
when it changes). Thread-safe: one connection per thread (WAL), writes serialised by a lock."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, Literal

from cpqa.boolean import parse, to_query
from cpqa.ncbi.pubmed_xml import article_to_pubmed_xml
from cpqa.store_search import BM25_WEIGHTS, FTS_COLUMNS, SEPARATOR, compile_query, date_key
from cpqa.types import Article, SearchResult

FTS_VERSION = "1"
BATCH_SIZE = 2000
_CHUNK = 500  # ids per IN (...) query
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
CREATE INDEX IF NOT EXISTS articles_dp ON articles(dp_key);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
    {", ".join(FTS_COLUMNS)}, content='', tokenize='porter unicode61 remove_diacritics 2');
"""
_FTS_COLS = ", ".join(FTS_COLUMNS)
_FTS_MARKS = ", ".join("?" * len(FTS_COLUMNS))
_FTS_INSERT = f"INSERT INTO articles_fts(rowid, {_FTS_COLS}) VALUES(?, {_FTS_MARKS})"
_FTS_DELETE = f"INSERT INTO articles_fts(articles_fts, rowid, {_FTS_COLS}) VALUES('delete', ?, {_FTS_MARKS})"
Kind = Literal["pubmed", "pmc"]


@dataclass
class UpsertSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (key or position, reason)

    def merge(self, other: "UpsertSummary") -> None:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.skipped.extend(other.skipped)


class _Row:
    """An article row while a batch is applied; a side's JSON is unpacked only when needed."""

    def __init__(self, id: int, pmid: str | None = None, pmcid: str | None = None,
                 blobs: tuple = (None,) * 6, new: bool = False):
        self.id, self.pmid, self.pmcid, self.new = id, pmid, pmcid, new
        self.packed: dict[str, bytes | None] = {"pubmed": blobs[0], "pmc": blobs[3]}
        self.raw: dict[str, bytes | None] = {"pubmed": blobs[1], "pmc": blobs[4]}
        self.hash: dict[str, str | None] = {"pubmed": blobs[2], "pmc": blobs[5]}
        self._parts: dict[str, Article | None] = {}

    def part(self, kind: Kind) -> Article | None:
        if kind not in self._parts:
            self._parts[kind] = _unpack(self.packed[kind])
        return self._parts[kind]

    def set_part(self, kind: Kind, article: Article, raw: bytes | None, digest: str) -> None:
        self._parts[kind] = article
        self.packed[kind] = _pack(article)
        self.raw[kind] = zlib.compress(raw, 1) if raw is not None else None
        self.hash[kind] = digest

    @property
    def article(self) -> Article:
        return merge_parts(self.part("pubmed"), self.part("pmc"))


def merge_parts(pm: Article | None, pmc: Article | None) -> Article:
    """PubMed metadata first; the PMC side adds full text, article type and whatever PubMed lacks."""
    if pm is None or pmc is None:
        return pm or pmc or Article()
    update = {name: getattr(pm, name) or getattr(pmc, name) for name in (
        "pmcid", "doi", "title", "abstract_sections", "keywords", "journal", "publication_types")}
    if not pm.pub_date and not pm.year:
        update.update(pub_date=pmc.pub_date, year=pmc.year)
    update.update(article_type=pmc.article_type, body_sections=pmc.body_sections)
    return pm.model_copy(update=update)


def fts_values(article: Article) -> tuple[str, ...]:
    """The indexed text of an article, in ``FTS_COLUMNS`` order."""
    sep = f" {SEPARATOR} "
    return (article.title, article.abstract, sep.join(article.keywords),
            sep.join(h.descriptor for h in article.mesh),
            sep.join(h.descriptor for h in article.mesh if h.is_major),
            sep.join(article.publication_types))


def _pack(article: Article) -> bytes:
    return zlib.compress(article.model_dump_json(exclude_defaults=True).encode(), 1)


def _unpack(blob: bytes | None) -> Article | None:
    return Article.model_validate_json(zlib.decompress(blob)) if blob else None


def _kind(article: Article, raw: bytes | None) -> Kind:
    if raw is not None:
        return "pmc" if raw.lstrip()[:8] == b"<article" else "pubmed"
    return "pmc" if article.body_sections or article.article_type else "pubmed"


def _chunks(items: list, size: int = _CHUNK) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class Store:
    """SQLite store at ``path``; use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.RLock()
        conn = self._conn()
        with self._lock:
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key='fts_version'").fetchone()
            if row is None or row[0] != FTS_VERSION:
                self.rebuild_fts()

    # ------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, serialised across this process's threads (and, by SQLite, processes)."""
        conn = self._conn()
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")  # outside the try: a failed BEGIN has nothing to roll back
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

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
            touched: dict[int, tuple[_Row, tuple | None]] = {}
            for article, raw in batch:
                next_id = self._apply(rows, touched, article, raw, kind or _kind(article, raw), next_id, summary)
            self._write(conn, touched.values())
        return summary

    def _load_rows(self, conn: sqlite3.Connection, batch: list[tuple[Article, bytes | None]]) -> dict[str, _Row]:
        """Existing rows for the batch, indexed by 'pmid:N' and 'pmc:PMCN' keys."""
        pmids = sorted({a.pmid for a, _ in batch if a.pmid})
        pmcids = sorted({a.pmcid for a, _ in batch if a.pmcid})
        rows: dict[str, _Row] = {}
        cols = "id, pmid, pmcid, pm_data, pm_raw, pm_hash, pmc_data, pmc_raw, pmc_hash"
        for column, values in (("pmid", pmids), ("pmcid", pmcids)):
            for chunk in _chunks(values):
                marks = ",".join("?" * len(chunk))
                for r in conn.execute(f"SELECT {cols} FROM articles WHERE {column} IN ({marks})", chunk):
                    row = _Row(r[0], r[1], r[2], r[3:])
                    if row.pmid:
                        rows.setdefault(f"pmid:{row.pmid}", row)
                    if row.pmcid and (f"pmc:{row.pmcid}" not in rows or not row.pmid):
                        rows[f"pmc:{row.pmcid}"] = row
        return rows

    def _apply(self, rows: dict[str, _Row], touched: dict, article: Article, raw: bytes | None, kind: Kind,
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
            row = _Row(next_id, new=True)
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

    def _write(self, conn: sqlite3.Connection, touched: Iterable[tuple[_Row, tuple | None]]) -> None:
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

    def rebuild_fts(self) -> None:
        """Re-create the FTS5 index from the stored parts."""
        with self._transaction() as conn:
            conn.execute("INSERT INTO articles_fts(articles_fts) VALUES('delete-all')")
            for batch in self._iter_parts(conn, "WHERE pmid IS NOT NULL", BATCH_SIZE):
                conn.executemany(_FTS_INSERT, [(rid, *fts_values(a)) for rid, a in batch])
            conn.execute("INSERT OR REPLACE INTO meta VALUES('fts_version', ?)", (FTS_VERSION,))

    # ------------------------------------------------------------ reading
    def _iter_parts(self, conn: sqlite3.Connection, where: str, batch_size: int
                    ) -> Iterator[list[tuple[int, Article]]]:
        last = 0
        clause = f"{where} AND id > ?" if where else "WHERE id > ?"
        while True:
            rows = conn.execute(f"SELECT id, pm_data, pmc_data FROM articles {clause} ORDER BY id LIMIT ?",
                                (last, batch_size)).fetchall()
            if not rows:
                return
            yield [(r[0], merge_parts(_unpack(r[1]), _unpack(r[2]))) for r in rows]
            last = rows[-1][0]

    def get(self, pmid: str) -> Article | None:
        return self.get_many([pmid]).get(str(pmid))

    def get_many(self, pmids: Iterable[str]) -> dict[str, Article]:
        return self._articles_by("pmid", [str(p) for p in pmids])

    def get_by_pmcid(self, pmcid: str) -> Article | None:
        value = pmcid if str(pmcid).upper().startswith("PMC") else f"PMC{pmcid}"
        return self._articles_by("pmcid", [value]).get(value)

    def _articles_by(self, column: str, keys: list[str]) -> dict[str, Article]:
        found: dict[str, Article] = {}
        conn = self._conn()
        for chunk in _chunks(sorted(set(keys))):
            marks = ",".join("?" * len(chunk))
            for key, pm, pmc in conn.execute(
                    f"SELECT {column}, pm_data, pmc_data FROM articles WHERE {column} IN ({marks}) "
                    "ORDER BY pmid IS NULL", chunk):
                found.setdefault(key, merge_parts(_unpack(pm), _unpack(pmc)))
        return found

    def raw_xml(self, pmids: Iterable[str]) -> dict[str, bytes]:
        """Each record's PubMed XML as stored (NCBI's own bytes), or rendered from the article when
        the record arrived without XML."""
        found: dict[str, bytes] = {}
        conn = self._conn()
        for chunk in _chunks(sorted({str(p) for p in pmids})):
            marks = ",".join("?" * len(chunk))
            for pmid, raw, pm, pmc in conn.execute(
                    f"SELECT pmid, pm_raw, pm_data, pmc_data FROM articles WHERE pmid IN ({marks})", chunk):
                found[pmid] = zlib.decompress(raw) if raw else article_to_pubmed_xml(
                    merge_parts(_unpack(pm), _unpack(pmc)))
        return found

    def raw_pmc_xml(self, pmcids: Iterable[str]) -> dict[str, bytes]:
        """Each PMC article's JATS as stored, keyed by "PMC..." id; ids without full text are absent."""
        wanted = sorted({p if str(p).upper().startswith("PMC") else f"PMC{p}" for p in pmcids})
        found: dict[str, bytes] = {}
        conn = self._conn()
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            for pmcid, raw in conn.execute(f"SELECT pmcid, pmc_raw FROM articles WHERE pmcid IN ({marks}) "
                                           "AND pmc_raw IS NOT NULL", chunk):
                found.setdefault(pmcid, zlib.decompress(raw))
        return found

    def count(self) -> int:
        return self._conn().execute("SELECT count(*) FROM articles").fetchone()[0]

    def pmids(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT pmid FROM articles WHERE pmid IS NOT NULL ORDER BY id")]

    def iter_articles(self, batch_size: int = 1000) -> Iterator[Article]:
        for batch in self._iter_parts(self._conn(), "", batch_size):
            for _, article in batch:
                yield article

    # ------------------------------------------------------------ search
    def search(self, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None,
               maxdate: str | None = None) -> SearchResult:
        """PubMed Boolean search: total count and PMIDs ranked by BM25 (ties: latest stored first; hits
        without a text term, e.g. a bare date range, newest publication first). Raises
        ``BooleanQueryError`` for a malformed query."""
        node = parse(term)
        query = compile_query(node, mindate, maxdate)
        conn = self._conn()
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        limit = (max(0, int(retmax)), max(0, int(retstart)))
        if query.fts_only is not None:
            count = conn.execute("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH ?",
                                 (query.fts_only,)).fetchone()[0]
            rows = conn.execute(
                f"SELECT a.pmid FROM (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
                "WHERE articles_fts MATCH ? ORDER BY score, rowid DESC LIMIT ? OFFSET ?) r JOIN articles a ON a.id = r.id "
                "ORDER BY r.score, r.id DESC", (query.fts_only, *limit)).fetchall()
        else:
            count = conn.execute(f"SELECT count(*) FROM ({query.hits_sql})", query.params).fetchone()[0]
            if query.rank_match:
                ranked = (f"LEFT JOIN (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
                          "WHERE articles_fts MATCH ?) r ON r.id = h.id")
                params = [*query.params, query.rank_match, *limit]
            else:
                ranked, params = "LEFT JOIN (SELECT NULL AS id, NULL AS score) r ON 0", [*query.params, *limit]
            rows = conn.execute(
                f"SELECT a.pmid FROM ({query.hits_sql}) h JOIN articles a ON a.id = h.id {ranked} "
                "ORDER BY r.score IS NULL, r.score, CASE WHEN r.score IS NULL THEN a.dp_key END DESC, a.id DESC "
                "LIMIT ? OFFSET ?", params).fetchall()
        return SearchResult(count=count, pmids=[r[0] for r in rows], query_translation=to_query(node))
