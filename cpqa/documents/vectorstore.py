"""Vector indexes for semantic document search, behind one interface (``VectorIndex``).

FAISS (default) keeps, in ``settings.index_dir``:

- ``flat.faiss``: a FAISS ``IndexFlatIP`` file written by streaming (rows are appended and the header is
  patched, so ingesting PubMed never holds all vectors in RAM). It loads with ``IO_FLAG_MMAP_IFC``: zero-copy,
  the vectors stay on disk and the page cache serves them.
- ``ids.i64``: the PMID of every row (int64, appended alongside).
- ``ivfpq.faiss`` (optional, ``kind="ivfpq"``): an IVF-PQ index trained on a sample. Only it is resident;
  its shortlist is re-scored exactly against the mmapped flat vectors, which restores recall.
- ``meta.json``: which encoder built the vectors (model + dim), so a query encoder of another family is refused.

Milvus (``CPQA_VECTOR_STORE=milvus``, ``CPQA_MILVUS_URI``: a milvus-lite file or a server) holds ids and vectors
in a collection; ``meta.json`` stays in the index folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, cast

import numpy as np

from cpqa.options import DocumentOptions
from cpqa.config import Settings
from cpqa.documents.vector_index import META_FILE, Hits, IndexMeta, VectorIndex, as_matrix, pmid_ints
from cpqa.models.names import trained_revision

if TYPE_CHECKING:
    import faiss

FLAT_FILE = "flat.faiss"
IDS_FILE = "ids.i64"
IVFPQ_FILE = "ivfpq.faiss"


# ---------------------------------------------------------------- FAISS flat file, streamed
def _flat_header(dim: int) -> tuple[bytes, int]:
    """The header FAISS writes for an empty IndexFlatIP, and the offset of its trailing size field."""
    import faiss

    header = bytes(faiss.serialize_index(faiss.IndexFlatIP(dim)))
    return header, len(header) - 8


class FlatFile:
    """Appends rows to a FAISS ``IndexFlatIP`` file and its ids file without loading either; a row it holds can be
    overwritten in place (a revised record's new vector).

    Rows are written first and the header counts patched after, so a crash leaves at most a tail that
    ``open`` trims (the ids file and the vector region are cut to the shorter of the two): builds resume.
    """

    def __init__(self, directory: Path, dim: int):
        self.directory, self.dim = directory, dim
        self.header, self.size_offset = _flat_header(dim)
        directory.mkdir(parents=True, exist_ok=True)
        flat, ids = directory / FLAT_FILE, directory / IDS_FILE
        if not flat.exists():
            flat.write_bytes(self.header)
            ids.write_bytes(b"")
        row = dim * 4
        n = min((flat.stat().st_size - len(self.header)) // row, ids.stat().st_size // 8)
        self._flat = open(flat, "r+b")
        self._ids = open(ids, "r+b")
        self._flat.truncate(len(self.header) + n * row)
        self._ids.truncate(n * 8)
        self.count = int(n)
        self._patch()

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Vectors, then their ids, each flushed to the OS at once: a killed build keeps every row it embedded
        (buffered ids were lost before, and ``open`` then trimmed their vectors away)."""
        self._flat.seek(0, os.SEEK_END)
        self._flat.write(vectors.tobytes())
        self._flat.flush()
        self._ids.seek(0, os.SEEK_END)
        self._ids.write(ids.astype(np.int64).tobytes())
        self._ids.flush()
        self.count += len(ids)

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Each id's row in the file (one pass over the ids file; for the few revised records of a build)."""
        self._ids.seek(0)
        held = np.frombuffer(self._ids.read(), dtype=np.int64)
        rows = np.flatnonzero(np.isin(held, ids))
        where = {int(held[r]): int(r) for r in rows}
        missing = [int(i) for i in ids if int(i) not in where]
        if missing:
            raise KeyError(f"not in the index: {missing[:5]}")
        return np.asarray([where[int(i)] for i in ids], dtype=np.int64)

    def overwrite(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """New vectors for rows the file holds, written where the old ones were."""
        for row, vector in zip(rows, vectors):
            self._flat.seek(len(self.header) + int(row) * self.dim * 4)
            self._flat.write(vector.tobytes())
        self._flat.flush()

    def _patch(self) -> None:
        self._flat.seek(8)  # ntotal (int64) follows the fourcc and d
        self._flat.write(np.int64(self.count).tobytes())
        self._flat.seek(self.size_offset)  # codes size, in 4-byte units
        self._flat.write(np.uint64(self.count * self.dim).tobytes())

    def close(self) -> None:
        self._patch()
        self._flat.close()
        self._ids.close()


def read_ids(directory: Path) -> np.ndarray:
    return np.fromfile(directory / IDS_FILE, dtype=np.int64)


def load_flat(directory: Path, mmap: bool = True):
    """The flat index, memory-mapped (zero-copy) by default."""
    import faiss

    flags = faiss.IO_FLAG_MMAP_IFC if mmap else 0
    return faiss.read_index(str(directory / FLAT_FILE), flags)


def flat_vectors(index) -> np.ndarray:
    """A numpy view (no copy) of a flat index's vectors: the exact re-scoring source for IVF-PQ."""
    import faiss

    n, d = index.ntotal, index.d
    if n == 0:
        return np.zeros((0, d), dtype=np.float32)
    return faiss.rev_swig_ptr(index.get_xb(), n * d).reshape(n, d)


class FaissIndex(VectorIndex):
    """Flat (exact) or IVF-PQ + exact re-scoring over the flat file; see the module docstring."""

    def __init__(self, directory: Path, meta: IndexMeta, writable: bool = False):
        self.directory, self.meta = Path(directory), meta
        self._writer = FlatFile(self.directory, meta.dim) if writable else None
        if self._writer:
            self.meta.count = self._writer.count
        self._flat: faiss.Index | None = None
        self._ivf: faiss.IndexIVF | None = None
        self._ids: np.ndarray | None = None

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        if self._writer is None:
            raise RuntimeError("index opened read-only")
        if self.meta.kind == "ivfpq" and self.meta.ivfpq:
            raise RuntimeError("adding to a trained IVF-PQ index: rebuild it with build_ivfpq after adding")
        arr = as_matrix(vectors, self.meta.dim)
        int_ids = pmid_ints(ids)
        if len(int_ids) != len(arr):
            raise ValueError(f"{len(int_ids)} ids for {len(arr)} vectors")
        self._writer.append(int_ids, arr)
        self.meta.count = self._writer.count

    def replace(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """New vectors for records the index holds, each written over the old one in its row."""
        if self._writer is None:
            raise RuntimeError("index opened read-only")
        arr = as_matrix(vectors, self.meta.dim)
        self._writer.overwrite(self._writer.rows_of(pmid_ints(ids)), arr)

    def close(self) -> None:
        if self._writer:
            self._writer.close()
            self.meta.save(self.directory)
            self._writer = None

    def _load(self) -> tuple[faiss.Index, np.ndarray]:
        """The flat index and its ids, read on first use (with the IVF-PQ index, for that kind)."""
        if self._flat is None or self._ids is None:  # both are read together
            self._flat = load_flat(self.directory)
            self._ids = read_ids(self.directory)
            if self.meta.kind == "ivfpq":
                import faiss

                # read_index returns the concrete class it read (IndexIVFPQ), typed as the base Index
                self._ivf = cast(faiss.IndexIVF, faiss.read_index(str(self.directory / IVFPQ_FILE)))
                self._ivf.nprobe = int(self._ivfpq_settings()["nprobe"])
        return self._flat, self._ids

    def _ivfpq_settings(self) -> dict:
        """The IVF-PQ settings, which ``build_ivfpq`` writes together with kind "ivfpq"."""
        if self.meta.ivfpq is None:
            raise RuntimeError(f"the index in {self.directory} is of kind ivfpq but has no IVF-PQ settings")
        return self.meta.ivfpq

    def tune(self, nprobe: int | None = None, k_factor: int | None = None) -> None:
        """Change IVF-PQ search settings for this session (lists probed, shortlist = k_factor x k)."""
        if self.meta.kind != "ivfpq":
            raise ValueError("tune applies to an IVF-PQ index")
        self._load()
        if nprobe:
            self._ivfpq_settings()["nprobe"] = nprobe
            assert self._ivf is not None  # _load read it: the kind is ivfpq
            self._ivf.nprobe = nprobe
        if k_factor:
            self._ivfpq_settings()["k_factor"] = k_factor

    def id_set(self) -> set[str]:
        return {str(i) for i in read_ids(self.directory)}

    def search(self, queries: np.ndarray, k: int) -> Hits:
        flat, ids = self._load()
        q = as_matrix(queries, self.meta.dim)
        k = min(k, flat.ntotal)
        if k <= 0:
            return [[] for _ in range(len(q))]
        if self._ivf is None:
            scores, rows = flat.search(q, k)
        else:
            shortlist = int(self._ivfpq_settings().get("k_factor", 8)) * k
            _, cand = self._ivf.search(q, shortlist)
            scores, rows = rescore(q, cand, flat_vectors(flat), k)
        return [[(str(ids[r]), float(s)) for s, r in zip(srow, rrow) if r >= 0] for srow, rrow in zip(scores, rows)]


def rescore(queries: np.ndarray, candidates: np.ndarray, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner products for each query's shortlist (rows read from the mmapped vectors), top k kept."""
    out_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    out_r = np.full((len(queries), k), -1, dtype=np.int64)
    for i, (q, cand) in enumerate(zip(queries, candidates)):
        cand = np.sort(cand[cand >= 0])  # sorted rows read the file sequentially
        if not len(cand):
            continue
        s = vectors[cand] @ q
        top = np.argsort(-s)[:k]
        out_s[i, : len(top)], out_r[i, : len(top)] = s[top], cand[top]
    return out_s, out_r


HNSW_COARSE_FROM = DocumentOptions().hnsw_coarse_from  # from this many lists on, the centroids are searched by HNSW


def coarse_quantizer(dim: int, nlist: int):
    """Flat centroids for small nlist; HNSW over the centroids at PubMed scale (tens of thousands of lists)."""
    import faiss

    if nlist < HNSW_COARSE_FROM:
        return faiss.IndexFlatIP(dim)
    hnsw = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 40
    hnsw.hnsw.efSearch = 128
    return hnsw


def index_options(kind: str, *, m: int, nprobe: int, nlist: int = 0) -> dict:
    """Keyword options for ``build_ivfpq`` from command-line choices; ``kind`` is "flat" or "ivfpq"."""
    if kind not in {"flat", "ivfpq"}:
        raise ValueError("--index must be flat or ivfpq")
    if kind == "flat":
        return {}
    return {"m": m, "nprobe": nprobe, **({"nlist": nlist} if nlist else {})}


def build_ivfpq(
    directory: Path,
    *,
    nlist: int | None = None,
    m: int = 64,
    nbits: int = 8,
    nprobe: int = 32,
    k_factor: int = 8,
    train_size: int = 100_000,
    slice_rows: int = 50_000,
    seed: int = 0,
) -> IndexMeta:
    """Train IVF-PQ on a sample of the flat vectors and add all rows in slices (the flat file stays mmapped)."""
    import faiss

    meta = IndexMeta.load(directory)
    flat = load_flat(directory)
    vectors = flat_vectors(flat)
    n, d = vectors.shape
    if n == 0:
        raise ValueError("the flat index is empty: add vectors before building IVF-PQ")
    if d % m:
        raise ValueError(f"PQ m={m} must divide the dimension {d}")
    nlist = nlist or max(1, min(int(4 * np.sqrt(n)), n // 39))
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(n, max(train_size, 39 * nlist)), replace=False))
    quantizer = coarse_quantizer(d, nlist)
    ivf = faiss.IndexIVFPQ(
        quantizer, d, nlist, m, min(nbits, max(1, int(np.log2(max(2, len(sample) // 39))))), faiss.METRIC_INNER_PRODUCT
    )
    ivf.train(np.ascontiguousarray(vectors[sample]))
    for start in range(0, n, slice_rows):
        ivf.add(np.ascontiguousarray(vectors[start : start + slice_rows]))
    faiss.write_index(ivf, str(directory / IVFPQ_FILE))
    meta.kind = "ivfpq"
    meta.ivfpq = {
        "nlist": nlist,
        "m": m,
        "nbits": ivf.pq.nbits,
        "nprobe": nprobe,
        "k_factor": k_factor,
        "trained_on": int(len(sample)),
    }
    meta.save(directory)
    return meta


# ---------------------------------------------------------------- opening
def milvus_uri(settings: Settings) -> str:
    return settings.cpqa_milvus_uri or str(settings.index_dir / "milvus.db")


def open_index(settings: Settings, *, create: IndexMeta | None = None, directory: Path | None = None) -> VectorIndex:
    """Open the configured index. With ``create``, open it for writing (creating it when absent). An existing
    index built by another encoder would mix vector spaces: one an earlier revision of the encoder trained here
    built (FAISS) is emptied, to be built again from the store; any other is refused (imported MedCPT vectors
    cannot be made again offline)."""
    directory = Path(directory or settings.index_dir)
    if create is not None:
        existing = IndexMeta.load(directory) if (directory / META_FILE).exists() else None
        if existing is not None and (existing.model, existing.dim) != (create.model, create.dim):
            rebuildable = trained_revision(existing.model) and trained_revision(create.model)
            if not rebuildable or "milvus" in (existing.backend, settings.cpqa_vector_store):
                raise ValueError(
                    f"the index in {directory} was built by {existing.model} ({existing.dim}-d), "
                    f"not {create.model} ({create.dim}-d): remove it or use another index folder"
                )
            for name in (FLAT_FILE, IDS_FILE, IVFPQ_FILE, META_FILE):
                (directory / name).unlink(missing_ok=True)
            existing = None
        if existing is not None:
            meta = existing
            meta.kind = "flat"
            meta.ivfpq = None
            (directory / IVFPQ_FILE).unlink(missing_ok=True)
        else:
            meta = create.model_copy()
        meta.backend = settings.cpqa_vector_store
        meta.save(directory)
    else:
        meta = IndexMeta.load(directory)
        if meta.backend != settings.cpqa_vector_store:
            raise ValueError(
                f"the index in {directory} lives in {meta.backend} but CPQA_VECTOR_STORE is "
                f"{settings.cpqa_vector_store}: rebuild it or change the setting"
            )
    if meta.backend == "milvus":
        from cpqa.documents.milvus_index import MilvusIndex

        return MilvusIndex(directory, meta, milvus_uri(settings))
    return FaissIndex(directory, meta, writable=create is not None)
