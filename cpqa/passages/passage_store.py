"""The persistent passage layer: each record's SEOS nodes and each passage's embedding, stored once.

One SQLite file (``$CPQA_HOME/index/passages.sqlite``) with two tables: ``segments`` (a record's SEOS nodes, keyed
by the record's content, its source and the segmenter's configuration, so a changed record or setting segments
again) and ``vectors`` (embeddings keyed by model and text, float32). ``SegmentCache`` and ``EmbeddingCache`` read
through it: a record is segmented once, across questions and processes, whether ``cpqa index build --passages``
segmented it eagerly or a question met it first (lazily, records fetched live from NCBI included).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
from llama_index.core.schema import TextNode

SCHEMA = """
CREATE TABLE IF NOT EXISTS segments (key TEXT PRIMARY KEY, pmid TEXT, nodes BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS segments_pmid ON segments(pmid);
CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL);
"""
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
        self._conn.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "PassageStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ segments
    def nodes(self, key: str) -> list[TextNode] | None:
        with self._lock:
            row = self._conn.execute("SELECT nodes FROM segments WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return [TextNode.from_dict(item) for item in json.loads(zlib.decompress(row[0]))]

    def put_nodes(self, key: str, pmid: str | None, nodes: Sequence[TextNode]) -> None:
        blob = zlib.compress(json.dumps([n.to_dict() for n in nodes]).encode(), 6)
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO segments VALUES (?, ?, ?)", (key, pmid, blob))

    def has_segments(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are stored."""
        wanted, found = list(keys), set()
        with self._lock:
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i:i + _CHUNK]
                found.update(r[0] for r in self._conn.execute(
                    f"SELECT key FROM segments WHERE key IN ({', '.join('?' * len(chunk))})", chunk))
        return found

    # ------------------------------------------------------------ vectors
    def vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = list(keys[i:i + _CHUNK])
                for key, blob in self._conn.execute(
                        f"SELECT key, vector FROM vectors WHERE key IN ({', '.join('?' * len(chunk))})", chunk):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_vectors(self, items: Mapping[str, np.ndarray]) -> None:
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)

    def stats(self) -> dict[str, int]:
        with self._lock:
            records = self._conn.execute("SELECT count(*) FROM segments").fetchone()[0]
            vectors = self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {"records": records, "vectors": vectors, "bytes": size}


__all__ = ["PASSAGES_FILE", "PassageStore"]
