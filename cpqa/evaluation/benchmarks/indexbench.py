"""Vector index scale benchmark: flat vs IVF-PQ with exact re-scoring, on clustered synthetic 768-d vectors,
extrapolated to PubMed (about 36M MedCPT vectors).

The vectors go through the product's own code paths (streamed flat file, mmapped load, ``build_ivfpq``,
``FaissIndex.search``). Synthetic data: cluster centres plus a low-rank (64-d) within-cluster spread plus
small isotropic noise, like real text embeddings whose variation lives in few directions; pure isotropic
Gaussians would make every neighbour equidistant and no index meaningful.

RAM is counted honestly: "resident" is what must stay in memory (IVF-PQ codes, list ids, centroids,
codebooks: the size of the IVF-PQ file); the full float32 vectors and the PMID map are memory-mapped from
disk and only the shortlist's rows (k_factor x k per query) are touched.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from cpqa.documents.vector_index import IndexMeta
from cpqa.documents.vectorstore import IVFPQ_FILE, FaissIndex, FlatFile, build_ivfpq, coarse_quantizer, load_flat

PUBMED_VECTORS = 36_000_000
DIM = 768


class BenchConfig(BaseModel):
    n: int = 1_000_000
    dim: int = DIM
    clusters: int = 2000
    latent: int = 64
    bases: int = 16
    spread: float = 0.1  # scale of the within-cluster low-rank spread (sets how hard neighbours are)
    queries: int = 300
    latency_queries: int = 200
    flat_latency_queries: int = 30
    k: int = 10
    pq_m: int = 64
    points_per_list: int = 1000
    nprobe: tuple[int, ...] = (16, 32, 64)
    k_factor: tuple[int, ...] = (8, 16)
    train_size: int = 100_000
    threads: int = 2
    seed: int = 0
    pubmed_vectors: int = PUBMED_VECTORS  # the extrapolation target


class Generator:
    """Clustered vectors: centre + low-rank spread + noise; queries come from the same distribution."""

    def __init__(self, cfg: BenchConfig):
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        self.centres = rng.standard_normal((cfg.clusters, cfg.dim), dtype=np.float32)
        # Clusters share one of a few low-rank spreads (cluster c uses basis c % bases).
        self.bases = rng.standard_normal((cfg.bases, cfg.latent, cfg.dim), dtype=np.float32) * cfg.spread
        self.rng = rng

    def sample(self, n: int) -> np.ndarray:
        c = self.rng.integers(0, self.cfg.clusters, size=n)
        z = self.rng.standard_normal((n, self.cfg.latent), dtype=np.float32)
        x = self.centres[c]
        for b in range(self.cfg.bases):
            rows = np.flatnonzero(c % self.cfg.bases == b)
            x[rows] += z[rows] @ self.bases[b]
        x += self.rng.standard_normal(x.shape, dtype=np.float32) * 0.1
        return x


def _latencies(fn, queries: np.ndarray) -> dict:
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q[None, :])
        times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": round(float(np.percentile(times, 50)), 3), "p95_ms": round(float(np.percentile(times, 95)), 3)}


def _recall(found: list[list[str]], truth: np.ndarray, k: int) -> float:
    return float(np.mean([len(set(f[:k]) & set(map(str, t[:k]))) / k for f, t in zip(found, truth)]))


def run_bench(cfg: BenchConfig, workdir: Path | None = None) -> dict:
    import faiss

    faiss.omp_set_num_threads(cfg.threads)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        directory = Path(tmp)
        gen = Generator(cfg)
        t0 = time.perf_counter()
        writer = FlatFile(directory, cfg.dim)
        for start in range(0, cfg.n, 50_000):
            rows = min(50_000, cfg.n - start)
            writer.append(np.arange(start, start + rows, dtype=np.int64), gen.sample(rows))
        writer.close()
        meta = IndexMeta(model="synthetic", dim=cfg.dim, normalize=False, count=cfg.n)
        meta.save(directory)
        flat_build_s = time.perf_counter() - t0
        queries = gen.sample(cfg.queries)

        flat = load_flat(directory)  # mmapped, zero-copy
        t = time.perf_counter()
        _, truth = flat.search(queries, cfg.k)
        exact_batch_s = time.perf_counter() - t
        flat_lat = _latencies(lambda q, flat=flat: flat.search(q, cfg.k), queries[: cfg.flat_latency_queries])
        flat_bytes = (directory / "flat.faiss").stat().st_size

        nlist = max(1, cfg.n // cfg.points_per_list)
        t = time.perf_counter()
        build_ivfpq(directory, nlist=nlist, m=cfg.pq_m, train_size=cfg.train_size, seed=cfg.seed)
        ivf_build_s = time.perf_counter() - t
        resident = (directory / IVFPQ_FILE).stat().st_size

        index = FaissIndex(directory, IndexMeta.load(directory))
        configs = []
        for nprobe in cfg.nprobe:
            for kf in cfg.k_factor:
                index.tune(nprobe=nprobe, k_factor=kf)
                found = [[p for p, _ in hits] for hits in index.search(queries, cfg.k)]
                lat = _latencies(lambda q, index=index: index.search(q, cfg.k), queries[: cfg.latency_queries])
                configs.append(
                    {"nprobe": nprobe, "k_factor": kf, "recall@10": round(_recall(found, truth, cfg.k), 4), **lat}
                )
        best = _choose(configs)
        index.tune(nprobe=best["nprobe"], k_factor=1)  # shortlist of k: IVF-PQ ranking without re-scoring
        pq_only = _recall([[p for p, _ in hits] for hits in index.search(queries, cfg.k)], truth, cfg.k)
        coarse = _coarse_latency(cfg, cfg.pubmed_vectors // cfg.points_per_list, queries[: cfg.latency_queries])
        del flat, index
    return {
        "config": cfg.model_dump(),
        "data": "clustered synthetic: centre + 64-d low-rank spread (x spread) + isotropic noise 0.1",
        "flat": {
            "bytes_per_vector": round(flat_bytes / cfg.n, 2),
            "build_s": round(flat_build_s, 2),
            "recall@10": 1.0,
            "exact_batch_s_for_all_queries": round(exact_batch_s, 2),
            **flat_lat,
            "note": "mmapped IO_FLAG_MMAP_IFC: zero-copy, but every query reads all vectors",
        },
        "ivfpq": {
            "nlist": nlist,
            "pq_bytes": cfg.pq_m,
            "build_s": round(ivf_build_s, 2),
            "resident_bytes_per_vector": round(resident / cfg.n, 2),
            "pq_only_recall@10": round(pq_only, 4),
            "sweep": configs,
            "chosen": best,
        },
        "pubmed_extrapolation": _extrapolate(cfg, resident, best, coarse),
    }


def _choose(configs: list[dict]) -> dict:
    """The fastest (p95) setting with recall@10 >= 0.95, else the most accurate."""
    ok = [c for c in configs if c["recall@10"] >= 0.95]
    return min(ok, key=lambda c: c["p95_ms"]) if ok else max(configs, key=lambda c: c["recall@10"])


def _coarse_latency(cfg: BenchConfig, nlist: int, queries: np.ndarray) -> dict:
    """Measured: one query against PubMed-scale centroids in the coarse quantizer ``build_ivfpq`` would use."""
    centroids = Generator(cfg.model_copy(update={"clusters": nlist})).centres
    quantizer = coarse_quantizer(cfg.dim, nlist)
    quantizer.add(centroids)
    return {
        "nlist": nlist,
        "quantizer": type(quantizer).__name__,
        **_latencies(lambda q: quantizer.search(q, max(cfg.nprobe)), queries),
    }


def _extrapolate(cfg: BenchConfig, resident: int, best: dict, coarse: dict) -> dict:
    """PubMed at the bench's points-per-list: the same codes are scanned per query, only the coarse step grows."""
    n = cfg.pubmed_vectors
    per_vector = (resident - _fixed_bytes(cfg, cfg.n // cfg.points_per_list)) / cfg.n
    nlist = n // cfg.points_per_list
    resident_gb = (per_vector * n + _fixed_bytes(cfg, nlist)) / 1e9
    p95 = best["p95_ms"] + coarse["p95_ms"]
    return {
        "vectors": n,
        "nlist": nlist,
        "resident_ram_gb": round(resident_gb, 2),
        "mmapped_on_disk_gb": {"float32_vectors": round(n * cfg.dim * 4 / 1e9, 1), "pmid_map": round(n * 8 / 1e9, 2)},
        "flat_ram_gb_if_resident": round(n * cfg.dim * 4 / 1e9, 1),
        "est_p95_ms": round(p95, 2),
        "est_recall@10": best["recall@10"],
        "meets_target": bool(resident_gb <= 16 and best["recall@10"] >= 0.95 and p95 < 50),
        "assumptions": (
            "points per IVF list kept as in the bench, so each query scans the same number of codes; "
            "the coarse-quantizer step is measured at PubMed's nlist; recall assumed to carry over "
            "at equal points per list; re-scoring reads k_factor x k rows from the mmapped vectors "
            "(page cache or NVMe)"
        ),
    }


def _fixed_bytes(cfg: BenchConfig, nlist: int) -> int:
    """IVF-PQ bytes that do not grow with N: centroids and PQ codebooks."""
    return nlist * cfg.dim * 4 + cfg.dim * 256 * 4
