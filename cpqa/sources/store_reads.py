"""Reading the local store: articles by PMID or PMCID (both parts merged), the records' own XML, counts and
storage-order iteration. A mixin of ``Store``, which supplies the pooled connections (``_read``: one snapshot for
several statements; ``_conn``: one statement)."""

from __future__ import annotations

import sqlite3
import zlib
from contextlib import AbstractContextManager
from typing import Callable, Iterable, Iterator

from cpqa.sources.ncbi.pubmed_xml import article_to_pubmed_xml
from cpqa.sources.ncbi.xmlio import as_pmcid
from cpqa.sources.store_rows import merge_parts, unpack
from cpqa.types import Article

_CHUNK = 500  # ids per IN (...) query


def id_chunks(items: list, size: int = _CHUNK) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class StoreReads:
    _read: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _conn: Callable[[], AbstractContextManager[sqlite3.Connection]]

    @staticmethod
    def _parts_after(conn: sqlite3.Connection, where: str, last: int, limit: int) -> Iterator[tuple[int, Article]]:
        """Up to ``limit`` (id, merged article) rows with id > ``last``, restricted by ``where``."""
        clause = f"{where} AND id > ?" if where else "WHERE id > ?"
        for rid, pm, pmc in conn.execute(
            f"SELECT id, pm_data, pmc_data FROM articles {clause} ORDER BY id LIMIT ?", (last, limit)
        ).fetchall():
            yield rid, merge_parts(unpack(pm), unpack(pmc))

    @staticmethod
    def _row_ids(conn: sqlite3.Connection, pmids: list[str]) -> dict[int, str]:
        """Row id -> PMID of the stored ``pmids``."""
        return {
            row_id: pmid
            for chunk in id_chunks(pmids)
            for row_id, pmid in conn.execute(
                f"SELECT id, pmid FROM articles WHERE pmid IN ({', '.join('?' * len(chunk))})", chunk
            )
        }

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
            for chunk in id_chunks(sorted(set(keys))):
                marks = ",".join("?" * len(chunk))
                for key, pm, pmc in conn.execute(
                    f"SELECT {column}, pm_data, pmc_data FROM articles WHERE {column} IN ({marks}) "
                    "ORDER BY pmid IS NULL",
                    chunk,
                ):
                    found.setdefault(key, merge_parts(unpack(pm), unpack(pmc)))
        return found

    def raw_xml(self, pmids: Iterable[str]) -> dict[str, bytes]:
        """Each record's PubMed XML as stored (NCBI's own bytes), or rendered from the article when
        the record arrived without XML."""
        found: dict[str, bytes] = {}
        with self._read() as conn:
            for chunk in id_chunks(sorted({str(p) for p in pmids})):
                marks = ",".join("?" * len(chunk))
                for pmid, raw, pm, pmc in conn.execute(
                    f"SELECT pmid, pm_raw, pm_data, pmc_data FROM articles WHERE pmid IN ({marks})", chunk
                ):
                    found[pmid] = (
                        zlib.decompress(raw) if raw else article_to_pubmed_xml(merge_parts(unpack(pm), unpack(pmc)))
                    )
        return found

    def raw_pmc_xml(self, pmcids: Iterable[str]) -> dict[str, bytes]:
        """Each PMC article's JATS as stored, keyed by "PMC..." id; ids without full text are absent."""
        wanted = sorted({as_pmcid(p) for p in pmcids})
        found: dict[str, bytes] = {}
        with self._read() as conn:
            for chunk in id_chunks(wanted):
                marks = ",".join("?" * len(chunk))
                for pmcid, raw in conn.execute(
                    f"SELECT pmcid, pmc_raw FROM articles WHERE pmcid IN ({marks}) AND pmc_raw IS NOT NULL", chunk
                ):
                    found.setdefault(pmcid, zlib.decompress(raw))
        return found

    def count(self) -> int:
        with self._conn() as conn:
            return conn.execute("SELECT count(*) FROM articles").fetchone()[0]

    def last_row_id(self) -> int:
        """The newest row's id (0 when empty): with ``count``, tells derived indexes whether records were added."""
        with self._conn() as conn:
            return conn.execute("SELECT coalesce(max(id), 0) FROM articles").fetchone()[0]

    def last_update(self) -> float:
        """When a row last changed (0.0 when empty): with ``count`` and ``last_row_id``, tells derived indexes whether
        a record was revised in place (a PubMed update file, a re-read under a new cleaning)."""
        with self._conn() as conn:
            return float(conn.execute("SELECT coalesce(max(updated), 0) FROM articles").fetchone()[0])

    def updated_since(self, since: float) -> set[str]:
        """The PMIDs of the rows changed after ``since`` (a ``last_update`` value)."""
        with self._conn() as conn:
            rows = conn.execute("SELECT pmid FROM articles WHERE updated > ? AND pmid IS NOT NULL", (since,))
            return {r[0] for r in rows}

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
