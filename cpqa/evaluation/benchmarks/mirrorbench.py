"""Throughput and latency of the E-utilities mirror under concurrent clients (``cpqa bench mirror``).

The mirror runs as its own process (``cpqa mirror serve``), as it is deployed; the load comes from this process:
``clients`` concurrent connections, each sending its next request as soon as the last is answered, for
``seconds`` after a warm-up. The mix is what the E2 ladder sends: three esearch (retmax 100) over the ingest
benchmark's Boolean queries for each efetch (POST) of 20 PMIDs those queries found. Both sides share the
machine's cores, so the figures are a floor for a mirror on a machine of its own.
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from Bio import Entrez

from cpqa.evaluation.benchmarks.ingestbench import benchmark_queries

ESEARCH_PER_EFETCH = 3


@dataclass
class LoadResult:
    clients: int
    seconds: float
    requests: int
    errors: int
    requests_per_s: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    esearch_p95_ms: float
    efetch_p95_ms: float
    error_kinds: dict[str, int] = field(default_factory=dict)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1) if ordered else 0.0


class MirrorProcess:
    """``cpqa mirror serve --port 0`` over the store in ``home``, stopped on exit."""

    def __init__(self, home: Path, workers: int):
        env = {**os.environ, "CPQA_HOME": str(home)}
        command = [sys.executable, "-m", "cpqa.cli", "mirror", "serve", "--port", "0", "--workers", str(workers)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        stdout, stderr = self.process.stdout, self.process.stderr
        assert stdout is not None and stderr is not None  # both piped above
        line = stdout.readline()
        if " on " not in line:
            self.process.kill()
            raise RuntimeError(f"the mirror did not start: {line}{stderr.read()[:500]}")
        self.url = line.split(" on ", 1)[1].split()[0]

    def __enter__(self) -> "MirrorProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _requests(url: str) -> list[tuple[str, str, dict]]:
    """The request mix: (kind, method, params), esearch and efetch interleaved 3:1."""
    mix = []
    with httpx.Client(timeout=60) as client:
        for term in benchmark_queries():
            params = {"db": "pubmed", "term": term, "retmax": "100"}
            mix.append(("esearch", "GET", params))
            if len(mix) % (ESEARCH_PER_EFETCH + 1) == ESEARCH_PER_EFETCH:
                found = Entrez.read(io.BytesIO(client.get(url + "esearch.fcgi", params=params).content))["IdList"]
                mix.append(("efetch", "POST", {"db": "pubmed", "id": ",".join(found[:20]) or "1"}))
    return mix


async def _load(url: str, mix: list[tuple[str, str, dict]], clients: int, seconds: float, warmup: float) -> LoadResult:
    latencies: dict[str, list[float]] = {"esearch": [], "efetch": []}
    errors: dict[str, int] = {}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        started = time.perf_counter()
        measure_from, stop_at = started + warmup, started + warmup + seconds

        async def one_client(offset: int) -> None:
            i = offset
            while (now := time.perf_counter()) < stop_at:
                kind, method, params = mix[i % len(mix)]
                i += clients
                try:
                    if method == "GET":
                        reply = await client.get(url + f"{kind}.fcgi", params=params)
                    else:
                        reply = await client.post(url + f"{kind}.fcgi", data=params)
                    failed = (
                        None
                        if reply.status_code == 200 and b"<ERROR>" not in reply.content[:4096]
                        else f"HTTP {reply.status_code}"
                    )
                except httpx.HTTPError as exc:
                    failed = type(exc).__name__
                if now >= measure_from:
                    if failed:
                        errors[failed] = errors.get(failed, 0) + 1
                    else:
                        latencies[kind].append((time.perf_counter() - now) * 1000.0)

        await asyncio.gather(*(one_client(k) for k in range(clients)))
    answered = latencies["esearch"] + latencies["efetch"]
    return LoadResult(
        clients=clients,
        seconds=seconds,
        requests=len(answered) + sum(errors.values()),
        errors=sum(errors.values()),
        requests_per_s=round(len(answered) / seconds, 1),
        p50_ms=round(statistics.median(answered), 1) if answered else 0.0,
        p95_ms=_percentile(answered, 0.95),
        p99_ms=_percentile(answered, 0.99),
        esearch_p95_ms=_percentile(latencies["esearch"], 0.95),
        efetch_p95_ms=_percentile(latencies["efetch"], 0.95),
        error_kinds=errors,
    )


def run_mirror_bench(
    home: Path, clients: list[int], seconds: float = 20.0, warmup: float = 3.0, workers: int = 8
) -> dict:
    with MirrorProcess(home, workers) as mirror:
        mix = _requests(mirror.url)
        runs = [asyncio.run(_load(mirror.url, mix, n, seconds, warmup)) for n in clients]
    return {
        "server": f"cpqa mirror serve (uvicorn, {workers} workers), own process",
        "cpus": os.cpu_count(),
        "request_mix": f"{ESEARCH_PER_EFETCH} esearch (retmax 100) : 1 efetch (20 PMIDs, POST)",
        "distinct_requests": len(mix),
        "runs": [run.__dict__ for run in runs],
    }
