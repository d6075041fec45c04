"""The encoders' runtimes: torch and ONNX float32 give sentence-transformers' vectors, ONNX int8 stays within the
measured tolerance; the export runs once per machine and is never loaded half-written; no torch import on ONNX."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from cpqa.config import get_settings
from cpqa.models import encoders
from cpqa.models.onnx_runtime import check_runtime, model_dir, onnx_file

TEXTS = [
    "Does tamoxifen reduce breast cancer recurrence?",
    "short",
    "Adjuvant tamoxifen reduced recurrence in estrogen receptor positive disease. " * 12,
]


@pytest.fixture(scope="module")
def sentences():
    """Real sentences: the first 200 of the shared sample's abstracts."""
    from cpqa.passages.seos import split_sentences
    from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
    from tests.conftest import shared

    found: list[str] = []
    for article, _ in iter_pubmed_records(shared("corpus", "pubmed_sample.xml.gz")):
        text = article.abstract
        found += [text[s.start : s.end] for s in split_sentences(text)]
        if len(found) >= 200:
            return found[:200]
    return found


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(encoders.minilm_path(), device="cpu")
    model.max_seq_length = 256
    return lambda texts: model.encode(list(texts), normalize_embeddings=True)


def _encoder(runtime: str):
    return encoders.load_encoder("sentence_embedder", get_settings(cpqa_profile="offline", cpqa_runtime=runtime))[0]


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_float_runtimes_give_sentence_transformers_vectors(runtime, reference, sentences):
    """Loaded with the model's own pooling, MiniLM's vectors equal SentenceTransformer's (long texts truncated)."""
    encoder = _encoder(runtime)
    assert encoder.runtime == runtime
    texts = [*TEXTS, *sentences[:50]]
    assert np.abs(encoder.encode(texts) - reference(texts)).max() < 1e-5


def test_int8_runtime_stays_within_tolerance(reference, sentences):
    """Dynamic int8 matrix products (the default on a CPU): each vector within cosine 0.95, on average 0.985."""
    encoder = _encoder("onnx-int8")
    cosines = (encoder.encode(sentences) * reference(sentences)).sum(axis=1)
    assert cosines.min() >= 0.95 and cosines.mean() >= 0.985


def test_the_export_runs_once_and_a_half_written_file_is_never_loaded(tmp_path):
    model = encoders.minilm_path()
    first = onnx_file(tmp_path, model, "hidden", "onnx-int8")
    stamp = first.stat().st_mtime_ns
    folder = model_dir(tmp_path, model, "hidden")
    assert first.parent == folder and (folder / "model.onnx").exists() and (folder / "meta.json").exists()
    (folder / "leftover.part").write_bytes(b"half")  # an export killed mid-write leaves only a .part file
    again = onnx_file(tmp_path, model, "hidden", "onnx-int8")
    assert again == first and again.stat().st_mtime_ns == stamp
    assert not any(p.suffix == ".part" for p in folder.iterdir() if p.name != "leftover.part")


def test_onnx_encoders_run_without_importing_torch(tmp_path):
    """A one-shot `cpqa ask` skips torch's import (about 1-2 s) once the export exists."""
    code = (
        "import sys; from cpqa.config import get_settings; from cpqa.models.encoders import load_encoder;"
        "e, _ = load_encoder('passage_retriever', get_settings(cpqa_profile='offline'));"
        "e.encode(['tamoxifen']); print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CPQA_CACHE": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)  # exports
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert done.stdout.split() == ["False", "False"]


def test_batches_bound_padding():
    lengths = [258, 30, 31, 29, 120, 33, 28, 35, 30, 30]
    from cpqa.models.batching import token_batches

    batches = token_batches(lengths, batch_size=4, budget=128)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches[0] == [0]  # the long sentence does not pad the short ones
    assert all(len(b) <= 4 and (len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 128) for b in batches)


def test_unknown_runtime_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="unknown runtime"):
        check_runtime("tensorrt")
    monkeypatch.setenv("CPQA_RUNTIME", "tensorrt")
    with pytest.raises(ValueError, match="cpqa_runtime"):
        get_settings()


def test_the_cross_encoder_scores_as_sentence_transformers_does(tmp_path):
    """The paper's reranker on our runtimes (random tiny MedCPT-Cross-Encoder): the logits CrossEncoder computes."""
    import torch
    from sentence_transformers import CrossEncoder

    from cpqa.models.cross_encoder import PairScorer
    from cpqa.testing.tiny_models import MEDCPT_CROSS, build_tiny_paper_models

    path = str(build_tiny_paper_models(tmp_path / "hub")[MEDCPT_CROSS])
    pairs = [
        ["does tamoxifen reduce recurrence", "tamoxifen reduced recurrence in trials"],
        ["lung cancer", "the patients were women"],
        ["risk", "hazard ratio " * 200],
    ]
    reference = CrossEncoder(path, device="cpu").predict(pairs, activation_fn=torch.nn.Identity())
    for runtime in ("torch", "onnx"):
        scores = PairScorer(path, tmp_path / "onnx", runtime=runtime).predict(pairs)
        assert np.abs(scores - reference).max() < 1e-4
    int8 = PairScorer(path, tmp_path / "onnx", runtime="onnx-int8").predict(pairs)
    assert int8.shape == (3,) and np.isfinite(int8).all()
