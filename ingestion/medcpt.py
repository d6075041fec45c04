"""``cpqa ingest medcpt DIR``: NCBI's precomputed MedCPT article embeddings into the vector index and store.

Layout (https://ftp.ncbi.nlm.nih.gov/pub/lu/MedCPT/pubmed_embeddings/): ``embeds_chunk_N.npy`` (float32
(rows, 768), MedCPT-Article-Encoder [CLS] vectors, searched by inner product), ``pmids_chunk_N.json`` (the PMID
of every row) and ``pubmed_chunk_N.json`` ({pmid: {"d": date, "t": title, "a": abstract, "m": "mesh|terms|"}}).
A chunk is about 3 GB: each is memory-mapped and added in slices, one chunk at a time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import typer

from cpqa.config import Settings
from cpqa.models.encoders import MEDCPT_ARTICLE
from cpqa.types import AbstractSection, Article, MeshHeading
from cpqa.documents.vector_index import IndexMeta
from cpqa.documents.vectorstore import build_ivfpq, index_options, open_index

SLICE_ROWS = 50_000
_CHUNK = re.compile(r"embeds_chunk_(\d+)\.npy$")


@dataclass
class MedCPTSummary:
    chunks: int = 0
    vectors_added: int = 0
    vectors_skipped: int = 0  # already in the index (resumed ingest)
    records_added: int = 0
    records_kept: int = 0  # already in the store from richer XML; not overwritten
    index_kind: str = "flat"
    problems: list[str] = field(default_factory=list)


def find_chunks(directory: Path) -> list[int]:
    """Chunk numbers present in ``directory``, checking each has its PMID list."""
    numbers = sorted(int(m.group(1)) for p in directory.iterdir() if (m := _CHUNK.search(p.name)))
    if not numbers:
        raise FileNotFoundError(f"no embeds_chunk_N.npy files in {directory}")
    for n in numbers:
        if not (directory / f"pmids_chunk_{n}.json").exists():
            raise FileNotFoundError(f"embeds_chunk_{n}.npy has no pmids_chunk_{n}.json beside it")
    return numbers


def record_to_article(pmid: str, rec: dict) -> Article:
    """One ``pubmed_chunk_N.json`` entry as an Article (date "YYYY-MM-DD" or empty; MeSH "a|b|")."""
    date = (rec.get("d") or "").strip()
    year = int(date[:4]) if date[:4].isdigit() else None
    abstract = (rec.get("a") or "").strip()
    return Article(
        pmid=str(pmid),
        title=(rec.get("t") or "").strip(),
        abstract_sections=[AbstractSection(text=abstract)] if abstract else [],
        mesh=[MeshHeading(descriptor=t) for t in (rec.get("m") or "").split("|") if t.strip()],
        year=year,
        pub_date=date or None,
    )


def iter_chunk_slices(directory: Path, n: int, slice_rows: int = SLICE_ROWS) -> Iterator[tuple[list[str], np.ndarray]]:
    """(pmids, float32 rows) slices of one chunk, read through a memory map."""
    embeds = np.load(directory / f"embeds_chunk_{n}.npy", mmap_mode="r")
    pmids = [str(p) for p in json.loads((directory / f"pmids_chunk_{n}.json").read_text())]
    if embeds.ndim != 2 or embeds.shape[0] != len(pmids):
        raise ValueError(f"chunk {n}: {embeds.shape} embeddings for {len(pmids)} PMIDs")
    for start in range(0, len(pmids), slice_rows):
        yield pmids[start : start + slice_rows], np.asarray(embeds[start : start + slice_rows], dtype=np.float32)


def ingest_medcpt(
    settings: Settings,
    directory: Path,
    *,
    index_kind: str = "flat",
    store=None,
    slice_rows: int = SLICE_ROWS,
    progress: bool = False,
    **ivfpq_options,
) -> MedCPTSummary:
    """Add every chunk's vectors to the index and its records to the store (when given); resumable."""
    directory = Path(directory)
    if index_kind == "ivfpq" and settings.cpqa_vector_store != "faiss":
        raise ValueError("--index ivfpq applies to the FAISS backend; Milvus builds its own index")
    summary = MedCPTSummary(index_kind=index_kind)
    chunks = find_chunks(directory)
    dim = int(np.load(directory / f"embeds_chunk_{chunks[0]}.npy", mmap_mode="r").shape[1])
    meta = IndexMeta(model=MEDCPT_ARTICLE, dim=dim, normalize=False)
    with open_index(settings, create=meta) as index:
        present = index.id_set()
        for n in chunks:
            summary.chunks += 1
            for pmids, vectors in _progress(iter_chunk_slices(directory, n, slice_rows), progress, f"chunk {n}"):
                fresh = [i for i, p in enumerate(pmids) if p not in present]
                summary.vectors_skipped += len(pmids) - len(fresh)
                if fresh:
                    index.add([pmids[i] for i in fresh], vectors[fresh])
                    present.update(pmids[i] for i in fresh)
                    summary.vectors_added += len(fresh)
            if store is not None:
                _store_records(store, directory / f"pubmed_chunk_{n}.json", summary)
    if index_kind == "ivfpq":
        build_ivfpq(settings.index_dir, **ivfpq_options)
    return summary


def _store_records(store, path: Path, summary: MedCPTSummary) -> None:
    if not path.exists():
        summary.problems.append(f"{path.name} missing: vectors added without records")
        return
    records = json.loads(path.read_text())
    existing = store.get_many(list(records))
    summary.records_kept += len(existing)
    fresh = [(record_to_article(p, r), None) for p, r in records.items() if p not in existing]
    result = store.upsert(fresh)
    summary.records_added += result.added


def _progress(items, enabled: bool, label: str):
    if not enabled:
        yield from items
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=None)
        for item in items:
            yield item
            bar.advance(task, len(item[0]))


def ingest_medcpt_command(
    directory: Path = typer.Argument(..., exists=True, file_okay=False, help="folder of NCBI MedCPT chunks"),
    index: str = typer.Option("flat", help="flat (exact) or ivfpq (IVF-PQ + exact re-scoring)"),
    nlist: int = typer.Option(0, help="IVF lists (0: about 4 sqrt(n))"),
    pq_m: int = typer.Option(64, help="PQ bytes per vector"),
    nprobe: int = typer.Option(32, help="IVF lists probed per query"),
    no_store: bool = typer.Option(False, "--no-store", help="add vectors only, not records"),
    json_out: bool = typer.Option(False, "--json", help="no progress bar"),
) -> None:
    """Load NCBI MedCPT chunks (embeds_chunk_N.npy, pmids_chunk_N.json, pubmed_chunk_N.json) from DIRECTORY.

    --index ivfpq trains IVF-PQ on a sample (exact re-scoring from the mmapped vectors); --no-store skips records.
    """
    from cpqa.cli.common import fail, print_json
    from cpqa.config import get_settings
    from cpqa.sources.store import Store

    settings = get_settings()
    try:
        options = index_options(index, m=pq_m, nprobe=nprobe, nlist=nlist)
    except ValueError as exc:
        fail(str(exc))
    try:
        if no_store:
            summary = ingest_medcpt(settings, directory, index_kind=index, progress=not json_out, **options)
        else:
            with Store(settings.store_path) as store:
                summary = ingest_medcpt(
                    settings, directory, index_kind=index, store=store, progress=not json_out, **options
                )
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    print_json(summary.__dict__, settings)
