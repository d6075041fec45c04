"""Profiles and encoders: auto picks the paper's models only when their weights can be had, and the paper's
loading code runs up to the load (it fails here with a clear error because the hub is unreachable)."""

import numpy as np
import pytest

from cpqa.models import encoders, names
from cpqa.config import get_settings


@pytest.mark.parametrize("component", sorted(encoders.PAPER_MODELS))
def test_auto_falls_back_per_component_without_weights(home, monkeypatch, component):
    monkeypatch.setenv("CPQA_PROFILE", "auto")
    choice = encoders.resolve(component, get_settings())
    assert choice.profile == "offline"
    assert choice.model == encoders.offline_model(component, get_settings())
    trained = component in ("semantic_query", "article_encoder", "evidence_scorer")
    assert choice.model == (encoders.TRAINED if trained else encoders.OFFLINE_MODELS[component])
    assert encoders.PAPER_MODELS[component] in choice.reason


def test_auto_picks_paper_model_when_cached(home, monkeypatch):
    monkeypatch.setenv("CPQA_PROFILE", "auto")
    monkeypatch.setattr(encoders, "weights_cached", lambda model_id: model_id == encoders.MEDCPT_QUERY)
    encoders._paper_model_available.cache_clear()
    try:
        s = get_settings()
        assert encoders.resolve("semantic_query", s).model == encoders.MEDCPT_QUERY
        assert encoders.resolve("reranker", s).profile == "offline"
    finally:
        encoders._paper_model_available.cache_clear()


def test_unknown_component_is_a_clear_error(settings):
    with pytest.raises(ValueError, match="unknown component"):
        encoders.resolve("nope", settings)


@pytest.mark.parametrize("component", ["semantic_query", "article_encoder", "passage_retriever"])
def test_paper_encoders_load_through_the_real_code_and_fail_clearly_offline(home, monkeypatch, component):
    monkeypatch.setenv("CPQA_PROFILE", "paper")
    with pytest.raises(encoders.ModelUnavailable, match=encoders.PAPER_MODELS[component].split("/")[0]):
        encoders.load_encoder(component, get_settings())


def test_paper_cross_encoder_fails_clearly_offline(home, monkeypatch):
    monkeypatch.setenv("CPQA_PROFILE", "paper")
    with pytest.raises(encoders.ModelUnavailable, match="MedCPT-Cross-Encoder"):
        encoders.load_cross_encoder(get_settings())


def test_offline_cross_encoder_is_none_with_the_fusion_choice(settings):
    model, choice = encoders.load_cross_encoder(settings)
    assert model is None and choice.model == names.FUSION_RERANKER


def test_minilm_embeds_unit_vectors_and_ranks_sensibly(settings):
    encoder, choice = encoders.load_encoder("passage_retriever", settings)
    assert choice.profile == "offline" and encoder.normalize and encoder.dim == 384
    vecs = encoder.encode(["side effects of chemotherapy", "adverse events of cytotoxic chemotherapy", "tax law"])
    assert vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]


def test_embedding_cache_encodes_each_text_once(settings):
    encoder, _ = encoders.load_encoder("sentence_embedder", settings)
    cache = encoders.EmbeddingCache(encoder, max_items=10)
    first = cache.encode(["a tumour", "a biopsy"])
    again = cache.encode(["a biopsy", "a tumour"])
    assert cache.misses == 2 and cache.hits == 2
    assert np.allclose(first[0], again[1])


def test_device_choice_is_checked_never_silently_the_cpu():
    import torch

    from cpqa.models.encoders import ModelUnavailable, resolve_device

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else resolve_device("auto"))
    if not torch.cuda.is_available():
        assert resolve_device("auto") in ("cpu", "mps")
        with pytest.raises(ModelUnavailable, match="no CUDA GPU"):
            resolve_device("cuda")
    with pytest.raises(ModelUnavailable, match="unknown device"):
        resolve_device("tpu")


def test_index_build_refuses_a_device_that_is_not_there(home):
    import torch
    from typer.testing import CliRunner

    from cpqa.cli import app

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: --device cuda is valid here")
    result = CliRunner().invoke(app, ["index", "build", "--device", "cuda"])
    assert result.exit_code != 0 and "no CUDA GPU" in result.output
