"""The persistent passage layer: each record segmented once (layout and int8 sentence vectors), read back by later
questions and processes; first sight segments only the records that can reach the answer, each sentence embedded
once; the eager build (``cpqa index build``, ``cpqa ingest``) resumes where it stopped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cpqa.config import get_settings
from cpqa.passages.layout import Chunk, RecordLayout
from cpqa.passages.passage_store import PASSAGES_FILE, PassageStore
from cpqa.passages.vector_codec import decode, encode

QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"
_ASK = """
import json, sys
from cpqa.config import get_settings
from cpqa.pipeline import Pipeline
with Pipeline(get_settings()) as pipeline:
    rows = []
    for question in sys.argv[1:]:
        trace = pipeline.ask(question).trace
        rows.append({"segmentation": trace.stages["segmentation"].info,
                     "documents": [c.pmid for c in trace.candidates if c.kept],
                     "passages": [p.node_id for p in trace.passages]})
    print(json.dumps({"questions": rows, "segmented": pipeline.segments.segmented,
                      "stored": pipeline.passage_store.stats()}))
"""


@pytest.fixture
def home(indexed_home, tmp_path) -> Path:
    """A writable copy of the indexed sample home (store, vector and BM25 indexes), without stored passages."""
    target = tmp_path / "home"
    shutil.copytree(indexed_home, target, ignore=shutil.ignore_patterns(PASSAGES_FILE + "*"))
    return target


def _ask(home: Path, *questions: str) -> dict:
    env = {**os.environ, "CPQA_HOME": str(home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _ASK, *questions], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two cold processes loading the models
def test_first_sight_segments_only_the_records_that_reach_passages_once_across_processes(home):
    from cpqa.options import PassageOptions

    budget = PassageOptions().max_documents
    first = _ask(home, QUESTION, QUESTION.replace("Does", "Can"))
    one, two = first["questions"]
    # the cascade: only the best-fused records go on to passages, so only they are segmented on first sight ...
    assert len(one["documents"]) > budget and one["segmentation"]["documents"] == budget
    assert one["segmentation"]["segmented"] == budget
    # ... each of their sentences embedded once (SEOS's vectors are the passage vectors too), and nothing twice
    assert (
        one["segmentation"]["sentences_embedded"]
        == first["stored"]["vectors"] - two["segmentation"]["sentences_embedded"]
    )
    assert two["segmentation"]["segmented"] < budget  # the second question reused records
    assert first["stored"]["records"] == first["segmented"]
    again = _ask(home, QUESTION)  # a new process: everything comes from the store
    assert again["questions"][0]["segmentation"]["segmented"] == 0
    assert again["questions"][0]["passages"] == one["passages"]
    assert again["stored"] == {**first["stored"], "bytes": again["stored"]["bytes"]}


@pytest.mark.slow  # loads the encoder twice
def test_an_interrupted_passage_build_resumes(home):
    from cpqa.sources.store import Store
    from ingestion.passage_build import build_passages

    settings = get_settings(cpqa_home=home, cpqa_profile="offline")
    calls = []

    def stop_on_second_batch(n: int) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with Store(settings.store_path) as store:
        with pytest.raises(KeyboardInterrupt):
            build_passages(settings, store.iter_articles(), limit=40, batch_records=16, progress=stop_on_second_batch)
        with PassageStore(settings.index_dir / PASSAGES_FILE) as passages:
            assert passages.stats()["records"] == 32  # two batches were written before the stop
        resumed = build_passages(settings, store.iter_articles(), limit=40, batch_records=16)
        assert resumed.records == 40 and resumed.segmented == 8 and resumed.sentences > 0
        again = build_passages(settings, store.iter_articles(), limit=40, batch_records=16)
        assert again.segmented == 0 and again.sentences == 0


@pytest.mark.slow  # the eager build of the whole sample, then a pipeline
def test_a_built_home_answers_without_segmenting(home):
    """What ./setup.sh leaves (``cpqa index build`` builds passages by default): a question segments nothing."""
    from typer.testing import CliRunner

    from cpqa.cli import app

    env = {"CPQA_HOME": str(home), "CPQA_PROFILE": "offline"}
    result = CliRunner().invoke(app, ["index", "build", "--json"], env=env)
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout[result.stdout.index("{") :])["passages"]
    assert built["segmented"] == built["records"] > 4000 and built["records_per_second"] > 0
    asked = _ask(home, QUESTION, "What are the side effects of radiotherapy for prostate cancer?")
    assert all(q["segmentation"]["segmented"] == 0 and q["passages"] for q in asked["questions"])
    assert asked["segmented"] == 0


def test_ingest_segments_new_records_into_an_existing_passage_store(sample_home, tmp_path, monkeypatch):
    """New records get their passages from ``cpqa ingest`` itself once the home has a passage store."""
    from typer.testing import CliRunner

    from cpqa.cli import app
    from tests.conftest import shared

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CPQA_HOME", str(home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    pmc = sorted(shared("corpus", "pmc").iterdir())[:2]
    first = CliRunner().invoke(app, ["ingest", "pmc", str(pmc[0]), "--json"])
    assert first.exit_code == 0 and json.loads(first.stdout)["passages"] is None  # no passage store yet: lazy
    PassageStore(get_settings().index_dir / PASSAGES_FILE).close()  # what `cpqa index build` leaves
    second = CliRunner().invoke(app, ["ingest", "pmc", str(pmc[1]), "--json"])
    assert second.exit_code == 0, second.output
    built = json.loads(second.stdout)["passages"]
    assert built["segmented"] >= 1 and built["sentences"] > 10
    skipped = CliRunner().invoke(app, ["ingest", "pmc", *map(str, pmc), "--no-passages", "--json"])
    assert json.loads(skipped.stdout)["passages"] is None


def test_layouts_and_int8_vectors_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    layout = RecordLayout(
        sentences=[(0, 10), (11, 20), (21, 30), (31, 40), (41, 50)],
        chunks=[Chunk(None, 0, 3), Chunk("Results", 2, 5)],
        vectors=vectors,
        passages=vectors[:2],
    )
    with PassageStore(tmp_path / "p.sqlite") as store:
        store.put([("k", "1", layout), ("old", "2", RecordLayout([(0, 5)], [Chunk(None, 0, 1)], vectors[:1]))])
        back = store.get(["k", "old", "missing"])
        assert sorted(back) == ["k", "old"] and store.has(["k", "x"]) == {"k"}
        got = back["k"]
        assert got.sentences == layout.sentences and got.chunks == layout.chunks
        assert np.abs(got.vectors - vectors).max() < 1.0 / 127  # half an int8 step of the largest component
        assert np.abs(got.passages - vectors[:2]).max() < 1.0 / 127 and back["old"].passages is None
        assert store.stats()["records"] == 2 and store.stats()["vectors"] == 6
        assert store.stats()["passage_vectors"] == 2
    row_bytes = len(encode(vectors))
    assert row_bytes == 8 + 5 * (4 + 384)  # a quarter of float32, one scale per row
    assert decode(encode(np.zeros((0, 384), dtype=np.float32))).shape == (0, 384)


def test_without_a_passage_embedder_passage_vectors_are_the_mean_of_their_sentences():
    vectors = np.eye(4, dtype=np.float32)
    layout = RecordLayout(sentences=[(0, 1)] * 4, chunks=[Chunk(None, 0, 2), Chunk(None, 1, 4)], vectors=vectors)
    passages = layout.passage_vectors()
    assert np.allclose(passages[0], [2**-0.5, 2**-0.5, 0, 0])
    assert np.allclose(passages[1], [0, 3**-0.5, 3**-0.5, 3**-0.5])
    assert layout.passage_vectors(dim=2).shape == (2, 2)  # a Matryoshka passage embedder cuts them


@pytest.mark.slow  # embeds a few hundred sample records twice
def test_int8_stored_vectors_rank_the_same_top_passages_as_float32(sample_settings):
    """Compact vectors re-score to the same top passages as float32 on the sample."""
    from cpqa.models.encoders import unit_rows
    from cpqa.sources.store import Store
    from cpqa.passages.bulk import passage_segmenter

    settings = sample_settings.model_copy(update={"cpqa_profile": "offline"})
    segmenter = passage_segmenter(settings, None)
    encoder = segmenter.parser.model
    with Store(settings.store_path) as store:
        articles = [a for a in store.iter_articles() if a.has_abstract][:300]
    layouts = segmenter.layouts([(a, "D1") for a in articles])
    assert all(layout.passages is not None for layout in layouts)  # the passage embedder read every chunk
    exact = np.concatenate([layout.passage_vectors() for layout in layouts])
    compact = np.concatenate(
        [
            RecordLayout(
                layout.sentences, layout.chunks, decode(encode(layout.vectors)), decode(encode(layout.passages))
            ).passage_vectors()
            for layout in layouts
        ]
    )
    questions = [
        "Does tamoxifen reduce the risk of breast cancer recurrence?",
        "What are the side effects of radiotherapy for prostate cancer?",
        "Is obesity a risk factor for colorectal cancer?",
        "How is leukemia treated in children?",
        "Which genes are mutated in familial breast cancer?",
    ]
    for query in unit_rows(encoder.encode(questions)):
        assert list(np.argsort(-(exact @ query))[:5]) == list(np.argsort(-(compact @ query))[:5])


def test_passage_bench_builds_replicates_and_times_retrieval(sample_home, monkeypatch, tmp_path):
    """`cpqa bench passages` on a tiny build: rates are positive, the grown store holds the asked records."""
    from typer.testing import CliRunner

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "passages",
            "--size",
            "30",
            "--size",
            "60",
            "--build-records",
            "6",
            "--queries",
            "2",
            "--candidates",
            "5",
            "--workdir",
            str(tmp_path),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    build = report["build"]
    assert build["records"] == 6 and build["passages"] >= 6 and build["sentences"] >= build["passages"]
    assert build["records_per_s"] > 0 and 0 < build["bytes_per_record"] < 50_000 and build["gb_for_pubmed"] > 0
    assert [p["records"] for p in report["scale"]] == [30, 60]
    small, large = report["scale"]
    assert large["store_bytes"] > small["store_bytes"]  # replicas really are stored
    assert all(p["retrieval_p95_ms"] >= p["retrieval_p50_ms"] > 0 for p in report["scale"])
    assert list(tmp_path.iterdir()) == []  # temporary stores removed


def test_passage_bench_refuses_bad_sizes(sample_home, monkeypatch):
    from typer.testing import CliRunner

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    result = CliRunner().invoke(app, ["bench", "passages", "--size", "0"])
    assert result.exit_code != 0 and "--size must be positive" in result.output


def test_a_passage_without_the_records_conclusions_carries_them_to_the_answerer():
    from cpqa.answer.answerer import format_evidence
    from cpqa.passages.dense import to_passage
    from cpqa.passages.layout import Chunk, RecordLayout
    from cpqa.passages.records import article_nodes, source_text
    from cpqa.types import AbstractSection, Article
    from llama_index.core.schema import NodeWithScore

    article = Article(
        pmid="7",
        title="Tamoxifen after surgery",
        abstract_sections=[
            AbstractSection(label="METHODS", nlm_category="METHODS", text="Women were randomised."),
            AbstractSection(label="CONCLUSIONS", nlm_category="CONCLUSIONS", text="Tamoxifen reduced recurrence."),
        ],
    )
    text, _ = source_text(article)
    first_end = text.index("CONCLUSIONS") - 1
    layout = RecordLayout(
        [(0, first_end), (first_end + 1, len(text))],
        [Chunk(None, 0, 1), Chunk(None, 1, 2)],
        np.zeros((2, 4), dtype=np.float32),
    )
    methods, conclusions = (to_passage(NodeWithScore(node=n, score=1.0)) for n in article_nodes(article, layout))
    assert methods.conclusion == "Tamoxifen reduced recurrence." and conclusions.conclusion is None
    shown = format_evidence([methods])
    assert "Women were randomised." in shown and "conclusions: Tamoxifen reduced recurrence." in shown
    assert methods.evidence_text.endswith("Tamoxifen reduced recurrence.")  # what the support check reads
