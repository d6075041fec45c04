"""The extractive answer's evidence scorer: research sentences scored by the encoder trained here (offline), a patient
page's by the sentence embedder, each kind with its own thin-evidence cosine (``rank_sentences``, ``Answerer.rank``)."""

from __future__ import annotations

import numpy as np
import pytest

from cpqa.answer.answerer import Answerer
from cpqa.answer.extractive import rank_sentences
from cpqa.config import get_settings
from cpqa.models.encoders import MINILM, TRAINED, EmbeddingCache, load_distinct, load_encoder
from cpqa.options import AnswerOptions, PipelineOptions
from cpqa.types import Passage

QUESTION = "Which drugs are approved for chronic myeloid leukemia?"
RESEARCH = Passage(
    node_id="r",
    pmid="12345678",
    text="Imatinib, dasatinib and nilotinib are approved for chronic myeloid leukemia. The cohort was followed.",
)
PAGE = Passage(
    node_id="patient:cancergov-1:0",
    pmid="cancergov-1",
    text="Chronic myeloid leukemia is a disease in which the bone marrow makes too many white blood cells.",
    source="D4",
    title="Chronic Myeloid Leukemia Treatment (PDQ)",
    section="General information",
    kind="information",
)


@pytest.fixture(scope="module")
def encoders():
    settings = get_settings(cpqa_profile="offline")
    return EmbeddingCache(load_encoder("sentence_embedder", settings)[0]), EmbeddingCache(
        load_encoder("evidence_scorer", settings)[0]
    )


def _scores(ranked) -> dict[str, float]:
    return {s.text: s.score for s in ranked}


def test_each_kind_of_evidence_is_scored_by_its_own_encoder_with_its_own_threshold(encoders):
    minilm, trained = encoders
    ranked, threshold = rank_sentences(QUESTION, [PAGE, RESEARCH], minilm, research=trained, research_threshold=0.2)
    both = _scores(ranked)
    # the page's sentence as MiniLM scores it, the research's as the trained encoder does (alone, the same scores)
    assert both.items() >= _scores(rank_sentences(QUESTION, [PAGE], minilm)[0]).items()
    assert both.items() >= _scores(rank_sentences(QUESTION, [RESEARCH], trained)[0]).items()
    research_only = _scores(rank_sentences(QUESTION, [RESEARCH], minilm)[0])
    assert not np.allclose(list(research_only.values()), [both[t] for t in research_only])  # another model
    assert threshold == 0.2
    # without an evidence scorer every sentence is scored by the one encoder, at its threshold
    _, shared = rank_sentences(QUESTION, [PAGE, RESEARCH], minilm)
    assert shared == AnswerOptions().min_dense_score


def test_the_answerer_uses_the_trained_threshold_only_with_the_trained_scorer(encoders):
    minilm, trained = encoders
    options = PipelineOptions.of(min_trained_score=0.25, min_dense_score=0.45).answer
    trained_answerer = Answerer(encoder=minilm, research=trained, research_trained=True)
    assert trained_answerer.rank(QUESTION, [RESEARCH], options)[1] == 0.25
    assert Answerer(encoder=minilm).rank(QUESTION, [RESEARCH], options)[1] == 0.45


def test_the_offline_profile_scores_research_with_the_encoder_trained_here_unless_told_otherwise(monkeypatch):
    settings = get_settings(cpqa_profile="offline")
    passage_choice = load_encoder("passage_retriever", settings)[1]
    scorer, choice = load_distinct("evidence_scorer", settings, passage_choice)
    assert choice.model == TRAINED and scorer is not None and scorer.name == TRAINED
    # the bundled MiniLM everywhere: the passage embedder's cache serves the answer alone (nothing loaded twice)
    minilm = get_settings(cpqa_profile="offline", cpqa_offline_encoder="minilm")
    scorer, choice = load_distinct("evidence_scorer", minilm, passage_choice)
    assert scorer is None and choice.model == MINILM
