"""``cpqa ingest pubmed FILE...``: PubMed XML (efetch answers, annual baseline / update files, ``.gz``)
into the local store."""

from __future__ import annotations

from pathlib import Path

import typer

from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from cpqa.sources.store import Store, UpsertSummary
from ingestion.xml_files import ingest_xml_files, report


def ingest_pubmed_files(store: Store, paths: list[str | Path], progress: bool = False) -> UpsertSummary:
    """Upsert every PubMed record in ``paths`` and apply update files' deletions; ingesting the same
    files again changes nothing."""
    return ingest_xml_files(store, paths, iter_pubmed_records, "pubmed", progress=progress)


def ingest_pubmed_command(
    files: list[Path] = typer.Argument(..., help="PubMed XML files (PubmedArticleSet; .gz ok)"),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON, no progress bar"),
) -> None:
    """Load PubMed XML records into the local store (idempotent: unchanged records are skipped)."""
    from cpqa.config import get_settings

    settings = get_settings()
    with Store(settings.store_path) as store:
        summary = ingest_pubmed_files(store, files, progress=not json_out)
        report(summary, json_out, store.count(), files)
