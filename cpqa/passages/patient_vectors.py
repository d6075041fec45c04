"""Stored vectors of the patient pages' sentences (D4), so a question's patient chunks are ranked without embedding
their sentences while the user waits.

The extractive answer ranks every sentence of the patient chunks a question found by the passage embedder's vectors.
A research record's come from the passage store; a patient section's were embedded live, about 20 sentences a
question: with stored research passages, the answer stage's largest cost (``cpqa bench latency``). They are built
beside the patient search index (``cpqa ingest medquad``) with the passage embedder, over each section's sentences
as its chunks cut them (``section_sentences``); a sentence's vector is stored once, as int8 rows with one scale each
(``vector_codec``'s scheme: a cosine moves by about 1e-3). At question time ``remember`` hands the found sections'
vectors to the embedding cache by text, as ``SegmentCache`` does for a record's stored passages; a sentence the
answer cuts otherwise is embedded live as before. A set built on another store, encoder or chunk size is not used
(``open`` gives None) until ``cpqa ingest medquad`` builds it again; a question never builds it, and a running
pipeline looks for it again at most once a minute (``open_patient_vectors``).

Files under ``$CPQA_HOME/index/patient_sentences``: ``codes.npy`` (int8, unique sentences x dim), ``scales.npy``,
``rows.npy`` (each section's sentences in order: their unique row), ``offsets.npy`` (a section's first place in
``rows``, in ``keys.json``'s order) and ``state.json`` (written last: a build cut short reads as stale).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.config import Settings
from cpqa.looked_for import LookedFor
from cpqa.models.encoders import EmbeddingCache, TextEncoder, unit_rows
from cpqa.passages.patient import section_sentences
from cpqa.passages.vector_codec import dequantized, quantized
from cpqa.sources.patient_store import PatientStore
from cpqa.types import PatientHit

VERSION = "sentences1"  # what the files are made of: a set of another version is built again
STATE, KEYS, CODES, SCALES, ROWS, OFFSETS = (
    "state.json",
    "keys.json",
    "codes.npy",
    "scales.npy",
    "rows.npy",
    "offsets.npy",
)


def patient_sentences_dir(settings: Settings) -> Path:
    return settings.index_dir / "patient_sentences"


def _state(store: PatientStore, encoder_name: str, max_words: int) -> dict:
    return {"version": VERSION, "digest": store.digest(), "encoder": encoder_name, "max_words": max_words}


class PatientSentenceVectors:
    """Each stored section's sentence vectors, by section key: ``remember`` gives them to an embedding cache."""

    def __init__(self, keys: list[str], codes: np.ndarray, scales: np.ndarray, rows: np.ndarray, offsets, state):
        self.places = {key: place for place, key in enumerate(keys)}
        self.codes, self.scales, self.rows, self.offsets, self.state = codes, scales, rows, offsets, state

    @classmethod
    def build(
        cls, store: PatientStore, encoder: TextEncoder, max_words: int, directory: Path
    ) -> "PatientSentenceVectors":
        """Embed every stored section's sentences (each distinct sentence once) and save them to ``directory``."""
        keys: list[str] = []
        unique: dict[str, int] = {}
        rows: list[int] = []
        offsets = [0]
        for section in store.iter_sections():
            keys.append(section.key)
            rows.extend(unique.setdefault(text, len(unique)) for text in section_sentences(section.text, max_words))
            offsets.append(len(rows))
        scales, codes = quantized(unit_rows(encoder.encode(list(unique))) if unique else np.zeros((0, encoder.dim)))
        state = {**_state(store, encoder.name, max_words), "sections": len(keys), "sentences": len(unique)}
        directory.mkdir(parents=True, exist_ok=True)
        (directory / STATE).unlink(missing_ok=True)
        arrays = {CODES: codes, SCALES: scales, ROWS: np.asarray(rows, np.int32), OFFSETS: np.asarray(offsets)}
        for name, array in arrays.items():
            np.save(directory / name, array)
        (directory / KEYS).write_text(json.dumps(keys), encoding="utf-8")
        (directory / STATE).write_text(json.dumps(state), encoding="utf-8")
        return cls(keys, codes, scales, arrays[ROWS], arrays[OFFSETS], state)

    @classmethod
    def open(
        cls, store: PatientStore, encoder_name: str, max_words: int, directory: Path
    ) -> "PatientSentenceVectors | None":
        """The saved vectors when they were built on this store, encoder and chunk size; else None."""
        state_file = directory / STATE
        if not state_file.exists():
            return None
        state = json.loads(state_file.read_text(encoding="utf-8"))
        if {k: state.get(k) for k in ("version", "digest", "encoder", "max_words")} != _state(
            store, encoder_name, max_words
        ):
            return None
        keys = json.loads((directory / KEYS).read_text(encoding="utf-8"))
        codes, scales, rows, offsets = (
            np.load(directory / name, mmap_mode="r") for name in (CODES, SCALES, ROWS, OFFSETS)
        )
        return cls(keys, codes, scales, rows, offsets, state)

    def vectors(self, key: str, texts: Sequence[str]) -> np.ndarray | None:
        """The stored vectors of section ``key``'s sentences ``texts`` (float32), or None when it was not stored
        with that many sentences."""
        place = self.places.get(key)
        if place is None:
            return None
        start, end = int(self.offsets[place]), int(self.offsets[place + 1])
        if end - start != len(texts):
            return None
        rows = np.asarray(self.rows[start:end])
        return dequantized(self.scales[rows], self.codes[rows])

    def remember(self, hits: Sequence[PatientHit], cache: EmbeddingCache, max_words: int) -> int:
        """Give ``cache`` the stored vectors of the found sections' sentences; returns the sentences handed over.
        Only a cache of the encoder they were built with takes them, for chunks of the size they were cut to."""
        if cache.encoder.name != self.state["encoder"] or max_words != self.state["max_words"]:
            return 0
        handed = 0
        for hit in hits:
            texts = section_sentences(hit.section.text, self.state["max_words"])
            vectors = self.vectors(hit.section.key, texts)
            if vectors is not None and len(texts):
                cache.remember(texts, vectors)
                handed += len(texts)
        return handed


def open_patient_vectors(
    settings: Settings, patient, cache: EmbeddingCache, max_words: int
) -> LookedFor[PatientSentenceVectors] | None:
    """The data home's stored sentence vectors for ``patient`` (a ``PatientSearch``, or None: then None), built with
    ``cache``'s encoder and chunk size ``max_words``; while there are none or they are stale (setup's background
    build has not made them yet), looked for again at most once a minute, so a server started early uses them
    without a restart."""
    if patient is None:
        return None
    directory = patient_sentences_dir(settings)
    return LookedFor(lambda: PatientSentenceVectors.open(patient.store, cache.encoder.name, max_words, directory))


__all__ = ["PatientSentenceVectors", "open_patient_vectors", "patient_sentences_dir"]
