"""SEOS node parser: whole sentences, overlap, size bounds, exact offsets, determinism, metadata."""

from __future__ import annotations

import json

import numpy as np
import pytest
from llama_index.core import Document

from cpqa.passages.records import segment_article, source_text
from cpqa.passages.seos import METADATA_KEYS, SEOSNodeParser, depth_scores, pick_boundaries, split_sentences
from cpqa.types import AbstractSection, Article, BodySection
from tests.conftest import shared


@pytest.fixture(scope="module")
def encoder():
    from cpqa.config import get_settings
    from cpqa.models.encoders import load_encoder

    return load_encoder("sentence_embedder", get_settings(cpqa_profile="offline"))[0]


@pytest.fixture(scope="module")
def parser(encoder):
    return SEOSNodeParser(encoder)


@pytest.fixture(scope="module")
def small(encoder):
    """The profile's own size target (128 words, 32 overlap), so long segments are packed with overlap."""
    return SEOSNodeParser(encoder, target_words=128, overlap_words=32)


@pytest.fixture(scope="module")
def bench_docs():
    path = shared("bench", "chunking_dev.jsonl")
    with path.open() as handle:
        return [json.loads(next(handle)) for _ in range(3)]


@pytest.fixture(scope="module")
def bench_nodes(small, bench_docs):
    doc = bench_docs[0]
    return doc["text"], small.get_nodes_from_documents([Document(text=doc["text"], metadata={"pmid": "1"})])


def _words(text: str) -> int:
    return len(text.split())


def encoder_tokens(parser, text: str) -> int:
    return parser.model.token_counts([text])[0]


def test_offsets_slice_back_to_node_text(bench_nodes):
    text, nodes = bench_nodes
    assert len(nodes) > 3
    for node in nodes:
        assert text[node.metadata["start"] : node.metadata["end"]] == node.text
        assert (node.start_char_idx, node.end_char_idx) == (node.metadata["start"], node.metadata["end"])


def test_nodes_hold_whole_sentences(bench_nodes):
    text, nodes = bench_nodes
    sentences = split_sentences(text)
    starts, ends = {s.start for s in sentences}, {s.end for s in sentences}
    for node in nodes:
        assert node.metadata["start"] in starts and node.metadata["end"] in ends


def test_chunks_fit_the_passage_embedders_token_window(encoder, bench_docs):
    assert encoder.max_tokens == 256  # MiniLM's window
    parser = SEOSNodeParser(encoder, window_fill=1.0, overlap_fill=0.25)
    assert (parser.unit, parser.target, parser.overlap) == ("tokens", 254, 64)  # 256 less [CLS] and [SEP]
    assert SEOSNodeParser(encoder, window_fill=1.0, window_tokens=512).target == 510  # the passage embedder's window
    text = bench_docs[0]["text"]
    spans = parser.chunk_spans(text)
    counts = encoder.token_counts([text[a:b] for a, b in spans])
    sentences = split_sentences(text)
    for (a, b), tokens in zip(spans, counts):
        # pieces are counted per sentence, so a chunk may exceed its sum by the pieces a join adds (none for BERT)
        assert tokens <= parser.target or sum(1 for x in sentences if a <= x.start and x.end <= b) == 1
    # and the word count of a chunk differs from its token count: sizes are word pieces, not words
    assert any(len(text[a:b].split()) != n for (a, b), n in zip(spans, counts))


def test_token_counts_are_the_tokenizers(encoder):
    assert encoder.token_counts(["tamoxifen"])[0] > 1  # a biomedical word is several word pieces
    assert encoder.token_counts(["the cat sat"]) == [3]


def test_chunks_bounded_by_the_target(bench_nodes, small):
    text, nodes = bench_nodes
    parser = small
    sentences = split_sentences(text)
    for node in nodes:
        inside = [s for s in sentences if node.metadata["start"] <= s.start and s.end <= node.metadata["end"]]
        assert _words(node.text) <= parser.target or len(inside) == 1


def test_overlap_is_whole_sentences_within_the_bound(bench_nodes, small):
    text, nodes = bench_nodes
    parser = small
    sentences = split_sentences(text)
    overlapping = 0
    for a, b in zip(nodes, nodes[1:]):
        shared_end = a.metadata["end"] - b.metadata["start"]
        if shared_end > 0:
            overlapping += 1
            piece = text[b.metadata["start"] : a.metadata["end"]]
            assert _words(piece) <= parser.overlap
            assert a.metadata["end"] in {s.end for s in sentences}
    assert overlapping > 0  # long topic segments were packed with overlap


def test_boundaries_follow_topic_shifts(parser, bench_docs):
    """Most true document boundaries of the benchmark's joined abstracts start a chunk."""
    found = total = 0
    for doc in bench_docs:
        starts = {a for a, _ in parser.chunk_spans(doc["text"])}
        for segment in doc["segments"][1:]:
            total += 1
            found += any(abs(segment["start"] - s) <= 1 for s in starts)
    assert found / total >= 0.7


def test_deterministic(parser, encoder, bench_docs):
    doc = Document(text=bench_docs[1]["text"], id_="d1")
    first = [(n.node_id, n.text) for n in parser.get_nodes_from_documents([doc])]
    again = [(n.node_id, n.text) for n in SEOSNodeParser(encoder).get_nodes_from_documents([doc])]
    assert first == again


def test_sentence_over_model_limit_is_cut_at_words(encoder):
    parser = SEOSNodeParser(encoder, target_words=50, overlap_words=10)
    long_sentence = " ".join(f"word{i}" for i in range(parser.max_sentence_words + 40)) + "."
    text = "A short opening sentence here. " + long_sentence + " A short closing sentence."
    spans = parser.chunk_spans(text)
    assert max(_words(text[a:b]) for a, b in spans) <= parser.max_sentence_words
    assert all(text[a:b].strip() == text[a:b] for a, b in spans)


def test_overrides_and_bad_overlap(encoder):
    assert SEOSNodeParser(encoder, target_words=300).target == 300
    with pytest.raises(ValueError, match="overlap"):
        SEOSNodeParser(encoder, target_words=40, overlap_words=40).chunk_spans("One. Two.")


def test_depth_scores_and_boundaries():
    sims = np.array([0.9, 0.8, 0.2, 0.85, 0.9, 0.6, 0.88])
    depths = depth_scores(sims)
    assert depths[2] == pytest.approx((0.9 - 0.2) + (0.9 - 0.2))
    assert depths[0] == 0 and depths[4] == 0
    assert pick_boundaries(depths, cutoff_sd=0.5) == [3]  # only the deep valley survives a strict cut-off
    assert pick_boundaries(depths, cutoff_sd=-1.0) == [3, 6]


def test_labelled_abstract_metadata(parser):
    article = Article(
        pmid="123",
        title="Trial",
        journal="J",
        year=2020,
        abstract_sections=[
            AbstractSection(label="BACKGROUND", text="Breast cancer is common. " * 30),
            AbstractSection(label="CONCLUSIONS", text="Radiotherapy after surgery lowered recurrence. " * 20),
        ],
    )
    nodes = segment_article(article, source="D1", category="E3", parser=parser)
    text, _ = source_text(article)
    assert text == article.abstract
    for node in nodes:
        assert set(METADATA_KEYS) <= set(node.metadata)
        assert node.metadata["pmid"] == "123" and node.metadata["source"] == "D1"
        assert node.metadata["category"] == "E3" and node.metadata["year"] == 2020
        assert text[node.metadata["start"] : node.metadata["end"]] == node.text
        assert "sections" not in node.metadata
    assert nodes[0].metadata["section"].startswith("BACKGROUND")
    assert nodes[-1].metadata["section"].endswith("CONCLUSIONS")


def test_full_text_is_segmented_within_sections(parser):
    article = Article(
        pmid="9",
        pmcid="PMC9",
        title="Review",
        abstract_sections=[AbstractSection(text="An abstract.")],
        body_sections=[
            BodySection(title="Introduction", paragraphs=["Lung cancer screening. " * 40]),
            BodySection(title="Methods", paragraphs=["We searched PubMed.", "Two readers."]),
        ],
    )
    nodes = segment_article(article, source="D2", parser=parser)
    text, sections = source_text(article)
    assert [s[0] for s in sections] == ["Abstract", "Introduction", "Methods"]
    for node in nodes:
        title, start, end = next(s for s in sections if s[0] == node.metadata["section"])
        assert start <= node.metadata["start"] < node.metadata["end"] <= end
        assert text[node.metadata["start"] : node.metadata["end"]] == node.text
        assert node.metadata["pmcid"] == "PMC9" and node.metadata["source"] == "D2"


@pytest.mark.slow
def test_long_pmc_article(parser):
    jats = pytest.importorskip("cpqa.sources.ncbi.jats", reason="the store helper's JATS parser is not there yet")
    path = shared("corpus", "pmc", "PMC2775679.xml")
    article, _ = next(iter(jats.iter_pmc_records(path)))
    nodes = segment_article(article, source="D2", parser=parser)
    text, sections = source_text(article)
    assert len(nodes) > 12 and {n.metadata["section"] for n in nodes} >= {s[0] for s in sections[1:3]}
    for node in nodes:
        assert text[node.metadata["start"] : node.metadata["end"]] == node.text
        assert encoder_tokens(parser, node.text) <= parser.target or len(split_sentences(node.text)) == 1


def test_nodes_carry_their_sentences_for_the_answer(bench_nodes):
    text, nodes = bench_nodes
    sentences = {(s.start, s.end) for s in split_sentences(text)}
    for node in nodes:
        offsets = node.metadata["sentences"]
        assert offsets and offsets[0][0] == 0 and offsets[-1][1] == len(node.text)
        base = node.metadata["start"]
        assert all((base + a, base + b) in sentences for a, b in offsets)  # whole sentences, exactly
        assert "sentences" in node.excluded_embed_metadata_keys and "sentences" in node.excluded_llm_metadata_keys
