"""The ``tantivy`` engine: a tantivy index in a folder beside the store (``store.tantivy``).

PubMed's Boolean AST becomes tantivy queries directly (never through tantivy's own query parser, so user text is
only ever terms): a term is a term, phrase or phrase-prefix query per column of its field tag, boosted by the
column's BM25 weight; AND / OR / NOT are Must / Should / MustNot; ``[dp]`` ranges are a range over a fast field
and score nothing. Counts are exact.

Consistency with the store: documents are buffered in tantivy's writer while the store's SQLite transaction runs,
which also sets ``tantivy_pending``. After SQLite commits, tantivy commits and the flag is cleared. A crash in
between leaves the flag set with no writer alive, and the next ``Store`` to open the file rebuilds this index from
the stored records.
Readers in other processes reload when the ``tantivy_generation`` they last saw has moved on."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path
from typing import Sequence, cast

import tantivy
from tantivy import FieldType, Occur, Query

from cpqa.sources.boolean import DateRange, Node, Term, chain
from cpqa.sources.store_search import BM25_WEIGHTS, FIELD_COLUMNS, FTS_COLUMNS, date_key, positive_terms
from cpqa.sources.text_index import IndexedRow, TextIndex

TOKENIZER = "cpqa_english"
WRITER_HEAP = 128_000_000


def _analyzer(stem: bool) -> tantivy.TextAnalyzer:
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )
    return (builder.filter(tantivy.Filter.stemmer("english")) if stem else builder).build()


WORDS = _analyzer(stem=True)
PREFIX_WORDS = _analyzer(stem=False)  # a truncated word is matched as written, not stemmed


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for column in FTS_COLUMNS:
        builder.add_text_field(column, stored=False, tokenizer_name=TOKENIZER, index_option="position")
    builder.add_integer_field("rid", stored=False, indexed=True, fast=True)
    builder.add_integer_field("dp", stored=False, indexed=True, fast=True)
    return builder.build()


class TantivyIndex(TextIndex):
    name = "tantivy"
    version = "1"
    version_key = "tantivy_version"

    def __init__(self, path: Path):
        self.path = path
        self.schema = _schema()
        self._index = self._open()
        self._writer: tantivy.IndexWriter | None = None
        self._dirty = False
        self._generation: str | None = None

    def _open(self) -> tantivy.Index:
        """The index in ``path``; a missing folder, or one this schema cannot open (written by another version),
        starts empty and is marked ``_created`` so that the store rebuilds it."""
        self._created = not (self.path / "meta.json").exists()
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            index = tantivy.Index(self.schema, str(self.path), reuse=True)
        except ValueError:
            shutil.rmtree(self.path)
            self.path.mkdir(parents=True)
            index, self._created = tantivy.Index(self.schema, str(self.path), reuse=True), True
        index.register_tokenizer(TOKENIZER, WORDS)
        return index

    # ------------------------------------------------------------ writing
    def _writing(self, conn: sqlite3.Connection) -> tantivy.IndexWriter:
        if not self._dirty:
            conn.execute("INSERT OR REPLACE INTO meta VALUES('tantivy_pending', '1')")
            self._dirty = True
        if self._writer is None:
            try:
                self._writer = self._index.writer(heap_size=WRITER_HEAP, num_threads=1)
            except ValueError as exc:
                raise RuntimeError(
                    f"the search index {self.path} is being written by another process ({exc}); wait for it to finish"
                ) from None
        return self._writer

    def add(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        writer = self._writing(conn)
        for rid, dp_key, values in rows:
            fields = {column: value for column, value in zip(FTS_COLUMNS, values) if value}
            writer.add_document(tantivy.Document(rid=rid, dp=int(dp_key or 0), **fields))

    def remove(self, conn: sqlite3.Connection, rows: Sequence[IndexedRow]) -> None:
        writer = self._writing(conn)
        for rid, _, _ in rows:
            writer.delete_documents_by_term("rid", rid)

    def clear(self, conn: sqlite3.Connection) -> None:
        self._writing(conn).delete_all_documents()

    def committed(self, conn: sqlite3.Connection) -> None:
        if not self._dirty:
            return
        assert self._writer is not None
        self._writer.commit()
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'tantivy_pending'")
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES('tantivy_generation', "
            "coalesce((SELECT value FROM meta WHERE key = 'tantivy_generation'), 0) + 1)"
        )
        self._dirty = False
        self._index.reload()

    def rolled_back(self) -> None:
        if self._dirty and self._writer is not None:
            self._writer.rollback()
        self._dirty = False

    def needs_rebuild(self, conn: sqlite3.Connection) -> bool:
        """A version change, a missing folder, or ``tantivy_pending`` left set by a writer that died between the two
        commits. A writer still at work holds tantivy's lock (released by the OS when a process dies): then the flag
        only means its commit is on the way."""
        if self._created or super().needs_rebuild(conn):
            return True
        pending = conn.execute("SELECT value FROM meta WHERE key = 'tantivy_pending'").fetchone()
        if pending is None or pending[0] != "1":
            return False
        try:
            self._writer = self._index.writer(heap_size=WRITER_HEAP, num_threads=1)  # kept for the rebuild
        except ValueError:
            return False
        return True

    def built(self, conn: sqlite3.Connection) -> None:
        super().built(conn)
        self._created = False

    def release(self) -> None:
        """Finish the segment merges under way and drop the writer, which frees the folder's lock."""
        if self._writer is not None:
            self._writer.wait_merging_threads()
            self._writer = None

    # ------------------------------------------------------------ reading
    def _searcher(self, conn: sqlite3.Connection) -> tantivy.Searcher:
        row = conn.execute("SELECT value FROM meta WHERE key = 'tantivy_generation'").fetchone()
        generation = row[0] if row else None
        if generation != self._generation:  # another process committed since this one last looked
            self._index.reload()
            self._generation = generation
        return self._index.searcher()

    def search(self, conn: sqlite3.Connection, node: Node, limit: tuple[int, int]) -> tuple[int, list[str]]:
        searcher = self._searcher(conn)
        retmax, retstart = limit
        order_by_field = None if positive_terms(node) else "dp"  # no text to rank by: newest first
        # tantivy refuses a limit of 0 (it panics): ask for one hit and drop it
        result = searcher.search(
            self._query(node, BM25_WEIGHTS), max(1, retmax), count=True, order_by_field=order_by_field, offset=retstart
        )
        hits = result.hits[:retmax]
        # "rid" is an integer fast field that every document has, so its values are ints
        rids = cast(list[int], searcher.fast_field_values("rid", [address for _, address in hits])) if hits else []
        # SearchResult.count exists at runtime but is missing from tantivy's stub
        return result.count, _pmids(conn, rids)  # type: ignore[attr-defined]

    def score(
        self, conn: sqlite3.Connection, node: Node, ids: dict[int, str], weights: Sequence[float], depth: int
    ) -> dict[str, float]:
        """Exact for every row in ``ids`` (tantivy scores just those rows; ``depth`` is not needed)."""
        terms = positive_terms(node)
        if not terms or not ids:
            return {}
        searcher = self._searcher(conn)
        ranked = Query.boolean_query([(Occur.Should, self._term(t, weights)) for t in terms])
        only = Query.const_score_query(Query.term_set_query(self.schema, "rid", sorted(ids)), 0.0)
        result = searcher.search(Query.boolean_query([(Occur.Must, ranked), (Occur.Must, only)]), len(ids), count=False)
        rids = cast(list[int], searcher.fast_field_values("rid", [address for _, address in result.hits]))
        return {ids[rid]: score for (score, _), rid in zip(result.hits, rids)}

    # ------------------------------------------------------------ queries
    def _query(self, node: Node, weights: Sequence[float]) -> Query:
        if isinstance(node, Term):
            return self._term(node, weights)
        if isinstance(node, DateRange):
            dates = Query.range_query(
                self.schema, "dp", FieldType.Integer, int(date_key(node.start)), int(date_key(node.end, upper=True))
            )
            return Query.const_score_query(dates, 0.0)
        items = [self._query(item, weights) for item in chain(node)]
        if node.op == "NOT":
            return Query.boolean_query([(Occur.Must, items[0])] + [(Occur.MustNot, item) for item in items[1:]])
        return Query.boolean_query([(Occur.Must if node.op == "AND" else Occur.Should, item) for item in items])

    def _term(self, term: Term, weights: Sequence[float]) -> Query:
        """One phrase in each column of its field tag, each boosted by the column's weight."""
        words = WORDS.analyze(term.text)
        if term.prefix:
            written = PREFIX_WORDS.analyze(term.text)
            words = words[:-1] + written[-1:] if written else []
        weight = dict(zip(FTS_COLUMNS, weights))
        per_column = []
        for column in FIELD_COLUMNS[term.field]:
            if not words or weight[column] <= 0:
                continue
            if term.prefix and len(words) == 1:
                query = Query.regex_query(self.schema, column, re.escape(words[0]) + ".*")
            elif term.prefix:
                query = Query.phrase_prefix_query(self.schema, column, list(words))
            elif len(words) == 1:
                query = Query.term_query(self.schema, column, words[0])
            else:
                query = Query.phrase_query(self.schema, column, list(words))
            per_column.append((Occur.Should, Query.boost_query(query, weight[column])))
        if not per_column:
            return Query.empty_query()
        return per_column[0][1] if len(per_column) == 1 else Query.boolean_query(per_column)


def _pmids(conn: sqlite3.Connection, rids: list[int]) -> list[str]:
    """The PMIDs of these rows, in the same order."""
    if not rids:
        return []
    marks = ",".join("?" * len(rids))
    found = dict(conn.execute(f"SELECT id, pmid FROM articles WHERE id IN ({marks})", rids).fetchall())
    return [found[rid] for rid in rids if found.get(rid)]
