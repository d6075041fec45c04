"""Shared plumbing of ``cpqa ingest pubmed`` and ``cpqa ingest pmc``: stream record files into the
store with a progress bar (rich) over the bytes read, and print the summary."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from cpqa.sources.ncbi.xmlio import XmlFormatError
from cpqa.sources.store import Kind, Store, UpsertSummary
from cpqa.types import Article

# (open file, list that collects withdrawn PMIDs) -> records
Reader = Callable[[BinaryIO, list[str]], Iterator[tuple[Article, bytes]]]


def ingest_xml_files(
    store: Store,
    paths: Iterable[str | Path],
    reader: Reader,
    kind: Kind,
    progress: bool = False,
    in_order: bool = False,
    on_done: Callable[[Path], None] | None = None,
) -> UpsertSummary:
    """Upsert every record of every file, then remove the PMIDs a file withdraws (``DeleteCitation``);
    a missing or malformed file is reported in ``skipped`` (records read before a syntax error are kept).
    ``in_order``: the files are a sequence (baseline, then updates), so the first that fails stops the run: a later
    update applied before an earlier one would leave the older version of its records. ``on_done(path)`` is
    called after each file loaded whole."""
    summary = UpsertSummary()
    files = [Path(p) for p in paths]
    bar = _progress_bar() if progress else None
    with bar or nullcontext():
        for number, path in enumerate(files, 1):
            failed = len(summary.skipped)
            if not path.is_file():
                summary.skipped.append((str(path), "file not found"))
                if in_order:
                    break
                continue
            label = f"{path.name} ({number}/{len(files)})" if len(files) > 1 else path.name
            task = bar.add_task(label, total=path.stat().st_size) if bar else None
            deleted: list[str] = []
            with path.open("rb") as fh:
                records = _guarded(reader(fh, deleted), path, summary)
                if bar is not None:
                    records = _advancing(records, fh, bar, task)
                summary.merge(store.upsert(records, kind=kind))
            if deleted:
                summary.deleted += store.delete(deleted)
            if bar is not None:
                bar.update(task, completed=path.stat().st_size)
            whole = not any(key == str(path) for key, _ in summary.skipped[failed:])
            if whole and on_done is not None:
                on_done(path)
            if not whole and in_order:
                break
    return summary


def _guarded(
    records: Iterator[tuple[Article, bytes]], path: Path, summary: UpsertSummary
) -> Iterator[tuple[Article, bytes]]:
    try:
        yield from records
    except XmlFormatError as exc:
        summary.skipped.append((str(path), str(exc)))


def _advancing(records: Iterator, fh: BinaryIO, bar, task, every: int = 200) -> Iterator:
    for i, record in enumerate(records, 1):
        if i % every == 0:
            bar.update(task, completed=fh.tell())
        yield record


def _progress_bar():
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())


def report(
    summary: UpsertSummary,
    json_out: bool,
    store_count: int,
    files: Iterable[str | Path] = (),
    extra: dict | None = None,
) -> None:
    """Print the summary: JSON, or a short human-readable block (first 20 skipped reasons). Exits with code 1 when
    any of ``files`` was skipped (missing, empty, malformed, truncated or of another kind), after the summary: the
    records read are kept, and a script must still see that something was not loaded."""
    from cpqa.cli.common import print_json

    names = {str(Path(f)) for f in files}
    failed = sorted({key for key, _ in summary.skipped if key in names})
    payload = {
        "added": summary.added,
        "updated": summary.updated,
        "unchanged": summary.unchanged,
        "deleted": summary.deleted,
        "skipped": len(summary.skipped),
        "skipped_reasons": [list(s) for s in summary.skipped],
        "store_records": store_count,
        "files_skipped": failed,
        **(extra or {}),
    }
    if json_out:
        print_json(payload)
    else:
        _print_summary(summary, store_count)
        built = (extra or {}).get("passages")
        if built:
            import typer

            typer.echo(
                f"passages: {built['segmented']} new record(s) segmented, {built['sentences']} sentences "
                f"embedded in {built['seconds']} s"
            )
    if failed:
        import typer

        typer.echo(f"error: {len(failed)} of {len(names)} file(s) not loaded (reasons above)", err=True)
        raise typer.Exit(1)


def _print_summary(summary: UpsertSummary, store_count: int) -> None:
    from rich.console import Console

    console = Console()
    console.print(
        f"added {summary.added}, updated {summary.updated}, unchanged {summary.unchanged}, "
        f"deleted {summary.deleted}, skipped {len(summary.skipped)}; store now holds {store_count} records"
    )
    for key, reason in summary.skipped[:20]:
        console.print(f"  skipped {key}: {reason}")
    if len(summary.skipped) > 20:
        console.print(f"  ... and {len(summary.skipped) - 20} more")
