"""``cpqa index build``: embed the store's records with the configured article encoder into the vector index.

MedCPT article encoder (paper profile): [title, abstract] pairs, 512 tokens. MiniLM (offline): "title. abstract".
Resumable: records whose PMID is already in the index are skipped, and rows are flushed as they are written. A record
revised since the index last covered the store (a PubMed update file, a re-read under a new cleaning:
``IndexMeta.store_updated``) is embedded again, its new vector in place of the old. An index an earlier revision of
the encoder trained here built is emptied and built again (``BuildSummary.replaced``); another encoder's is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

import typer

from cpqa.config import Settings
from cpqa.models.encoders import MEDCPT_ARTICLE, TextEncoder, load_encoder
from cpqa.types import Article
from cpqa.documents.vector_index import META_FILE, IndexMeta
from cpqa.documents.vectorstore import build_ivfpq, index_options, open_index


@dataclass
class BuildSummary:
    model: str
    dim: int
    embedded: int = 0
    reembedded: int = 0  # of those, records the index held that were revised since it last covered the store
    skipped_present: int = 0
    skipped_empty: int = 0
    total_in_index: int = 0
    index_kind: str = "flat"
    bm25_documents: int = 0  # the plain-BM25 index (HSRDR's optional third path), rebuilt alongside
    learned_terms: int = 0  # local Automatic Term Mapping links learned from the records (ingestion.term_links)
    passages: dict | None = None  # the eager passage build (--passages): ingestion.passage_build.PassageBuildSummary
    device: str = "cpu"  # where the encoders ran
    replaced: str | None = None  # the encoder of an index built before by another one, emptied and built again


def article_text(article: Article, encoder_name: str) -> str:
    """The text an article encoder sees; MedCPT takes a (title, abstract) pair, given as "title\\tabstract"."""
    if encoder_name == MEDCPT_ARTICLE:
        return f"{article.title}\t{article.abstract}"
    return article.title_and_abstract


def build_index(
    settings: Settings,
    store,
    *,
    encoder: TextEncoder | None = None,
    batch_size: int = 64,
    flush_every: int = 512,
    index_kind: str = "flat",
    progress: bool = False,
    **ivfpq_options,
) -> BuildSummary:
    if index_kind == "ivfpq" and settings.cpqa_vector_store != "faiss":
        raise ValueError("--index ivfpq applies to the FAISS backend; Milvus builds its own index")
    if encoder is None:
        encoder, _ = load_encoder("article_encoder", settings)
    summary = BuildSummary(model=encoder.name, dim=encoder.dim, index_kind=index_kind)
    meta = IndexMeta(model=encoder.name, dim=encoder.dim, normalize=encoder.normalize)
    total = store.count()
    through = store.last_update()  # read first: a record revised while this build runs is embedded next time
    previous, built = _previous_build(settings)  # before opening, which writes the metadata again
    if previous is not None and (previous.model, previous.dim) != (encoder.name, encoder.dim):
        summary.replaced = previous.model  # open_index empties it (or refuses it, and nothing is built)
    with open_index(settings, create=meta) as index, _bar(progress, total) as advance:
        present = index.id_set()
        since = index.meta.store_updated if index.meta.store_updated is not None else built
        revised = store.updated_since(since) & present if since is not None else set()
        pending: list[Article] = []

        def flush() -> None:
            texts = [article_text(a, encoder.name) for a in pending]
            vectors = encoder.encode(texts, batch_size=batch_size)
            again = np.asarray([a.pmid in revised for a in pending], dtype=bool)  # a revised record keeps its row
            if again.any():
                index.replace([a.pmid for a, r in zip(pending, again) if r], vectors[again])
            if not again.all():
                index.add([a.pmid for a, r in zip(pending, again) if not r], vectors[~again])
            summary.embedded += len(pending)
            advance(len(pending))
            pending.clear()

        for article in store.iter_articles():
            if not article.pmid:
                continue
            if article.pmid in present and article.pmid not in revised:
                summary.skipped_present += 1
                advance(1)
            elif not (article.title or article.abstract):
                summary.skipped_empty += 1
                advance(1)
            else:
                summary.reembedded += article.pmid in revised
                pending.append(article)
                if len(pending) >= flush_every:
                    flush()
        if pending:
            flush()
        summary.total_in_index = len(index)
        index.meta.store_updated = through
    if index_kind == "ivfpq":
        build_ivfpq(settings.index_dir, **ivfpq_options)
    return summary


def _previous_build(settings: Settings) -> tuple[IndexMeta | None, float | None]:
    """The index's metadata, if any, and when it was last written: for an index that predates
    ``IndexMeta.store_updated``, when it last covered the store."""
    path = settings.index_dir / META_FILE
    if not path.exists():
        return None, None
    return IndexMeta.load(settings.index_dir), path.stat().st_mtime


class _bar:
    """A rich progress bar on stderr, or nothing."""

    def __init__(self, enabled: bool, total: int, label: str = "embedding records"):
        self.enabled, self.total, self.label = enabled, total, label

    def __enter__(self):
        if not self.enabled:
            return lambda n: None
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(console=Console(stderr=True))
        self._progress.__enter__()
        task = self._progress.add_task(self.label, total=self.total)
        return lambda n: self._progress.advance(task, n)

    def __exit__(self, *exc):
        if self.enabled:
            self._progress.__exit__(*exc)


def index_build_command(
    index: str = typer.Option("flat", help="flat (exact) or ivfpq (IVF-PQ + exact re-scoring, PubMed scale)"),
    batch_size: int = typer.Option(64, help="encoder batch size"),
    pq_m: int = typer.Option(64, help="PQ bytes per vector (ivfpq)"),
    nprobe: int = typer.Option(32, help="IVF lists probed per query (ivfpq)"),
    passages: bool = typer.Option(
        True,
        "--passages/--no-passages",
        help="also segment every record not yet "
        "segmented with SEOS and store its layout and sentence vectors now (eager, "
        "resumable), so questions find them; --no-passages leaves them to first sight",
    ),
    passage_limit: Optional[int] = typer.Option(
        None, "--passage-limit", min=1, help="segment only the first N records"
    ),
    device: Optional[str] = typer.Option(
        None,
        "--device",
        help="where the encoders run: cpu, cuda, cuda:N, mps or "
        "auto (a GPU when present); default CPQA_DEVICE, else cpu",
    ),
    json_out: bool = typer.Option(False, "--json", help="no progress bar"),
) -> None:
    """Embed the store's records with the configured article encoder (resumable), index them for plain BM25, learn
    the local term-mapping links (MeSH headings and abbreviations) from them, and build the
    persistent SEOS passage layer (resumable; ``--no-passages`` skips it)."""
    from cpqa.cli.common import fail, print_json
    from cpqa.config import get_settings
    from cpqa.documents.bm25 import Bm25Index
    from cpqa.models.encoders import ModelUnavailable, resolve_device
    from cpqa.rewrite.vocabulary import learned_terms_path, load_vocabulary, save_terms
    from cpqa.sources.store import Store
    from ingestion.term_links import learn_terms

    settings = get_settings(**({"cpqa_device": device} if device else {}))
    try:
        options = index_options(index, m=pq_m, nprobe=nprobe)
        device_used = resolve_device(settings.cpqa_device)
    except (ValueError, ModelUnavailable) as exc:
        fail(str(exc))
    if not settings.store_path.exists():
        fail(f"no store at {settings.store_path}: run `cpqa ingest pubmed FILE` first")
    try:
        with Store(settings.store_path) as store:
            summary = build_index(
                settings, store, batch_size=batch_size, index_kind=index, progress=not json_out, **options
            )
            summary.bm25_documents = len(Bm25Index.open(store, settings.index_dir / "bm25").pmids)
            terms = learn_terms(store.iter_articles(), load_vocabulary(settings))
            save_terms(terms, learned_terms_path(settings))
            summary.learned_terms = len(terms)
            summary.device = device_used
        if passages:
            summary.passages = _segment_store(settings, passage_limit, progress=not json_out)
    except (ModelUnavailable, ValueError) as exc:
        fail(str(exc))
    print_json(summary.__dict__, settings)


def _segment_store(settings: Settings, limit: int | None, progress: bool) -> dict:
    """Every stored record not yet segmented, segmented into the passage store (resumable)."""
    from cpqa.sources.store import Store
    from ingestion.passage_build import build_passages

    with Store(settings.store_path) as store:
        total = min(store.count(), limit or store.count())
        with _bar(progress, total, "segmenting records") as advance:
            return build_passages(settings, store.iter_articles(), limit=limit, progress=advance).__dict__


def index_passages_command(
    passage_limit: Optional[int] = typer.Option(
        None, "--passage-limit", min=1, help="segment only the first N records"
    ),
    json_out: bool = typer.Option(False, "--json", help="no progress bar"),
) -> None:
    """Build only the persistent SEOS passage layer (resumable): what ``cpqa index build`` does last, for a data home
    indexed with ``--no-passages`` (``./setup.sh`` runs it in the background, so the first answer comes sooner)."""
    from cpqa.cli.common import fail, print_json
    from cpqa.config import get_settings
    from cpqa.models.encoders import ModelUnavailable

    settings = get_settings()
    if not settings.store_path.exists():
        fail(f"no store at {settings.store_path}: run `cpqa ingest pubmed FILE` first")
    try:
        print_json(_segment_store(settings, passage_limit, progress=not json_out), settings)
    except (ModelUnavailable, ValueError) as exc:
        fail(str(exc))
