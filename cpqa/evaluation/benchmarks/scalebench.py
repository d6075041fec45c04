"""Scale measured at several sizes (``cpqa bench scale``): how each cost grows, fitted, and projected to PubMed.

Records: the shared sample replicated to each size with rewritten PMIDs and a few abstract words swapped per copy
(``ingestbench``), ingested into a fresh store; ingest rate, CPU-seconds per record, store bytes per record and
local esearch p50 / p95 over the Boolean ladders the rule-based rewriter builds for 50 dev questions. Vectors:
clustered synthetic 768-d vectors (MedCPT's shape) through the product's IVF-PQ + exact re-scoring
(``indexbench``): build rate, resident bytes per vector, recall@10, p50 / p95; and the Milvus backend
(``MilvusIndex`` on milvus-lite, which runs in-process and serves a FLAT index) at the sizes asked of it.

Each measure is fitted as ``value = a * size ** b`` by least squares on log-log scales; ``b`` is the growth exponent,
``2 ** b`` the factor per doubling, and the fit is evaluated at 36M records / vectors. A fit from two sizes is a
line through two points: the JSON says how many sizes each fit rests on.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cpqa.config import Settings
from cpqa.evaluation.benchmarks.indexbench import BenchConfig, Generator, run_bench
from cpqa.evaluation.benchmarks.ingestbench import run_ingest_bench
from cpqa.sources.text_index import ENGINES

PUBMED = 36_000_000
RECORD_MEASURES = (
    "records_per_s",
    "records_per_cpu_s",
    "bytes_per_record",
    "esearch_p50_ms",
    "esearch_p95_ms",
    "peak_rss_mb",
)
VECTOR_MEASURES = ("build_vectors_per_s", "resident_bytes_per_vector", "recall@10", "p50_ms", "p95_ms")
MILVUS_MEASURES = ("insert_vectors_per_s", "resident_bytes_per_vector", "p50_ms", "p95_ms")
# (nprobe, shortlist as a multiple of k) tried at each vector size
VECTOR_SWEEP = tuple((nprobe, k_factor) for nprobe in (16, 32) for k_factor in (16, 32, 64))
SAVED = "scale.json"  # in the data home's eval folder: the last run, which the scale notebook plots


class CannotResume(ValueError):
    """A saved report whose points were measured otherwise than this run's would be."""


def growth(sizes: Sequence[int], values: Sequence[float], target: int = PUBMED) -> dict:
    """The power-law fit of ``values`` against ``sizes``: exponent, factor per doubling, value at ``target``."""
    pairs = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if s > 0 and v is not None and v > 0]
    if len(pairs) < 2:
        return {"sizes": len(pairs), "exponent": None, "per_doubling": None, "at_target": None}
    x, y = np.array(pairs).T
    slope, intercept = np.polyfit(x, y, 1)
    return {
        "sizes": len(pairs),
        "exponent": round(float(slope), 3),
        "per_doubling": round(2 ** float(slope), 3),
        "at_target": round(float(math.exp(intercept + slope * math.log(target))), 3),
        "target": target,
    }


def ladder_queries(settings: Settings, questions: Path, count: int = 50) -> list[str]:
    """Every level of the rule-based ladders of the first ``count`` questions of a JSONL file (deduplicated)."""
    from cpqa.rewrite.rewriter import Rewriter

    rewriter = Rewriter(settings)
    texts = [
        json.loads(line)["question"] for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()
    ][:count]
    levels = [level for text in texts for level in rewriter.rewrite(text).ladder]
    return list(dict.fromkeys(levels))


def record_point(sample: Path, size: int, queries: list[str], rounds: int, workdir: Path | None, engine: str) -> dict:
    result = asdict(run_ingest_bench(sample, size, rounds, workdir, queries=queries, perturb=True, engine=engine))
    result.pop("slowest_queries")
    return result


def vector_point(n: int, queries: int, workdir: Path | None, threads: int) -> dict:
    """The fastest setting of ``VECTOR_SWEEP`` that reaches recall@10 0.95, as ``cpqa bench index`` chooses: a larger
    index crowds more near neighbours into the PQ ranking, so it needs a longer re-scoring shortlist."""
    nprobe, k_factor = (sorted({setting[i] for setting in VECTOR_SWEEP}) for i in (0, 1))
    cfg = BenchConfig(
        n=n,
        queries=queries,
        latency_queries=min(200, queries),
        flat_latency_queries=5,
        nprobe=tuple(nprobe),
        k_factor=tuple(k_factor),
        threads=threads,
        train_size=min(100_000, n),
    )
    report = run_bench(cfg, workdir)
    ivfpq = report["ivfpq"]
    chosen = ivfpq["chosen"]
    return {
        "vectors": n,
        "build_s": ivfpq["build_s"],
        "build_vectors_per_s": round(n / ivfpq["build_s"], 1),
        "resident_bytes_per_vector": ivfpq["resident_bytes_per_vector"],
        "recall@10": chosen["recall@10"],
        "p50_ms": chosen["p50_ms"],
        "p95_ms": chosen["p95_ms"],
        "nprobe": chosen["nprobe"],
        "shortlist": chosen["k_factor"] * cfg.k,
        "flat_p95_ms": report["flat"]["p95_ms"],
        "sweep": [{key: c[key] for key in ("nprobe", "k_factor", "recall@10", "p95_ms")} for c in ivfpq["sweep"]],
    }


def milvus_point(n: int, queries: int, workdir: Path | None) -> dict:
    """milvus-lite (in-process) through the product's ``MilvusIndex``: insert rate, recall@10 against exact search
    (kept as a running top 10, so no second copy of the vectors is held), latency, and the growth of this process's
    resident memory while the vectors went in."""
    from cpqa.documents.milvus_index import MilvusIndex
    from cpqa.documents.vector_index import IndexMeta

    gen = Generator(BenchConfig(n=n))
    probe = gen.sample(queries)
    best = np.full((queries, 10), -np.inf, dtype=np.float32)
    best_ids = np.zeros((queries, 10), dtype=np.int64)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        meta = IndexMeta(model="synthetic", dim=gen.cfg.dim, normalize=False, count=0, backend="milvus")
        index = MilvusIndex(Path(tmp), meta, str(Path(tmp) / "milvus.db"))
        rss_before = _rss_bytes()
        started = time.perf_counter()
        for start in range(0, n, 50_000):
            rows = gen.sample(min(50_000, n - start))
            index.add([str(i) for i in range(start + 1, start + 1 + len(rows))], rows)
            scores = np.concatenate([best, probe @ rows.T], axis=1)
            ids = np.concatenate(
                [best_ids, np.broadcast_to(np.arange(start, start + len(rows)), (queries, len(rows)))], axis=1
            )
            top = np.argsort(-scores, axis=1)[:, :10]
            best, best_ids = np.take_along_axis(scores, top, 1), np.take_along_axis(ids, top, 1)
        insert_s = time.perf_counter() - started
        rss = _rss_bytes() - rss_before
        times, found = [], []
        for row in probe:
            t = time.perf_counter()
            found.append([int(p) - 1 for p, _ in index.search(row[None, :], 10)[0]])
            times.append((time.perf_counter() - t) * 1000)
        index.close()
    recall = float(np.mean([len(set(f) & set(t.tolist())) / 10 for f, t in zip(found, best_ids)]))
    return {
        "vectors": n,
        "index": "FLAT (milvus-lite serves no other)",
        "insert_vectors_per_s": round(n / insert_s, 1),
        "recall@10": round(recall, 4),
        "p50_ms": round(float(np.percentile(times, 50)), 2),
        "p95_ms": round(float(np.percentile(times, 95)), 2),
        "resident_bytes_per_vector": round(rss / n, 1) if rss > 0 else None,
    }


def _swept(point: dict) -> list[tuple[int, int]]:
    return sorted((setting.get("nprobe", 16), setting["k_factor"]) for setting in point.get("sweep", []))


def _rss_bytes() -> int:
    """This process's resident memory now (Linux /proc; milvus-lite runs inside it)."""
    status = Path("/proc/self/status").read_text()
    return next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)


def _curves(points: list[dict], size_key: str, measures: Sequence[str]) -> dict:
    if not points:
        return {}
    sizes = [p[size_key] for p in points]
    return {m: growth(sizes, [p[m] for p in points]) for m in measures if all(m in p for p in points)}


def run_scale(
    settings: Settings,
    sample: Path,
    questions: Path,
    record_sizes: Sequence[int],
    vector_sizes: Sequence[int],
    milvus_sizes: Sequence[int] = (),
    rounds: int = 3,
    queries: int = 300,
    threads: int = 2,
    workdir: Path | None = None,
    say: Callable[[str], None] = lambda _: None,
    save: Path | None = None,
    engines: Sequence[str] = ENGINES,
    resume: dict | None = None,
) -> dict:
    """Every point, smallest first (records: each size in each search engine); with ``save``, the report so far is
    written there after each point (a long run cut short keeps what it measured), and ``resume`` (such a report)
    supplies the points it already holds instead of measuring them again."""
    boolean = ladder_queries(settings, questions)
    report: dict = {
        "machine": {"cpus": os.cpu_count()},
        "boolean_queries": {"from": str(questions), "questions": 50, "ladder_levels": len(boolean)},
        "records": [],
        "vectors": [],
        "milvus": [],
        "resumed_points": 0,
    }
    if resume is not None and resume.get("boolean_queries") != report["boolean_queries"]:
        raise CannotResume("the saved report was measured with other Boolean queries")
    done = {
        (part, p.get("records", p.get("vectors")), p.get("engine")): p
        for part in ("records", "vectors", "milvus")
        for p in (resume or {}).get(part, [])
        if part != "vectors" or _swept(p) == sorted(VECTOR_SWEEP)
    }  # a vector point swept otherwise is redone
    steps: list[tuple[str, int, str | None, Callable[[], dict]]] = [
        ("records", n, engine, partial(record_point, sample, n, boolean, rounds, workdir, engine))
        for engine in engines
        for n in record_sizes
    ]
    steps += [("vectors", n, None, partial(vector_point, n, queries, workdir, threads)) for n in vector_sizes]
    steps += [("milvus", n, None, partial(milvus_point, n, min(queries, 100), workdir)) for n in milvus_sizes]
    for part, n, engine, measure in steps:
        if (part, n, engine) in done:
            report[part].append(done[(part, n, engine)])
            report["resumed_points"] += 1
        else:
            say(f"{part}: {n:,}" + (f" ({engine})" if engine else ""))
            report[part].append(measure())
        by_engine = {e: [p for p in report["records"] if p["engine"] == e] for e in engines}
        report.update(
            records_growth={
                e: _curves(points, "records", RECORD_MEASURES) for e, points in by_engine.items() if points
            },
            vectors_growth=_curves(report["vectors"], "vectors", VECTOR_MEASURES),
            milvus_growth=_curves(report["milvus"], "vectors", MILVUS_MEASURES),
        )
        if save is not None:
            save.parent.mkdir(parents=True, exist_ok=True)
            save.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report
