"""``cpqa ingest pmc FILE...``: PMC JATS full texts (efetch ``pmc-articleset`` or bare ``<article>``,
``.gz`` ok) into the local store; an article whose PMID is stored already gains its full text."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import typer

from cpqa.sources.ncbi.jats import iter_pmc_records
from cpqa.sources.store import Store, UpsertSummary
from ingestion.xml_files import ingest_xml_files, report


def ingest_pmc_files(store: Store, paths: Sequence[str | Path], progress: bool = False) -> UpsertSummary:
    """Upsert every JATS article in ``paths`` (merged into the PubMed row with the same PMID)."""
    return ingest_xml_files(store, paths, lambda fh, _deleted: iter_pmc_records(fh), "pmc", progress=progress)


def ingest_pmc_command(
    files: list[Path] = typer.Argument(..., help="PMC JATS files (pmc-articleset or <article>; .gz ok)"),
    passages: bool = typer.Option(
        True,
        "--passages/--no-passages",
        help="segment the new records into the passage store when the data home has one (`cpqa index build` made it)",
    ),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON, no progress bar"),
) -> None:
    """Load PMC full-text articles into the local store (idempotent)."""
    from cpqa.config import get_settings

    from ingestion.passage_build import passages_after_ingest

    settings = get_settings()
    with Store(settings.store_path) as store:
        summary = ingest_pmc_files(store, files, progress=not json_out)
        built = passages_after_ingest(settings, store, summary.added + summary.updated, passages)
        report(summary, json_out, store.count(), files, extra={"passages": built})
