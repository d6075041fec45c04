"""The vector index in Milvus (a milvus-lite file, or a Milvus server at ``CPQA_MILVUS_URI``): one collection, the
FLAT index with inner product, so its results match FAISS flat. Opened through ``vectorstore.open_index``."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.documents.vector_index import MILVUS_COLLECTION, Hits, IndexMeta, VectorIndex, as_matrix, pmid_ints


class MilvusIndex(VectorIndex):
    """Milvus (milvus-lite file or server); the FLAT index with inner product, so results match FAISS flat."""

    def __init__(self, directory: Path, meta: IndexMeta, uri: str):
        from pymilvus import DataType, MilvusClient

        self.directory, self.meta, self.uri = Path(directory), meta, uri
        self.client = MilvusClient(uri)
        if not self.client.has_collection(MILVUS_COLLECTION):
            schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("pmid", DataType.INT64, is_primary=True)
            schema.add_field("vector", DataType.FLOAT_VECTOR, dim=meta.dim)
            params = self.client.prepare_index_params()
            params.add_index(field_name="vector", index_type="FLAT", metric_type="IP")
            self.client.create_collection(MILVUS_COLLECTION, schema=schema, index_params=params)
        self.client.load_collection(MILVUS_COLLECTION)

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        arr = as_matrix(vectors, self.meta.dim)
        int_ids = pmid_ints(ids)
        for start in range(0, len(arr), 5000):
            rows = [
                {"pmid": int(i), "vector": v.tolist()}
                for i, v in zip(int_ids[start : start + 5000], arr[start : start + 5000])
            ]
            self.client.upsert(MILVUS_COLLECTION, rows)
        self.meta.count = self._count()

    def replace(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.add(ids, vectors)  # Milvus upserts by primary key

    def _count(self) -> int:
        res = self.client.query(MILVUS_COLLECTION, filter="", output_fields=["count(*)"])
        return int(res[0]["count(*)"])

    def id_set(self) -> set[str]:
        out: set[str] = set()
        it = self.client.query_iterator(MILVUS_COLLECTION, batch_size=10000, filter="", output_fields=["pmid"])
        while batch := it.next():
            out.update(str(r["pmid"]) for r in batch)
        it.close()
        return out

    def search(self, queries: np.ndarray, k: int) -> Hits:
        q = as_matrix(queries, self.meta.dim)
        res = self.client.search(
            MILVUS_COLLECTION,
            data=q.tolist(),
            limit=k,
            anns_field="vector",
            search_params={"metric_type": "IP"},
            output_fields=[],
        )
        return [[(str(h["pmid"]), float(h["distance"])) for h in hits] for hits in res]

    def close(self) -> None:
        self.meta.save(self.directory)
        self.client.close()
