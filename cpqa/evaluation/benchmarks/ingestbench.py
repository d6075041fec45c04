"""Ingestion and local-search benchmark: the PubMed sample replicated (PMIDs rewritten; with ``perturb``, a few
abstract words of every copy replaced, so FTS postings are not the sample's repeated) to a target size, streamed
into a fresh store; records/s, bytes per record, and esearch p50/p95 over Boolean queries."""

from __future__ import annotations

import gzip
import random
import re
import resource
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cpqa.sources.ncbi.pubmed_xml import DOCTYPE, iter_pubmed_records
from cpqa.sources.store import Store

SITES = [
    "breast",
    "lung",
    "prostate",
    "colorectal",
    "ovarian",
    "pancreatic",
    "gastric",
    "bladder",
    "cervical",
    "liver",
    "thyroid",
    "skin",
]
TOPICS = ["chemotherapy", "survival", "screening", "radiotherapy", "prognosis", "surgery", "risk", "metastasis"]
# Hand-written queries exercising every operator and tag, as a ladder from the rewriter would.
FIXED_QUERIES = [
    '"breast neoplasms"[mh] AND 2000:2020[dp]',
    "neoplasms[majr] NOT review[pt]",
    "(lung OR pulmonary) AND (cancer OR carcinoma) AND screening",
    "prostat* AND (radiotherapy OR radiation) AND survival",
    '"quality of life" AND cancer AND survivors',
    "leukemia[tiab] OR lymphoma[tiab]",
    "tumor* AND metasta* AND prognosis",
    "cancer[tiab] AND 2010:2024[dp]",
    "(ovarian OR cervical OR endometrial) AND cancer AND surgery",
    "hepatocellular carcinoma[tiab] AND (sorafenib OR resection)",
    "cancer AND review[pt]",
    "gene expression AND breast cancer NOT mice[mh]",
    "melanoma AND (immunotherapy OR interferon)",
    "humans[mh] AND carcinoma[tiab] AND (risk OR incidence) NOT case reports[pt]",
    "cancer",
    "apoptosis AND (p53 OR tp53) AND tumour*",
]
_PMID = re.compile(rb"(<PMID[^>]*>)(\d+)(</PMID>)")
_ARTICLE_ID = re.compile(rb'(<ArticleId IdType="pubmed">)(\d+)(</ArticleId>)')
_ABSTRACT = re.compile(rb"(<AbstractText[^>]*>)(.*?)(</AbstractText>)", re.S)
_WORD = re.compile(rb"[A-Za-z]{4,}")
PERTURBED_WORDS = 8  # abstract words replaced per record in each copy after the first


@dataclass
class IngestBenchResult:
    engine: str  # the store's search engine (cpqa.sources.text_index)
    records: int
    copies: int
    source: str
    write_input_s: float
    ingest_s: float
    records_per_s: float
    ingest_cpu_s: float  # this process's CPU time: steadier than wall time on a shared machine
    records_per_cpu_s: float
    peak_rss_mb: float  # whole process, during this ingestion: the input is streamed, never held whole
    store_bytes: int
    bytes_per_record: float
    raw_xml_bytes_per_record: float
    json_bytes_per_record: float
    queries: int
    query_runs: int
    esearch_p50_ms: float
    esearch_p95_ms: float
    esearch_mean_ms: float
    median_hits: float
    slowest_queries: list[dict]  # query, median ms, hits
    sqlite_version: str


def benchmark_queries() -> list[str]:
    """Site x topic queries derived from cancer terms, plus the hand-written ones."""
    derived = [f"{site} cancer[tiab] AND {topic}" for site in SITES for topic in TOPICS[:4]]
    return derived + FIXED_QUERIES


def perturbed(raw: bytes, rng: random.Random, pool: list[bytes]) -> bytes:
    """``raw`` with ``PERTURBED_WORDS`` abstract words swapped for words drawn from ``pool``."""

    def swap(match: re.Match) -> bytes:
        words = list(_WORD.finditer(match.group(2)))
        if not words:
            return match.group(0)
        body, last, out = match.group(2), 0, []
        for word in sorted(rng.sample(words, min(PERTURBED_WORDS, len(words))), key=lambda w: w.start()):
            out += [body[last : word.start()], rng.choice(pool)]
            last = word.end()
        return match.group(1) + b"".join(out) + body[last:] + match.group(3)

    return _ABSTRACT.sub(swap, raw, count=1)


def write_replicated(sample: Path, target: int, out: Path, perturb: bool = False) -> tuple[int, int]:
    """Write ``sample``'s records again and again to ``out`` (gzip) until ``target`` records; copy k>0
    gets PMIDs k*10^9 + original (and, with ``perturb``, its own word swaps). Returns (records written, copies)."""
    records = [raw for _, raw in iter_pubmed_records(sample)]
    pool = sorted({w for raw in records[:500] for m in _ABSTRACT.finditer(raw) for w in _WORD.findall(m.group(2))})
    copies = -(-target // len(records))
    written = 0
    with gzip.open(out, "wb", compresslevel=1) as fh:
        fh.write(b'<?xml version="1.0" ?>\n' + DOCTYPE + b"\n<PubmedArticleSet>\n")
        for copy in range(copies):
            offset = copy * 1_000_000_000

            def shift(match: re.Match) -> bytes:
                return match.group(1) + str(int(match.group(2)) + offset).encode() + match.group(3)

            rng = random.Random(copy)
            for raw in records[: target - written]:
                if offset:
                    raw = _ARTICLE_ID.sub(shift, _PMID.sub(shift, raw, count=1), count=1)
                    if perturb:
                        raw = perturbed(raw, rng, pool)
                fh.write(raw + b"\n")
                written += 1
        fh.write(b"</PubmedArticleSet>\n")
    return written, copies


def _reset_peak_rss() -> None:
    """Start this process's peak-memory mark afresh (Linux), so that each point of a multi-size run is its own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass  # elsewhere the peak is the process's lifetime peak


def _peak_rss_kb() -> int:
    """Peak resident memory since the last reset (Linux ``VmHWM``), else the process's lifetime peak."""
    try:
        status = Path("/proc/self/status").read_text()
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_ingest_bench(
    sample: Path,
    target: int = 100_000,
    rounds: int = 5,
    workdir: Path | None = None,
    queries: list[str] | None = None,
    perturb: bool = False,
    engine: str = "fts5",
) -> IngestBenchResult:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp_path = Path(tmp)
        source = tmp_path / "replicated.xml.gz"
        start = time.perf_counter()
        written, copies = write_replicated(sample, target, source, perturb=perturb)
        write_s = time.perf_counter() - start
        db = tmp_path / "store.sqlite"
        _reset_peak_rss()
        with Store(db, engine=engine) as store:
            start, cpu_start = time.perf_counter(), time.process_time()
            summary = store.upsert(iter_pubmed_records(source), kind="pubmed")
            ingest_s, ingest_cpu = time.perf_counter() - start, time.process_time() - cpu_start
            peak_rss_kb = _peak_rss_kb()
            if summary.added != written:
                raise RuntimeError(f"ingested {summary.added} of {written} records: {summary.skipped[:3]}")
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            raw_bytes, json_bytes = conn.execute(
                "SELECT sum(length(pm_raw)), sum(length(pm_data)) FROM articles"
            ).fetchone()
            conn.close()
            store_bytes = sum(
                p.stat().st_size for pattern in ("store.sqlite*", "store.tantivy/*") for p in tmp_path.glob(pattern)
            )
            queries = queries or benchmark_queries()
            counts = [store.search(q, retmax=20).count for q in queries]  # warm-up
            per_query: dict[str, list[float]] = {q: [] for q in queries}
            for _ in range(rounds):
                for q in queries:
                    t0 = time.perf_counter()
                    store.search(q, retmax=20)
                    per_query[q].append((time.perf_counter() - t0) * 1000.0)
    latencies = sorted(ms for runs in per_query.values() for ms in runs)
    slowest = sorted(
        ((statistics.median(runs), q, n) for (q, runs), n in zip(per_query.items(), counts)), reverse=True
    )[:5]
    return IngestBenchResult(
        engine=engine,
        records=written,
        copies=copies,
        source=f"{sample.name} x{copies}, PMIDs rewritten{', abstract words swapped' if perturb else ''}",
        write_input_s=round(write_s, 2),
        ingest_s=round(ingest_s, 2),
        records_per_s=round(written / ingest_s, 1),
        ingest_cpu_s=round(ingest_cpu, 2),
        records_per_cpu_s=round(written / ingest_cpu, 1),
        peak_rss_mb=round(peak_rss_kb / 1024, 1),
        store_bytes=store_bytes,
        bytes_per_record=round(store_bytes / written, 1),
        raw_xml_bytes_per_record=round(raw_bytes / written, 1),
        json_bytes_per_record=round(json_bytes / written, 1),
        queries=len(queries),
        query_runs=len(latencies),
        esearch_p50_ms=round(statistics.median(latencies), 2),
        esearch_p95_ms=round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 2),
        esearch_mean_ms=round(statistics.fmean(latencies), 2),
        median_hits=statistics.median(counts),
        slowest_queries=[{"query": q, "median_ms": round(ms, 2), "hits": n} for ms, q, n in slowest],
        sqlite_version=sqlite3.sqlite_version,
    )
