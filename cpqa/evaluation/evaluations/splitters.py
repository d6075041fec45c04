"""The splitters the chunking benchmark compares, each turned into character ranges of the source text.

A splitter maps a text to ``ChunkSpan``s: the range a retriever indexes (``key``) and the range it hands
on (``span``). They differ only for LlamaIndex's SentenceWindowNodeParser, which indexes one sentence and
returns the sentence with its window (as ``MetadataReplacementPostProcessor`` does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cpqa.models.encoders import EmbeddingCache, TextEncoder
from cpqa.passages.segments import embed_passages
from cpqa.passages.seos import SEOSNodeParser, split_sentences


@dataclass(frozen=True)
class ChunkSpan:
    start: int  # what the splitter hands on (judged against the gold span)
    end: int
    key_start: int  # what a retriever indexes
    key_end: int
    vector: Any = field(default=None, compare=False)  # the splitter's own passage vector (SEOS), else embedded


Splitter = Callable[[str], list[ChunkSpan]]
SENTENCE_WINDOW = 3  # LlamaIndex's default window


def _locate(text: str, piece: str, cursor: int) -> tuple[int, int]:
    """Where ``piece`` sits in ``text`` at or after ``cursor``, tolerating whitespace changes."""
    found = text.find(piece, cursor)
    if found < 0:
        found = text.find(piece)
    if found >= 0:
        return found, found + len(piece)
    words = piece.split()
    if not words:
        return cursor, cursor
    pattern = r"\s+".join(re.escape(w) for w in words)
    match = re.compile(pattern).search(text, cursor) or re.compile(pattern).search(text)
    if match is None:
        raise ValueError(f"chunk text not found in its source: {piece[:60]!r}")
    return match.start(), match.end()


def _node_spans(parser, text: str) -> list[tuple[int, int]]:
    """Offsets of a LlamaIndex parser's nodes (its own offsets when it set them, else located)."""
    from llama_index.core import Document
    from llama_index.core.schema import MetadataMode

    spans, cursor = [], 0
    for node in parser.get_nodes_from_documents([Document(text=text)]):
        content = node.get_content(metadata_mode=MetadataMode.NONE)
        if node.start_char_idx is not None and text[node.start_char_idx : node.end_char_idx] == content:
            start, end = node.start_char_idx, node.end_char_idx
        else:
            start, end = _locate(text, content.strip(), cursor)
        spans.append((start, end))
        cursor = start + 1
    return spans


def _plain(spans: list[tuple[int, int]]) -> list[ChunkSpan]:
    return [ChunkSpan(a, b, a, b) for a, b in spans]


def seos_splitter(
    encoder: TextEncoder | EmbeddingCache, *, passage_encoder: TextEncoder | EmbeddingCache | None = None, **options
) -> Splitter:
    """SEOS as the product runs it: each chunk carries its passage vector (``SegmentCache``'s: the passage
    embedder's reading of the whole chunk, window by window), or without ``passage_encoder`` the mean of its
    sentences' vectors."""
    parser = SEOSNodeParser(encoder if isinstance(encoder, EmbeddingCache) else EmbeddingCache(encoder), **options)

    def split(text: str) -> list[ChunkSpan]:
        sections = [(None, 0, len(text))]
        plan = parser.plan(text, sections)
        layout = parser.lay_out(text, sections, plan, parser.embed([text[s.start : s.end] for s in plan[0]]))
        if passage_encoder is not None:
            embed_passages(passage_encoder, [(text, [s.size for s in plan[0]], layout)])
        return [
            ChunkSpan(*layout.chunk_span(c), *layout.chunk_span(c), vector=v)
            for c, v in zip(layout.chunks, layout.passage_vectors())
        ]

    return split


def sentence_splitter(chunk_size: int, overlap: int) -> Splitter:
    from llama_index.core.node_parser import SentenceSplitter

    parser = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=overlap)
    return lambda text: _plain(_node_spans(parser, text))


def sentence_window_splitter(window: int = SENTENCE_WINDOW) -> Splitter:
    from llama_index.core.node_parser import SentenceWindowNodeParser

    parser = SentenceWindowNodeParser.from_defaults(window_size=window)

    def split(text: str) -> list[ChunkSpan]:
        sentences = _node_spans(parser, text)
        return [
            ChunkSpan(sentences[max(0, i - window)][0], sentences[min(len(sentences) - 1, i + window)][1], a, b)
            for i, (a, b) in enumerate(sentences)
        ]

    return split


def semantic_splitter(encoder: TextEncoder) -> Splitter:
    from llama_index.core import Settings as LlamaSettings
    from llama_index.core.node_parser import SemanticSplitterNodeParser

    from cpqa.models.llama_embedding import TextEncoderEmbedding

    embed_model = TextEncoderEmbedding(EmbeddingCache(encoder))
    LlamaSettings.embed_model = embed_model  # never let LlamaIndex fall back to a default (network) model
    parser = SemanticSplitterNodeParser(embed_model=embed_model, buffer_size=1, breakpoint_percentile_threshold=95)
    return lambda text: _plain(_node_spans(parser, text))


def nltk_data_path() -> str:
    """The NLTK data (stopwords, punkt) that ships inside llama-index-core."""
    import llama_index.core

    return str(Path(llama_index.core.__file__).parent / "_static" / "nltk_cache")


def texttiling_splitter() -> Splitter:
    """NLTK TextTiling (Hearst 1997) with each sentence as a paragraph, so boundaries fall between sentences."""
    import nltk
    from nltk.tokenize import TextTilingTokenizer

    if nltk_data_path() not in nltk.data.path:
        nltk.data.path.append(nltk_data_path())
    tiler = TextTilingTokenizer()

    def split(text: str) -> list[ChunkSpan]:
        sentences = split_sentences(text)
        joined = "\n\n".join(text[s.start : s.end] for s in sentences)
        try:
            tiles = tiler.tokenize(joined)
        except ValueError:  # too short to tile: one chunk
            return _plain([(sentences[0].start, sentences[-1].end)]) if sentences else []
        spans, first = [], 0
        for tile in tiles:
            count = len([p for p in tile.split("\n\n") if p.strip()])
            if count:
                spans.append((sentences[first].start, sentences[first + count - 1].end))
                first += count
        return _plain(spans)

    return split


def rival_splitters(sentence_encoder: TextEncoder) -> dict[str, Splitter]:
    """SEOS's rivals: LlamaIndex's splitters and NLTK's TextTiling."""
    return {
        "SentenceSplitter-256-64": sentence_splitter(256, 64),  # chunks of about SEOS's mean size
        "SentenceSplitter-512-0": sentence_splitter(512, 0),
        "SentenceSplitter-512-32": sentence_splitter(512, 32),
        "SentenceSplitter-512-128": sentence_splitter(512, 128),
        "SentenceWindow": sentence_window_splitter(),
        "SemanticSplitter": semantic_splitter(sentence_encoder),
        "TextTiling": texttiling_splitter(),
    }


def benchmark_splitters(
    sentence_encoder: TextEncoder, passage_encoder: TextEncoder | None = None, **seos_options
) -> dict[str, Splitter]:
    """The splitters of the paper's Table IV, widened; embedding splitters get a cold cache each."""
    return {
        "SEOS": seos_splitter(sentence_encoder, passage_encoder=passage_encoder, **seos_options),
        **rival_splitters(sentence_encoder),
    }
