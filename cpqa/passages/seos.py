"""SEOS: Semantic Enhanced Overlap Segmentation, a LlamaIndex ``NodeParser``.

TextTiling's boundary detection with sentence embeddings instead of bag-of-words: whole sentences
(``cpqa.sentences``), the similarity of adjacent windows of sentence embeddings at every gap, TextTiling depth
scores, and boundaries where the depth passes a cut-off taken from the distribution of depths.
Topic segments are then packed into chunks of at most a number of the passage embedder's token windows (sentences
measured in its word pieces; the passage vector reads a longer chunk window by window, so none of it goes unseen),
with an optional overlap of whole sentences inside a segment. Every node carries exact character offsets into its
source text.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import BaseNode, NodeRelationship, RelatedNodeInfo, TextNode
from pydantic import Field, PrivateAttr

from cpqa.config import Settings, get_settings
from cpqa.models.encoders import WORDS_PER_TOKEN, EmbeddingCache, TextEncoder, load_encoder
from cpqa.options import SegmentationOptions
from cpqa.passages.layout import Chunk, RecordLayout
from cpqa.sentences import sentence_bounds

METADATA_KEYS = (
    "pmid",
    "pmcid",
    "section",
    "source",
    "category",
    "start",
    "end",
    "title",
    "year",
    "journal",
    "conclusion",
)
SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places of a BERT-style window
_WORD = re.compile(r"\S+")
Sections = Sequence[tuple[str | None, int, int]]  # (title, start, end) of each part of a text segmented on its own


@dataclass(frozen=True)
class Span:
    """A half-open character range ``[start, end)`` of the source text."""

    start: int
    end: int
    words: int
    size: int  # the parser's size unit: word pieces (the default) or words (explicit word bounds)


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentences of ``text[start:end]`` as tight spans (no surrounding whitespace) in ``text`` coordinates."""
    spans = []
    for first, last in sentence_bounds(text, start, end):
        words = len(text[first:last].split())
        spans.append(Span(first, last, words, words))
    return spans


def _split_long(text: str, span: Span, max_words: int) -> list[Span]:
    """Cut a sentence longer than the model limit into pieces of at most ``max_words`` words."""
    words = [m.span() for m in _WORD.finditer(text, span.start, span.end)]
    return [
        Span(
            words[i][0],
            words[min(i + max_words, len(words)) - 1][1],
            min(max_words, len(words) - i),
            min(max_words, len(words) - i),
        )
        for i in range(0, len(words), max_words)
    ]


def window_similarities(embeddings: np.ndarray, window: int) -> np.ndarray:
    """Cosine similarity of the ``window`` sentences before and after each gap (gap g sits before sentence g)."""
    n = len(embeddings)
    sims = np.ones(max(n - 1, 0), dtype=np.float64)
    for g in range(1, n):
        left = embeddings[max(0, g - window) : g].mean(axis=0)
        right = embeddings[g : g + window].mean(axis=0)
        denom = float(np.linalg.norm(left) * np.linalg.norm(right)) or 1.0
        sims[g - 1] = float(left @ right) / denom
    return sims


def depth_scores(sims: np.ndarray) -> np.ndarray:
    """TextTiling depth: how far similarity climbs to the nearest peak on each side of a gap."""
    depths = np.zeros_like(sims)
    for i, s in enumerate(sims):
        left = s
        for j in range(i - 1, -1, -1):
            if sims[j] < left:
                break
            left = sims[j]
        right = s
        for j in range(i + 1, len(sims)):
            if sims[j] < right:
                break
            right = sims[j]
        depths[i] = (left - s) + (right - s)
    return depths


def depth_cutoff(depths: np.ndarray, cutoff_sd: float) -> float:
    """``mean + cutoff_sd * std`` of the valley depths (Hearst's liberal cut-off is ``cutoff_sd = -0.5``)."""
    valleys = depths[depths > 0]
    return float(valleys.mean() + cutoff_sd * valleys.std()) if len(valleys) else math.inf


def pick_boundaries(depths: np.ndarray, cutoff_sd: float) -> list[int]:
    """Sentence indices that start a new segment: local depth maxima at or above the cut-off."""
    cutoff = depth_cutoff(depths, cutoff_sd)
    picked = []
    for i, d in enumerate(depths):
        if d > 0 and d >= cutoff and (i == 0 or d >= depths[i - 1]) and (i + 1 == len(depths) or d > depths[i + 1]):
            picked.append(i + 1)  # a boundary before sentence i + 1
    return picked


class SEOSNodeParser(NodeParser):
    """Semantic segmentation with sentence overlap and chunk sizes fitted to the embedding model."""

    target_words: int | None = Field(
        default=None, description="chunk bound in words (sizes then count words); None: window_fill of the token window"
    )
    overlap_words: int | None = Field(default=None, description="overlap bound in words; None: overlap_fill")
    window_tokens: int | None = Field(
        default=None, description="the passage embedder's token window; None: the sentence embedder's"
    )
    options: SegmentationOptions = Field(
        default_factory=SegmentationOptions, description="the tuned sizes and cut-off (cross-validated; see there)"
    )
    _encoder: EmbeddingCache = PrivateAttr()

    def __init__(self, encoder: TextEncoder | EmbeddingCache, **kwargs: Any):
        """``kwargs``: the parser's fields, and any of ``SegmentationOptions``' by name (``gap_window=2``), which
        override the section's."""
        tuned = {name: kwargs.pop(name) for name in SegmentationOptions.model_fields if name in kwargs}
        if tuned:
            kwargs["options"] = (kwargs.get("options") or SegmentationOptions()).model_copy(update=tuned)
        super().__init__(**kwargs)
        self._encoder = encoder if isinstance(encoder, EmbeddingCache) else EmbeddingCache(encoder)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **kwargs: Any) -> "SEOSNodeParser":
        """A parser over the profile's sentence embedder (``sentence_embedder``)."""
        encoder, _ = load_encoder("sentence_embedder", settings or get_settings())
        return cls(encoder, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "SEOSNodeParser"

    @property
    def model(self) -> TextEncoder:
        return self._encoder.encoder

    @property
    def sentence_cache(self) -> EmbeddingCache:
        """The sentence embeddings' cache (its ``misses`` count the sentences embedded)."""
        return self._encoder

    @property
    def unit(self) -> str:
        """What chunk sizes count: "tokens" (the embedder's word pieces), or "words" under explicit word bounds."""
        return "words" if self.target_words is not None else "tokens"

    @property
    def target(self) -> int:
        """The chunk bound, in ``unit``."""
        if self.target_words is not None:
            return self.target_words
        return max(
            1, round(self.options.window_fill * ((self.window_tokens or self.model.max_tokens) - SPECIAL_TOKENS))
        )

    @property
    def overlap(self) -> int:
        value = round(self.options.overlap_fill * self.target) if self.overlap_words is None else self.overlap_words
        if value >= self.target:
            raise ValueError(
                f"overlap ({value} {self.unit}) must be smaller than the chunk target ({self.target} {self.unit})"
            )
        return value

    @property
    def max_sentence_words(self) -> int:
        return max(1, int(self.model.max_tokens * WORDS_PER_TOKEN))

    # ------------------------------------------------------------ segmentation
    def sentences(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """Whole sentences, sized in ``unit``; only a sentence over the model limit is cut, at word boundaries."""
        out: list[Span] = []
        for span in split_sentences(text, start, end):
            out.extend(
                _split_long(text, span, self.max_sentence_words) if span.words > self.max_sentence_words else [span]
            )
        if self.unit == "tokens" and out:
            counts = self.model.token_counts([text[s.start : s.end] for s in out])
            out = [Span(s.start, s.end, s.words, n) for s, n in zip(out, counts)]
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Sentence vectors, one encoder call for all of ``texts`` (batching across records is what makes first
        sight fast: per-call overhead dominates a record's few sentences)."""
        return self._encoder.encode(list(texts))

    def gap_scores(
        self, text: str, sentences: Sequence[Span], vectors: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(window similarity, depth score) at each gap between consecutive sentences (``vectors``: theirs, if
        already embedded)."""
        if vectors is None:
            vectors = self.embed([text[s.start : s.end] for s in sentences])
        sims = window_similarities(vectors, self.options.gap_window)
        return sims, depth_scores(sims)

    def segment(self, text: str, sentences: Sequence[Span], vectors: np.ndarray | None = None) -> list[list[Span]]:
        """Topic segments (lists of sentences) from embedding depth scores."""
        if len(sentences) < 2:
            return [list(sentences)] if sentences else []
        _, depths = self.gap_scores(text, sentences, vectors)
        cuts = [0, *pick_boundaries(depths, self.options.cutoff_sd), len(sentences)]
        segments = [list(sentences[a:b]) for a, b in zip(cuts, cuts[1:])]
        strength = [float(depths[c - 1]) for c in cuts[1:-1]]  # boundary i sits between segments i and i+1
        return _merge_small(segments, strength, max(1, int(self.options.min_fraction * self.target)))

    def pack(self, segment: Sequence[Span]) -> list[list[Span]]:
        """Chunks of whole sentences of at most ``target`` (a lone longer sentence stands alone), sized evenly
        across the segment, each starting with up to ``overlap`` of its predecessor (sizes in ``unit``)."""
        target, overlap = self.target, self.overlap
        total = sum(s.size for s in segment)
        count = max(1, math.ceil((total - overlap) / (target - overlap))) if total > target else 1
        soft = (total + (count - 1) * overlap) / count
        chunks: list[list[Span]] = []
        i = 0
        while i < len(segment):
            chunk = [segment[i]]
            size = segment[i].size
            i += 1
            while i < len(segment) and size + segment[i].size <= target and size + segment[i].size / 2 <= soft:
                chunk.append(segment[i])
                size += segment[i].size
                i += 1
            chunks.append(chunk)
            if i >= len(segment):
                break
            back, carried = i, 0
            while back - 1 > i - len(chunk) and carried + segment[back - 1].size <= overlap:
                back -= 1
                carried += segment[back].size
            i = back
        return chunks

    # ------------------------------------------------------------ a text's layout
    def plan(self, text: str, sections: Sections) -> list[list[Span]]:
        """The sentences of each section of ``text`` (each section is segmented on its own)."""
        return [self.sentences(text, start, end) for _, start, end in sections]

    def lay_out(self, text: str, sections: Sections, plan: list[list[Span]], vectors: np.ndarray) -> RecordLayout:
        """The chunks of every section from its sentences (``plan``) and their vectors (one row per sentence of
        ``plan``, in order)."""
        chunks: list[Chunk] = []
        offset = 0
        for (title, _, _), spans in zip(sections, plan):
            index = {span.start: offset + i for i, span in enumerate(spans)}
            for segment in self.segment(text, spans, vectors[offset : offset + len(spans)]):
                chunks += [Chunk(title, index[c[0].start], index[c[-1].start] + 1) for c in self.pack(segment)]
            offset += len(spans)
        return RecordLayout([(s.start, s.end) for spans in plan for s in spans], chunks, vectors)

    def layout(self, text: str, sections: Sections | None = None) -> RecordLayout:
        """Sentences, chunks and sentence vectors of ``text`` (one section spanning it by default)."""
        sections = sections or [(None, 0, len(text))]
        plan = self.plan(text, sections)
        return self.lay_out(text, sections, plan, self.embed([text[s.start : s.end] for spans in plan for s in spans]))

    def chunk_spans(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """Character ranges of the chunks of ``text[start:end]``."""
        layout = self.layout(text, [(None, start, len(text) if end is None else end)])
        return [layout.chunk_span(c) for c in layout.chunks]

    # ------------------------------------------------------------ LlamaIndex
    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in nodes:
            text = node.get_content()
            sections = node.metadata.get("sections") or [(node.metadata.get("section"), 0, len(text))]
            out += layout_nodes(node.node_id, node.metadata, text, self.layout(text, sections))
        return out

    def _postprocess_parsed_nodes(self, nodes: list[BaseNode], parent_doc_map: dict[str, Any]) -> list[BaseNode]:
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node in nodes:  # the base class re-finds offsets with str.find; ours are exact
            node.metadata.pop("sections", None)
            if isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = node.metadata["start"], node.metadata["end"]
        return nodes


def layout_nodes(
    parent_id: str, metadata: dict[str, Any], text: str, layout: RecordLayout, embeddings: np.ndarray | None = None
) -> list[TextNode]:
    """The layout's chunks as LlamaIndex nodes of ``text``: exact offsets, the parent's metadata (``METADATA_KEYS``),
    each chunk's sentences relative to its text (the extractive answer quotes them without splitting again) and,
    given ``embeddings``, its passage vector as the node's embedding."""
    nodes = []
    for i, chunk in enumerate(layout.chunks):
        start, end = layout.chunk_span(chunk)
        meta = {key: metadata.get(key) for key in METADATA_KEYS}
        meta.update(
            section=chunk.section,
            start=start,
            end=end,
            sentences=[[a - start, b - start] for a, b in layout.sentences[chunk.first : chunk.end]],
        )
        key = f"{parent_id}\x00{start}\x00{end}".encode()
        node = TextNode(
            id_=hashlib.sha1(key).hexdigest(),
            text=text[start:end],
            metadata=meta,
            start_char_idx=start,
            end_char_idx=end,
            embedding=embeddings[i].tolist() if embeddings is not None else None,
            excluded_embed_metadata_keys=[k for k in (*METADATA_KEYS, "sentences") if k not in ("title", "section")],
            excluded_llm_metadata_keys=["start", "end", "sections", "sentences", "conclusion"],
        )
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=parent_id)
        nodes.append(node)
    return nodes


def _merge_small(segments: list[list[Span]], strength: list[float], min_size: int) -> list[list[Span]]:
    """Merge segments smaller than ``min_size`` into the neighbour across their weaker boundary."""
    segments, strength = [list(s) for s in segments], list(strength)
    while len(segments) > 1:
        sizes = [sum(s.size for s in seg) for seg in segments]
        small = [i for i, n in enumerate(sizes) if n < min_size]
        if not small:
            break
        i = min(small, key=lambda k: (sizes[k], k))
        left = strength[i - 1] if i > 0 else math.inf
        right = strength[i] if i < len(strength) else math.inf
        j = i - 1 if left <= right else i  # merge across boundary j (between segments j and j+1)
        segments[j : j + 2] = [segments[j] + segments[j + 1]]
        del strength[j]
    return segments
