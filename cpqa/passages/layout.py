"""A record's SEOS layout: its sentences, its chunks as runs of those sentences, one vector per sentence and one
per passage.

This is what segmentation produces and what the passage store keeps. Sentence vectors place SEOS's boundaries and
rank the extractive answer's quotes. A passage's vector is the passage embedder's reading of the chunk's text,
window by window when the chunk is longer than the encoder's window (the mean of the windows, weighted by their
word pieces), so it covers the whole chunk. Without one (a layout from before, or a segmenter without a passage
embedder) it is the normalised mean of the chunk's sentence vectors: one encoder pass instead of two, but on the
chunking benchmark that lost 0.04 dense MRR@5 to reading the text (docs/results.md, issue 27).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cpqa.models.encoders import unit_rows


@dataclass(frozen=True)
class Chunk:
    section: str | None  # the section title the chunk lies in (None: an abstract without body sections)
    first: int  # index of its first sentence
    end: int  # one past its last sentence


@dataclass
class RecordLayout:
    sentences: list[tuple[int, int]]  # [start, end) of each sentence in the segmented text
    chunks: list[Chunk]
    vectors: np.ndarray  # one row per sentence, float32
    passages: np.ndarray | None = None  # one row per chunk: the passage embedder's vector of its text

    def chunk_span(self, chunk: Chunk) -> tuple[int, int]:
        return self.sentences[chunk.first][0], self.sentences[chunk.end - 1][1]

    def sentence_vectors(self, dim: int | None = None) -> np.ndarray:
        """Unit sentence vectors, cut to their first ``dim`` components (a Matryoshka passage embedder)."""
        vectors = self.vectors if dim is None or dim >= self.vectors.shape[1] else self.vectors[:, :dim]
        return unit_rows(vectors)

    def passage_vectors(self, dim: int | None = None) -> np.ndarray:
        """One unit vector per chunk: the passage embedder's, else the mean of its sentences' unit vectors."""
        if self.passages is not None and len(self.passages) == len(self.chunks):
            rows = self.passages if dim is None or dim >= self.passages.shape[1] else self.passages[:, :dim]
            return unit_rows(rows)
        sentences = self.sentence_vectors(dim)
        if not self.chunks:
            return np.zeros((0, sentences.shape[1]), dtype=np.float32)
        return unit_rows(np.stack([sentences[c.first : c.end].mean(axis=0) for c in self.chunks]))

    def to_json(self) -> dict:
        return {"s": [list(s) for s in self.sentences], "c": [[c.section, c.first, c.end] for c in self.chunks]}

    @classmethod
    def from_json(cls, data: dict, vectors: np.ndarray, passages: np.ndarray | None = None) -> "RecordLayout":
        return cls(
            sentences=[(int(a), int(b)) for a, b in data["s"]],
            chunks=[Chunk(section, int(first), int(end)) for section, first, end in data["c"]],
            vectors=vectors,
            passages=passages,
        )


__all__ = ["Chunk", "RecordLayout"]
