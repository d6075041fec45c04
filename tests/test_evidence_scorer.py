"""The extractive answer's evidence scorer (``AnswerOptions.evidence_scorer``, off): a clinician's research sentences
scored by the encoder trained here (offline), a patient page's and a patient's by the passage embedder
(``rank_sentences``, ``Answerer.rank``)."""

from __future__ import annotations

import numpy as np
import pytest

from cpqa.answer.answerer import Answerer
from cpqa.answer.extractive import rank_sentences
from cpqa.config import get_settings
from cpqa.models.encoders import MINILM, TRAINED, EmbeddingCache, load_encoder
from cpqa.models.lazy_encoder import distinct_encoder
from cpqa.options import AnswerOptions
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


def test_each_kind_of_evidence_is_scored_by_its_own_encoder(encoders):
    minilm, trained = encoders
    ranked, threshold = rank_sentences(QUESTION, [PAGE, RESEARCH], minilm, research=trained)
    both = _scores(ranked)
    # the page's sentence as MiniLM scores it, the research's as the trained encoder does (alone, the same scores)
    assert both.items() >= _scores(rank_sentences(QUESTION, [PAGE], minilm)[0]).items()
    assert both.items() >= _scores(rank_sentences(QUESTION, [RESEARCH], trained)[0]).items()
    research_only = _scores(rank_sentences(QUESTION, [RESEARCH], minilm)[0])
    assert not np.allclose(list(research_only.values()), [both[t] for t in research_only])  # another model
    assert threshold == AnswerOptions().min_dense_score


def test_only_a_clinician_s_research_is_scored_by_the_evidence_scorer_and_only_when_asked(encoders):
    minilm, trained = encoders
    answerer, on = Answerer(encoder=minilm, research=trained), AnswerOptions(evidence_scorer=True)
    for patient, options, scorer in ((True, on, minilm), (False, on, trained), (False, AnswerOptions(), minilm)):
        alone = _scores(rank_sentences(QUESTION, [RESEARCH], scorer)[0])
        assert _scores(answerer.rank(QUESTION, [RESEARCH], options, patient=patient)[0]) == alone


def test_the_offline_profile_scores_research_with_the_encoder_trained_here_unless_told_otherwise():
    settings = get_settings(cpqa_profile="offline")
    passage_encoder, passage_choice = load_encoder("passage_retriever", settings)
    scorer, choice = distinct_encoder("evidence_scorer", settings, passage_choice)
    assert choice.model == TRAINED and scorer is not None
    trained, _ = load_encoder("evidence_scorer", settings)
    assert np.allclose(scorer.encode([QUESTION]), trained.encode([QUESTION]))  # loaded when first asked
    # the bundled MiniLM everywhere: the passage embedder's cache serves the answer alone (nothing loaded twice)
    minilm = get_settings(cpqa_profile="offline", cpqa_offline_encoder="minilm")
    scorer, choice = distinct_encoder("evidence_scorer", minilm, passage_choice)
    assert scorer is None and choice.model == MINILM
