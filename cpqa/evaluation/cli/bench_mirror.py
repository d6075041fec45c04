"""``cpqa bench mirror``: the E-utilities mirror's throughput and latency under concurrent clients (logic in
``cpqa.evaluation.benchmarks.mirrorbench``)."""

from __future__ import annotations

import typer

from cpqa.cli.common import fail, print_json, require_extra


def mirror(
    clients: list[int] = typer.Option([50, 200], "--clients", help="concurrent clients, one run each"),
    seconds: float = typer.Option(20.0, min=1.0, help="measured seconds per run (after a 3 s warm-up)"),
    workers: int = typer.Option(8, min=1, max=64, help="the mirror's worker threads"),
    json_out: bool = typer.Option(False, "--json", help="print JSON (always JSON; kept for symmetry)"),
) -> None:
    """Mirror load benchmark over the store in CPQA_HOME: requests/s, errors, p50/p95/p99 per client count."""
    require_extra("eval", "Bio")  # Bio.Entrez is one of the clients measured
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.mirrorbench import run_mirror_bench
    from cpqa.sources.store import Store

    settings = get_settings()
    if not settings.store_path.exists():
        fail(f"no local store at {settings.store_path}; run `cpqa ingest pubmed FILE...` first")
    with Store(settings.store_path) as store:
        if store.count() == 0:
            fail(f"the local store is empty ({settings.store_path}); ingest records first")
    if any(n < 1 or n > 2000 for n in clients):
        fail("--clients must be between 1 and 2000")
    print_json(run_mirror_bench(settings.cpqa_home, clients, seconds, workers=workers), settings)
