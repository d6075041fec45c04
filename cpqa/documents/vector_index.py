"""The vector index's interface and what every backend shares: the metadata of what built the vectors
(``IndexMeta``, ``meta.json`` in the index folder), the abstract ``VectorIndex`` and the checks on ids and vectors.
Backends: FAISS (``vectorstore``) and Milvus (``milvus_index``)."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
from pydantic import BaseModel

Hits = list[list[tuple[str, float]]]
META_FILE = "meta.json"
MILVUS_COLLECTION = "cpqa_articles"


class IndexMissing(FileNotFoundError):
    """No vector index has been built in the index folder."""


class IndexMeta(BaseModel):
    """What built the vectors: searching them needs a query encoder of the same family and dim."""

    model: str
    dim: int
    normalize: bool
    metric: Literal["ip"] = "ip"
    kind: Literal["flat", "ivfpq"] = "flat"
    backend: Literal["faiss", "milvus"] = "faiss"
    count: int = 0
    ivfpq: dict | None = None  # nlist, m, nbits, nprobe, k_factor, trained_on
    # the store's last change the vectors cover (``Store.last_update``): records changed after it are embedded again
    store_updated: float | None = None

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / (META_FILE + ".tmp")
        tmp.write_text(self.model_dump_json(indent=2))
        os.replace(tmp, directory / META_FILE)

    @classmethod
    def load(cls, directory: Path) -> "IndexMeta":
        path = directory / META_FILE
        if not path.exists():
            raise IndexMissing(f"no vector index in {directory} (run `cpqa index build` or `cpqa ingest medcpt DIR`)")
        return cls.model_validate_json(path.read_text())


def pmid_ints(ids: Sequence[str]) -> np.ndarray:
    try:
        return np.asarray([int(i) for i in ids], dtype=np.int64)
    except ValueError as exc:
        raise ValueError(f"vector ids must be numeric PMIDs: {exc}") from None


def as_matrix(vectors: np.ndarray, dim: int) -> np.ndarray:
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"expected vectors of shape (n, {dim}), got {arr.shape}")
    return arr


class VectorIndex(ABC):
    """Add (id, vector) rows, or replace the vectors of ids it holds; search by inner product; ids are PMID strings."""

    meta: IndexMeta

    @abstractmethod
    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...

    @abstractmethod
    def replace(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...

    @abstractmethod
    def search(self, queries: np.ndarray, k: int) -> Hits: ...

    @abstractmethod
    def id_set(self) -> set[str]: ...

    @abstractmethod
    def close(self) -> None:
        """Flush what was added and release files or connections."""

    def __len__(self) -> int:
        return self.meta.count

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
