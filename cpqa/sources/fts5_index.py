"""The ``fts5`` engine: SQLite FTS5 inside the store's own file (the contentless ``articles_fts`` table), queried
with the SQL that ``store_search.compile_query`` builds."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from cpqa.sources.boolean import Node
from cpqa.sources.store_search import BM25_WEIGHTS, FTS_COLUMNS, CompiledQuery, compile_query, rank_match
from cpqa.sources.text_index import IndexedRow, TextIndex

_FTS_COLS = ", ".join(FTS_COLUMNS)
_FTS_MARKS = ", ".join("?" * len(FTS_COLUMNS))
_FTS_INSERT = f"INSERT INTO articles_fts(rowid, {_FTS_COLS}) VALUES(?, {_FTS_MARKS})"
_FTS_DELETE = f"INSERT INTO articles_fts(articles_fts, rowid, {_FTS_COLS}) VALUES('delete', ?, {_FTS_MARKS})"
SCHEMA = f"""CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
    {_FTS_COLS}, content='', tokenize='porter unicode61 remove_diacritics 2');"""


class Fts5Index(TextIndex):
    name = "fts5"
    ranks_alone = True
    version = "1"
    version_key = "fts_version"

    def add(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        conn.executemany(_FTS_INSERT, [(rid, *values) for rid, _, values in rows])

    def remove(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        conn.executemany(_FTS_DELETE, [(rid, *values) for rid, _, values in rows])

    def clear(self, conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO articles_fts(articles_fts) VALUES('delete-all')")

    def search(self, conn: sqlite3.Connection, node: Node, limit: tuple[int, int]) -> tuple[int, list[str]]:
        query = compile_query(node)
        count, rows = _run(conn, query, limit)
        return count, [r[0] for r in rows]

    def score(
        self, conn: sqlite3.Connection, node: Node, ids: dict[int, str], weights: Sequence[float], depth: int
    ) -> dict[str, float]:
        ranked = self.ranked(conn, node, weights, depth)
        return {ids[row_id]: score for row_id, score in ranked.items() if row_id in ids}

    def ranked(self, conn: sqlite3.Connection, node: Node, weights: Sequence[float], depth: int) -> dict[int, float]:
        """One ranked pass over the matches (a per-row FTS5 seek costs ~0.5 ms a row): rows outside the best
        ``depth`` matches are left out."""
        match = rank_match(node)
        if not match:
            return {}
        columns = ", ".join(str(float(w)) for w in weights)
        rows = conn.execute(
            f"SELECT rowid, bm25(articles_fts, {columns}) AS score FROM articles_fts "
            "WHERE articles_fts MATCH ? ORDER BY score LIMIT ?",
            (match, depth),
        ).fetchall()
        return {row_id: -score for row_id, score in rows}


def _run(conn: sqlite3.Connection, query: CompiledQuery, limit: tuple[int, int]) -> tuple[int, list[tuple]]:
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    if query.fts_match is not None and not query.date_ranges:
        rows = conn.execute(
            f"SELECT a.pmid FROM (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
            "WHERE articles_fts MATCH ? ORDER BY score, rowid DESC LIMIT ? OFFSET ?) r JOIN articles a ON a.id = r.id "
            "ORDER BY r.score, r.id DESC",
            (query.fts_match, *limit),
        ).fetchall()
        retmax, retstart = limit
        # fewer rows than asked, from the first: they are every match, so no second pass counts them
        counted = len(rows) < retmax and (retstart == 0 or len(rows) > 0)
        count = retstart + len(rows) if counted else _fts_count(conn, query.fts_match)
    elif query.fts_match is not None:  # FTS hits filtered by date: one pass, no set operations
        dates = "".join(" AND a.dp_key BETWEEN ? AND ?" for _ in query.date_ranges)
        bounds = [b for pair in query.date_ranges for b in pair]
        source = (
            "FROM articles_fts JOIN articles a INDEXED BY articles_meta ON a.id = articles_fts.rowid "
            f"WHERE articles_fts MATCH ?{dates}"
        )
        count = conn.execute(f"SELECT count(*) {source}", (query.fts_match, *bounds)).fetchone()[0]
        rows = conn.execute(
            f"SELECT a.pmid, bm25(articles_fts, {weights}) AS score {source} "
            "ORDER BY score, a.id DESC LIMIT ? OFFSET ?",
            (query.fts_match, *bounds, *limit),
        ).fetchall()
    else:
        count = conn.execute(f"SELECT count(*) FROM ({query.hits_sql})", query.params).fetchone()[0]
        if query.rank_match:
            ranked = (
                f"LEFT JOIN (SELECT rowid AS id, bm25(articles_fts, {weights}) AS score FROM articles_fts "
                "WHERE articles_fts MATCH ?) r ON r.id = h.id"
            )
            params = [*query.params, query.rank_match, *limit]
        else:
            ranked, params = "LEFT JOIN (SELECT NULL AS id, NULL AS score) r ON 0", [*query.params, *limit]
        rows = conn.execute(
            f"SELECT a.pmid FROM ({query.hits_sql}) h JOIN articles a INDEXED BY articles_meta ON a.id = h.id {ranked} "
            "ORDER BY r.score IS NULL, r.score, CASE WHEN r.score IS NULL THEN a.dp_key END DESC, a.id DESC "
            "LIMIT ? OFFSET ?",
            params,
        ).fetchall()
    return count, rows


def _fts_count(conn: sqlite3.Connection, match: str) -> int:
    return conn.execute("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH ?", (match,)).fetchone()[0]
