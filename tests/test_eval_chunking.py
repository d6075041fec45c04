"""Chunking benchmark: hit rule, ranking metrics, Pk / WindowDiff, splitter offsets, and the CLI on a subset."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.evaluation.evaluations.chunking import (
    BenchDoc,
    boundary_string,
    hit_scores,
    holds_gold,
    load_bench,
    segmentation_errors,
)
from cpqa.evaluation.evaluations.splitters import (
    ChunkSpan,
    sentence_splitter,
    sentence_window_splitter,
    texttiling_splitter,
)
from tests.conftest import shared


@pytest.fixture(scope="module")
def docs() -> list[BenchDoc]:
    return load_bench(shared("bench", "chunking_dev.jsonl"), limit=2)


def test_hit_needs_half_the_gold_span():
    gold = (100, 200)
    assert holds_gold(ChunkSpan(0, 150, 0, 150), gold)
    assert not holds_gold(ChunkSpan(0, 149, 0, 149), gold)
    assert holds_gold(ChunkSpan(120, 400, 120, 400), gold)
    assert not holds_gold(ChunkSpan(200, 400, 200, 400), gold)


def test_hit_scores_count_only_the_top_five():
    assert hit_scores([4, 2, 9], {9, 7}) == (1.0, pytest.approx(1 / 3))
    assert hit_scores([1, 2, 3, 4, 5, 6], {6}) == (0.0, 0.0)
    assert hit_scores([1, 2], set()) == (0.0, 0.0)  # no chunk holds the gold span


def test_boundary_string_marks_the_word_before_each_boundary():
    text = "one two  three four five"
    assert boundary_string(text, [4, 9]) == "11000"  # boundaries before "two" and "three"
    assert boundary_string(text, [0, len(text)]) == "00000"  # edges are no boundaries


def test_segmentation_errors_zero_for_the_true_segments(docs):
    doc = docs[0]
    starts = [s.start for s in doc.segments]
    assert segmentation_errors(doc.text, starts, starts) == (0.0, 0.0)
    pk, wd = segmentation_errors(doc.text, starts, [0])  # no boundary found at all
    assert pk > 0.3 and wd > 0.3


def test_load_bench_rejects_bad_input(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "x"}\n')
    with pytest.raises(ValueError, match="bad.jsonl line 1"):
        load_bench(bad)
    with pytest.raises(FileNotFoundError):
        load_bench(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    "make",
    [lambda: sentence_splitter(512, 32), sentence_window_splitter, texttiling_splitter],
    ids=["SentenceSplitter", "SentenceWindow", "TextTiling"],
)
def test_rival_splitters_give_offsets_into_the_source(make, docs):
    text = docs[0].text
    chunks = make()(text)
    assert len(chunks) > 1
    for c in chunks:
        assert 0 <= c.start <= c.key_start < c.key_end <= c.end <= len(text)
        assert text[c.key_start : c.key_end].strip()
    assert chunks[0].start == 0 and max(c.end for c in chunks) >= len(text.rstrip()) - 1


def test_cli_rejects_a_missing_bench(settings, tmp_path):
    from cpqa.cli import app

    result = CliRunner().invoke(app, ["eval", "chunking", "--bench", str(tmp_path / "none.jsonl"), "--json"])
    assert result.exit_code == 2 and "not found" in result.output


@pytest.mark.slow
def test_cli_chunking_benchmark_on_a_subset(settings, tmp_path):
    from cpqa.cli import app

    bench = shared("bench", "chunking_dev.jsonl")
    saved = tmp_path / "chunking.json"
    result = CliRunner().invoke(
        app, ["eval", "chunking", "--bench", str(bench), "--limit", "2", "--json", "--save", str(saved)]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert json.loads(saved.read_text()) == payload
    assert payload["docs"] == 2 and payload["queries"] == 2
    expected = {
        "SEOS",
        "SentenceSplitter-256-64",
        "SentenceSplitter-512-0",
        "SentenceSplitter-512-32",
        "SentenceSplitter-512-128",
        "SentenceWindow",
        "SemanticSplitter",
        "TextTiling",
    }
    assert set(payload["splitters"]) == expected
    for row in payload["splitters"].values():
        for retriever in ("bm25", "dense", "dense+rerank"):
            assert 0.0 <= row[retriever]["mrr@5"] <= row[retriever]["hits@5"] <= 1.0
        assert row["mean_words"] > 0 and row["chunks_per_s"] > 0 and 0 <= row["pk"] <= 1
    assert payload["models"]["reranker"].startswith("BM25 + dense fusion")


def test_cross_validation_tunes_on_one_half_and_judges_on_the_other():
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.chunking_cv import criterion, cross_validate, halves
    from cpqa.models.encoders import EmbeddingCache, load_encoder

    docs = load_bench(shared("bench", "chunking_dev.jsonl"), limit=6)
    first, second = halves(docs, seed=0)
    assert {d.doc_id for d in first}.isdisjoint(d.doc_id for d in second) and len(first) + len(second) == 6
    encoder, _ = load_encoder("sentence_embedder", get_settings(cpqa_profile="offline"))
    grid = {"window_fill": (0.5, 1.0), "overlap_fill": (0.0,), "cutoff_sd": (0.5,)}
    result = cross_validate(
        docs,
        encoder,
        {"SentenceSplitter-512-32": sentence_splitter(512, 32)},
        EmbeddingCache(encoder),
        None,
        window_tokens=encoder.max_tokens,
        grid=grid,
    )
    assert [f.tuned_on for f in result.folds] == [[d.doc_id for d in first], [d.doc_id for d in second]]
    for fold, tuned in zip(result.folds, ("half_1", "half_2")):
        best = max(result.scores, key=lambda s: s[tuned])[tuned]
        assert fold.tuning_score == pytest.approx(best)  # chosen on its own half ...
        assert set(fold.held_out) == {"SEOS", "SentenceSplitter-512-32"}  # ... judged with the rival on the other
        assert criterion(fold.held_out["SEOS"])[0] <= 1.0
    assert result.shipped in [{k: v for k, v in s.items() if k in grid} for s in result.scores]
    assert set(result.held_out_mean["SEOS"]) >= {"dense_mrr@5", "bm25_hits@5"}
