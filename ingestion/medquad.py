"""``cpqa ingest medquad DIR...``: MedQuAD's NIH patient pages into the patient store, and their search index.

The conditions the pages are about join the rewrite's vocabulary as disease terms (``ingestion.condition_terms``), and
the abbreviations the pages define their diseases by as those diseases' names (``save_page_abbreviations``).

Every collection is read and checked before anything is written (a bad file changes nothing); sections are then
upserted by content (a second run adds nothing), and the patient search index (``cpqa.documents.patient_search``)
is built with the pipeline's sentence embedder unless it already matches the store, as are the stored vectors of
the sections' sentences (``cpqa.passages.patient_vectors``, the passage embedder's). Prints a JSON summary.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import typer

from cpqa.config import Settings
from cpqa.sources.patient_pages import PageCondition, medquad_files, read_medquad_page
from cpqa.types import PatientSection
from ingestion.condition_terms import condition_terms
from cpqa.sources.patient_store import PatientStore


def ingest_medquad(settings: Settings, paths: list[Path], index: bool = True) -> dict:
    """Load the collections into the patient store (and build its index); the summary as a dict."""
    start = time.perf_counter()
    files = medquad_files(paths)  # a missing path or an empty folder fails before anything is read
    pages = [read_medquad_page(f) for f in files]  # each file parsed once: its sections and its condition
    sections = [section for page_sections, _ in pages for section in page_sections]
    conditions = [condition for _, condition in pages]
    read_s = time.perf_counter() - start
    with PatientStore(settings.patient_store_path) as store:
        upserted = store.upsert(sections)
        stored_s = time.perf_counter() - start - read_s
        summary: dict = {
            "files": len(files),
            "sections": dict(sorted(Counter(s.collection for s in sections).items())),
            "read": len(sections),
            **upserted.as_dict(),
            "store": {"path": str(store.path), "sections": store.count()},
            "condition_terms": save_condition_terms(settings, conditions),
            "abbreviations": save_page_abbreviations(settings, sections),
            "index": None,
        }
        if index:
            summary["index"] = build_patient_index(settings, store)
            summary["sentence_vectors"] = build_patient_sentences(settings, store)
    summary["seconds"] = {
        "read": round(read_s, 2),
        "store": round(stored_s, 2),
        "total": round(time.perf_counter() - start, 2),
    }
    return summary


def save_condition_terms(settings: Settings, conditions: list[PageCondition]) -> dict:
    """The pages' conditions as the rewrite's disease terms (``ingestion.condition_terms``), beside the MeSH table."""
    from cpqa.rewrite.vocabulary import conditions_path, load_vocabulary, save_terms

    known = load_vocabulary(settings, conditions=False)
    terms = condition_terms(conditions, known=lambda name: known.lookup(name) is not None)
    save_terms(terms, conditions_path(settings))
    return {
        "path": str(conditions_path(settings)),
        "terms": len(terms),
        "other_names": sum(len(t.synonyms) for t in terms),
    }


def save_page_abbreviations(settings: Settings, sections: list[PatientSection]) -> dict:
    """The abbreviations the pages define ("Myelodysplastic syndromes (MDS) are ..."), each with its dominant long
    form (``ingestion.term_links.dominant_abbreviations``): a disease's joins that disease in the rewrite's vocabulary
    (``cpqa.rewrite.vocabulary.disease_abbreviations``), as patients meet it on the pages."""
    from cpqa.rewrite.vocabulary import Term, page_abbreviations_path, save_terms
    from ingestion.term_links import dominant_abbreviations

    found = dominant_abbreviations(section.text for section in sections)
    save_terms(
        [Term(name=long, synonyms=[short]) for short, long in sorted(found.items())], page_abbreviations_path(settings)
    )
    return {"path": str(page_abbreviations_path(settings)), "abbreviations": len(found)}


def build_patient_index(settings: Settings, store: PatientStore) -> dict:
    """The patient search index over the store, rebuilt only when it no longer matches (store or encoder)."""
    from cpqa.documents.patient_search import PatientIndex, patient_index_dir, saved_state  # LlamaIndex: on use
    from cpqa.models.encoders import load_encoder

    start = time.perf_counter()
    encoder, choice = load_encoder("sentence_embedder", settings)
    directory = patient_index_dir(settings)
    current = saved_state(store, encoder, directory)
    built = PatientIndex.open(store, encoder, directory)
    return {
        "path": str(directory),
        "sections": len(built.keys),
        "encoder": choice.model,
        "runtime": choice.runtime,
        "rebuilt": current is None,
        "bytes": sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()),
        "seconds": round(time.perf_counter() - start, 2),
    }


def build_patient_sentences(settings: Settings, store: PatientStore) -> dict:
    """The stored vectors of the sections' sentences (``cpqa.passages.patient_vectors``), by the passage embedder,
    rebuilt only when they no longer match (store, encoder or chunk size)."""
    from cpqa.models.encoders import load_encoder
    from cpqa.options import PassageOptions
    from cpqa.passages.patient_vectors import PatientSentenceVectors, patient_sentences_dir

    start = time.perf_counter()
    encoder, choice = load_encoder("passage_retriever", settings)
    directory, max_words = patient_sentences_dir(settings), PassageOptions().patient_passage_words
    built = PatientSentenceVectors.open(store, encoder.name, max_words, directory)
    rebuilt = built is None
    if built is None:
        built = PatientSentenceVectors.build(store, encoder, max_words, directory)
    return {
        "path": str(directory),
        "sentences": built.state["sentences"],
        "encoder": choice.model,
        "rebuilt": rebuilt,
        "bytes": sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()),
        "seconds": round(time.perf_counter() - start, 2),
    }


def ingest_medquad_command(
    paths: list[Path] = typer.Argument(..., help="MedQuAD collection folders (e.g. ../shared/data/medquad/*_QA*)"),
    index: bool = typer.Option(
        True, "--index/--no-index", help="build the patient search index and sentence vectors (default: yes)"
    ),
) -> None:
    """Load NIH patient pages (MedQuAD) into the patient store and index them for search (idempotent)."""
    from cpqa.cli.common import fail
    from cpqa.config import get_settings

    try:
        summary = ingest_medquad(get_settings(), paths, index=index)
    except (OSError, ValueError) as exc:
        fail(str(exc), code=1)
    typer.echo(json.dumps(summary, indent=2))
