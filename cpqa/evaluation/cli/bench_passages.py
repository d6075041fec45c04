"""``cpqa bench passages``: passage-layer build rate and passage-retrieval latency at scale (logic in
``cpqa.evaluation.benchmarks.passagebench``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import fail, print_json


def passages(
    sizes: list[int] = typer.Option([22_845, 100_000], "--size", help="store sizes in records (repeatable)"),
    build_records: int = typer.Option(200, "--build-records", min=1, help="records segmented to measure the build"),
    queries: int = typer.Option(40, "--queries", min=1, help="retrievals timed per size"),
    candidates: int = typer.Option(50, "--candidates", min=1, help="records whose passages each retrieval ranks"),
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="where the temporary stores go (default: temp)"),
    json_out: bool = typer.Option(False, "--json", help="print JSON only (no progress lines)"),
) -> None:
    """Passage layer: build rate (records, sentences, passages per second; bytes; CPU hours per million records)
    and passage-retrieval p50 / p95 at each store size."""
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.passagebench import run
    from cpqa.models.encoders import ModelUnavailable

    if any(s < 1 for s in sizes):
        fail("--size must be positive")
    settings = get_settings()
    if not settings.store_path.exists():
        fail(f"no store at {settings.store_path}: run `cpqa ingest pubmed FILE` first")
    try:
        result = run(
            settings,
            sizes,
            build_records=build_records,
            queries=queries,
            candidates=candidates,
            workdir=workdir,
            progress=None if json_out else typer.echo,
        )
    except (ValueError, ModelUnavailable) as exc:
        fail(str(exc))
    print_json(result.model_dump(mode="json"), settings)
