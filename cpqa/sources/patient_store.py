"""The patient-information store: one SQLite row per ``PatientSection`` (zlib JSON), keyed by its citation key.

Small beside the article store (``cpqa.sources.store``) but with its habits: WAL, pooled connections handed to one
thread at a time (the pipeline is shared across threads), writes serialised by a lock. A row carries the hash of
its section, so loading the same pages again changes nothing, and ``digest`` (over every key and hash) tells an index
built from the store whether it is still current.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import zlib
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

from cpqa.types import PatientSection

BATCH_SIZE = 1000
_CHUNK = 500  # keys per IN (...) query
_MAX_IDLE = 4
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sections (
    id INTEGER PRIMARY KEY,  -- reading order: a page's sections in the order they were read
    key TEXT UNIQUE NOT NULL,
    page TEXT NOT NULL,
    collection TEXT NOT NULL,
    data BLOB NOT NULL,      -- zlib JSON of the section
    hash TEXT NOT NULL,
    updated REAL
);
CREATE INDEX IF NOT EXISTS sections_page ON sections(page);
"""


@dataclass
class PatientUpsert:
    """What an upsert did: sections new to the store, changed, or the same as stored."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def section_hash(section: PatientSection) -> str:
    return hashlib.sha1(section.model_dump_json().encode()).hexdigest()


def _unpack(blob: bytes) -> PatientSection:
    return PatientSection.model_validate_json(zlib.decompress(blob))


class PatientStore:
    """SQLite file of patient sections at ``path``; use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._idle: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        try:
            with self._conn() as conn:
                conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise sqlite3.DatabaseError(
                f"the patient store {self.path} is damaged ({exc}): move it aside and run `cpqa ingest medquad` again"
            ) from None

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """A connection for this thread's exclusive use until the block ends."""
        with self._pool_lock:
            if self._closed:
                raise RuntimeError(f"patient store {self.path} is closed")
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
        """Several statements in one snapshot."""
        with self._conn() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> "PatientStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ writing
    def upsert(self, sections: Iterable[PatientSection]) -> PatientUpsert:
        """Add new sections and replace changed ones (by key), in transactions of ``BATCH_SIZE``."""
        summary = PatientUpsert()
        iterator = iter(sections)
        while batch := list(islice(iterator, BATCH_SIZE)):
            latest = {s.key: s for s in batch}  # a key repeated in a batch: the last one read wins
            with self._write_lock, self._conn() as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    self._upsert_batch(conn, list(latest.values()), summary)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        return summary

    def _upsert_batch(self, conn: sqlite3.Connection, batch: list[PatientSection], summary: PatientUpsert) -> None:
        stored = self._hashes(conn, [s.key for s in batch])
        now, rows = time.time(), []
        for section in batch:
            digest = section_hash(section)
            if stored.get(section.key) == digest:
                summary.unchanged += 1
                continue
            if section.key in stored:
                summary.updated += 1
            else:
                summary.added += 1
            data = zlib.compress(section.model_dump_json().encode(), 6)
            rows.append((section.key, section.page, section.collection, data, digest, now))
        conn.executemany(
            "INSERT INTO sections (key, page, collection, data, hash, updated) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET page=excluded.page, collection=excluded.collection, "
            "data=excluded.data, hash=excluded.hash, updated=excluded.updated",
            rows,
        )

    @staticmethod
    def _hashes(conn: sqlite3.Connection, keys: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(conn.execute(f"SELECT key, hash FROM sections WHERE key IN ({marks})", chunk).fetchall())
        return found

    # ------------------------------------------------------------ reading
    def get(self, keys: Iterable[str]) -> dict[str, PatientSection]:
        """The stored sections of ``keys`` (unknown keys are left out), in the order asked."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, PatientSection] = {}
        with self._read() as conn:
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, data in conn.execute(f"SELECT key, data FROM sections WHERE key IN ({marks})", chunk):
                    found[key] = _unpack(data)
        return {key: found[key] for key in wanted if key in found}

    def by_page(self, page: str) -> list[PatientSection]:
        """Every section of one page (``collection/file``), in reading order."""
        with self._read() as conn:
            rows = conn.execute("SELECT data FROM sections WHERE page = ? ORDER BY id", (page,)).fetchall()
        return [_unpack(data) for (data,) in rows]

    def iter_sections(self, batch: int = BATCH_SIZE) -> Iterator[PatientSection]:
        """Every section in reading order, read in batches (no transaction stays open between them)."""
        last = 0
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    "SELECT id, data FROM sections WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
                ).fetchall()
            if not rows:
                return
            for _, data in rows:
                yield _unpack(data)
            last = rows[-1][0]

    def count(self) -> int:
        with self._read() as conn:
            return conn.execute("SELECT count(*) FROM sections").fetchone()[0]

    def collections(self) -> dict[str, int]:
        """Sections per collection."""
        with self._read() as conn:
            rows = conn.execute("SELECT collection, count(*) FROM sections GROUP BY collection ORDER BY collection")
            return dict(rows.fetchall())

    def digest(self) -> str:
        """A hash of every stored key and section: what an index built from the store must match."""
        sha = hashlib.sha1()
        with self._read() as conn:
            for key, digest in conn.execute("SELECT key, hash FROM sections ORDER BY key"):
                sha.update(f"{key}\t{digest}\n".encode())
        return sha.hexdigest()
