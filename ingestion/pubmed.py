"""``cpqa ingest pubmed FILE...`` / ``--from-dir DIR``: PubMed XML (efetch answers, NCBI's annual baseline and daily
update files, ``.gz``) into the local store.

``--from-dir`` takes a folder of baseline and update files (``pubmed25n0001.xml.gz`` ...) in their numbered order,
applying each update's deletions, and resumes: the store records each file it finished (name and size), and a
second run skips those. The first file that fails stops the run, so no update is applied out of order."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import typer

from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from cpqa.sources.store import Store, UpsertSummary
from ingestion.xml_files import ingest_xml_files, report

_NUMBER = re.compile(r"n(\d+)\.xml(?:\.gz)?$")
LEDGER = "ingested:pubmed:"  # meta key prefix: one entry per finished file


def ingest_pubmed_files(store: Store, paths: list[str | Path], progress: bool = False) -> UpsertSummary:
    """Upsert every PubMed record in ``paths`` and apply update files' deletions; ingesting the same
    files again changes nothing."""
    return ingest_xml_files(store, paths, iter_pubmed_records, "pubmed", progress=progress)


def baseline_files(folder: Path) -> list[Path]:
    """The folder's PubMed XML files in NCBI's order: by file number (updates continue the baseline's), then name."""
    files = [p for p in folder.iterdir() if p.is_file() and p.name.endswith((".xml", ".xml.gz"))]
    return sorted(files, key=lambda p: (int(m.group(1)) if (m := _NUMBER.search(p.name)) else 10**9, p.name))


def finished(store: Store, path: Path) -> bool:
    entry = store.meta(LEDGER + path.name)
    return entry is not None and json.loads(entry).get("size") == path.stat().st_size


def ingest_pubmed_folder(store: Store, folder: Path, progress: bool = False) -> tuple[UpsertSummary, list[Path]]:
    """Ingest the folder's files not yet finished, in order; returns the summary and the files it skipped as done."""
    files = baseline_files(folder)
    done = [p for p in files if finished(store, p)]
    todo = [p for p in files if p not in done]

    def record(path: Path) -> None:
        store.set_meta(
            LEDGER + path.name,
            json.dumps({"size": path.stat().st_size, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}),
        )

    summary = ingest_xml_files(
        store, todo, iter_pubmed_records, "pubmed", progress=progress, in_order=True, on_done=record
    )
    return summary, done


def ingest_pubmed_command(
    files: list[Path] = typer.Argument(None, help="PubMed XML files (PubmedArticleSet; .gz ok)"),
    from_dir: Path = typer.Option(
        None,
        "--from-dir",
        help="a folder of baseline and update files, loaded in order "
        "and resumably (files already finished are skipped)",
    ),
    engine: str = typer.Option(
        None,
        "--engine",
        help="the store's search engine: fts5 (a new store's default) or "
        "tantivy (for mirrors past ~100k records); an existing store "
        "of the other engine is re-indexed first",
    ),
    passages: bool = typer.Option(
        True,
        "--passages/--no-passages",
        help="segment the new records into the passage store when the data home has one (`cpqa index build` made it)",
    ),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON, no progress bar"),
) -> None:
    """Load PubMed XML records into the local store (idempotent: unchanged records are skipped)."""
    from cpqa.cli.common import fail
    from cpqa.config import get_settings
    from cpqa.sources.text_index import check_engine

    if bool(files) == (from_dir is not None):
        fail("give PubMed XML files, or --from-dir DIR (not both)")
    if from_dir is not None and not from_dir.is_dir():
        fail(f"not a folder: {from_dir}")
    try:
        engine = check_engine(engine) if engine is not None else None
    except ValueError as exc:
        fail(str(exc))
    from ingestion.passage_build import passages_after_ingest

    settings = get_settings()
    with Store(settings.store_path, engine=engine) as store:
        if from_dir is None:
            summary = ingest_pubmed_files(store, files, progress=not json_out)
            built = passages_after_ingest(settings, store, summary.added + summary.updated, passages)
            report(summary, json_out, store.count(), files, extra={"search_engine": store.engine, "passages": built})
            return
        summary, done = ingest_pubmed_folder(store, from_dir, progress=not json_out)
        todo = [p for p in baseline_files(from_dir) if p not in done]
        failed = {key for key, _ in summary.skipped}
        waiting = [p.name for p in todo if not finished(store, p) and str(p) not in failed]
        if not json_out and done:
            typer.echo(f"{len(done)} file(s) already loaded earlier, skipped")
        if not json_out and waiting:
            typer.echo(f"{len(waiting)} later file(s) not loaded: fix the failed file and run again to resume")
        built = passages_after_ingest(settings, store, summary.added + summary.updated, passages)
        report(
            summary,
            json_out,
            store.count(),
            todo,
            extra={
                "files_already_done": len(done),
                "files_waiting": waiting,
                "search_engine": store.engine,
                "passages": built,
            },
        )
