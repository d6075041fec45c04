"""The persistent passage layer: each record's SEOS layout and sentence vectors, stored once, compactly.

One SQLite file (``$CPQA_HOME/index/passages.sqlite``), one row per record and segmenter configuration
(``layouts``: the key covers the record's content, its source and the segmenter's settings, so a changed record or
setting segments again). A row holds the layout (sentence offsets into ``records.source_text(article)``, and each
chunk as a section label and a range of those sentences), the sentence vectors and the passage vectors as int8
rows, one float32 scale each (``cpqa.passages.vector_codec``). The text is the record's own, read from the record,
so nothing is stored twice.
``SegmentCache`` reads through it: a record is segmented once, across questions and processes, whether
``cpqa index build`` segmented it eagerly or a question met it first (records fetched live from NCBI included).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from pathlib import Path
from typing import Iterable, Sequence

from cpqa.passages.layout import RecordLayout
from cpqa.passages.vector_codec import decode, encode, shape

SCHEMA = """
CREATE TABLE IF NOT EXISTS layouts (key TEXT PRIMARY KEY, pmid TEXT, layout BLOB NOT NULL, vectors BLOB NOT NULL,
                                    passages BLOB);
CREATE INDEX IF NOT EXISTS layouts_pmid ON layouts(pmid);
"""
OLD_TABLES = ("segments", "vectors", "records")  # earlier layouts (whole nodes and float32 vectors by text, ...)
_CHUNK = 500
PASSAGES_FILE = "passages.sqlite"  # in ``settings.index_dir``


class PassageStore:
    """Thread-safe; every write commits at once, so an interrupted build keeps what it wrote."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        for table in OLD_TABLES:  # a cache of derived data: the old layout is dropped, records segment again
            self._conn.execute(f"DROP TABLE IF EXISTS {table}")
        self._conn.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "PassageStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, keys: Sequence[str]) -> dict[str, RecordLayout]:
        """The stored layouts among ``keys``."""
        found: dict[str, RecordLayout] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = list(keys[i : i + _CHUNK])
                rows = self._conn.execute(
                    f"SELECT key, layout, vectors, passages FROM layouts WHERE key IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for key, layout, vectors, passages in rows:
                    found[key] = RecordLayout.from_json(
                        json.loads(zlib.decompress(layout)),
                        decode(vectors),
                        decode(passages) if passages is not None else None,
                    )
        return found

    def put(self, items: Iterable[tuple[str, str | None, RecordLayout]]) -> None:
        """Store ``(key, pmid, layout)`` rows in one transaction."""
        rows = [
            (
                key,
                pmid,
                zlib.compress(json.dumps(layout.to_json(), separators=(",", ":")).encode(), 6),
                encode(layout.vectors),
                encode(layout.passages) if layout.passages is not None else None,
            )
            for key, pmid, layout in items
        ]
        with self._lock:
            self._conn.execute("BEGIN")
            self._conn.executemany("INSERT OR REPLACE INTO layouts VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")

    def has(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        wanted, found = list(keys), set[str]()
        with self._lock:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                found.update(
                    r[0]
                    for r in self._conn.execute(
                        f"SELECT key FROM layouts WHERE key IN ({', '.join('?' * len(chunk))})", chunk
                    )
                )
        return found

    def stats(self) -> dict[str, int]:
        """Records stored, sentence and passage vectors stored, bytes on disk (the file, its write-ahead log folded
        in first)."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            records = self._conn.execute("SELECT count(*) FROM layouts").fetchone()[0]
            vectors = passages = 0
            for sentence_head, passage_head in self._conn.execute(
                "SELECT substr(vectors, 1, 8), substr(passages, 1, 8) FROM layouts"
            ):
                vectors += shape(sentence_head)[0]
                passages += shape(passage_head)[0] if passage_head is not None else 0
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {"records": records, "vectors": vectors, "passage_vectors": passages, "bytes": size}


__all__ = ["PASSAGES_FILE", "PassageStore"]
