"""``cpqa bench ingest``: ingestion speed, store size and local esearch latency (logic in
``cpqa.evaluation.benchmarks.ingestbench``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer

from cpqa.cli.common import fail, print_json
from cpqa.evaluation.data.shared import SHARED_DATA

DEFAULT_SAMPLE = SHARED_DATA / "corpus" / "pubmed_sample.xml.gz"


def ingest(
    records: int = typer.Option(100_000, help="records to ingest (the sample is replicated with new PMIDs)"),
    sample: Path = typer.Option(DEFAULT_SAMPLE, help="PubMed XML sample to replicate"),
    rounds: int = typer.Option(5, help="timed passes over the query set"),
    engine: str = typer.Option("fts5", help="the store's search engine: fts5 or tantivy"),
    workdir: Path = typer.Option(None, help="where the temporary input and store go (default: system temp)"),
    json_out: bool = typer.Option(False, "--json", help="print JSON (always JSON; kept for symmetry)"),
) -> None:
    """Ingestion and local search benchmark: records/s, bytes/record, esearch p50/p95 over Boolean queries."""
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.ingestbench import run_ingest_bench

    if not sample.is_file():
        fail(f"sample not found: {sample} (pass --sample)")
    if records < 1 or rounds < 1:
        fail("--records and --rounds must be positive")
    print_json(asdict(run_ingest_bench(sample, records, rounds, workdir, engine=engine)), get_settings())
