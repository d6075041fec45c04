"""``cpqa bench index``: flat vs IVF-PQ + exact re-scoring on clustered synthetic 768-d vectors, extrapolated to
PubMed (logic in ``cpqa.evaluation.benchmarks.indexbench``)."""

from __future__ import annotations

from pathlib import Path

import typer

from cpqa.cli.common import fail, print_json


def index(
    n: int = typer.Option(1_000_000, "--n", help="number of synthetic vectors"),
    queries: int = typer.Option(300, help="queries for recall@10"),
    pq_m: int = typer.Option(64, help="PQ bytes per vector"),
    points_per_list: int = typer.Option(1000, help="vectors per IVF list (nlist = n / this)"),
    threads: int = typer.Option(2, help="FAISS threads"),
    workdir: Path = typer.Option(None, help="where the temporary index files go (default: system temp)"),
    json_out: bool = typer.Option(False, "--json", help="print JSON (always JSON; kept for symmetry)"),
) -> None:
    """Vector index scale benchmark: bytes/vector, build time, recall@10 vs exact, p50/p95 latency."""
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.indexbench import BenchConfig, run_bench

    if n < 10 * points_per_list:
        fail(f"--n must be at least 10 x --points-per-list ({10 * points_per_list})")
    cfg = BenchConfig(
        n=n, queries=queries, pq_m=pq_m, points_per_list=points_per_list, threads=threads, train_size=min(100_000, n)
    )
    print_json(run_bench(cfg, workdir), get_settings())
