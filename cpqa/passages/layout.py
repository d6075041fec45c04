"""A record's SEOS layout: its sentences, its chunks as runs of those sentences, and one vector per sentence.

This is what segmentation produces and what the passage store keeps. A passage's vector is the normalised mean of
its sentences' vectors: every sentence is embedded once (SEOS needs the sentence vectors for its boundaries anyway),
and the passage vector covers the whole chunk, where an encoder reading the chunk would stop at its token window
(README, issue 27: "one encoder pass per sentence").
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

    def chunk_span(self, chunk: Chunk) -> tuple[int, int]:
        return self.sentences[chunk.first][0], self.sentences[chunk.end - 1][1]

    def sentence_vectors(self, dim: int | None = None) -> np.ndarray:
        """Unit sentence vectors, cut to their first ``dim`` components (a Matryoshka passage embedder)."""
        vectors = self.vectors if dim is None or dim >= self.vectors.shape[1] else self.vectors[:, :dim]
        return unit_rows(vectors)

    def passage_vectors(self, dim: int | None = None) -> np.ndarray:
        """One unit vector per chunk: the mean of its sentences' unit vectors, normalised."""
        sentences = self.sentence_vectors(dim)
        if not self.chunks:
            return np.zeros((0, sentences.shape[1]), dtype=np.float32)
        return unit_rows(np.stack([sentences[c.first:c.end].mean(axis=0) for c in self.chunks]))

    def to_json(self) -> dict:
        return {"s": [list(s) for s in self.sentences], "c": [[c.section, c.first, c.end] for c in self.chunks]}

    @classmethod
    def from_json(cls, data: dict, vectors: np.ndarray) -> "RecordLayout":
        return cls(sentences=[(int(a), int(b)) for a, b in data["s"]],
                   chunks=[Chunk(section, int(first), int(end)) for section, first, end in data["c"]], vectors=vectors)


__all__ = ["Chunk", "RecordLayout"]
