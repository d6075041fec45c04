"""The answer ranker (cpqa.answer.ranker): its features, the shipped weights, and the order it gives candidates."""

import json

import numpy as np
import pytest

from cpqa.answer.extractive import Sentence
from cpqa.answer.intent import Addressing
from cpqa.answer.ranker import FEATURES, TRAINED_RANKER, AnswerRanker, candidate_features
from cpqa.types import Passage
from cpqa.safety.screening import check_question


def _passage(pmid: str, text: str, section: str | None = None) -> Passage:
    return Passage(node_id=f"{pmid}:0", pmid=pmid, title="Perforin and familial disease", text=text, section=section)


QUESTION = "Which disease is caused by mutations in the gene PRF1?"
TOPIC = "The PRF1 gene was sequenced in patients with an inherited disease caused by mutations."
ANSWER = "Mutations in the PRF1 gene cause familial hemophagocytic lymphohistiocytosis, an inherited disease."
PASSAGES = [_passage("1", TOPIC), _passage("2", ANSWER, "CONCLUSIONS")]
RANKED = [Sentence("1", TOPIC, 0.80, 0), Sentence("2", ANSWER, 0.74, 1)]  # similarity puts the topic first


def test_the_shipped_weights_read_the_features_the_ranker_computes():
    data = json.loads(TRAINED_RANKER.read_text(encoding="utf-8"))
    assert tuple(data["features"]) == FEATURES
    provenance = data["provenance"]
    assert provenance["learned_from"].startswith("BioASQ train split") and provenance["questions"] > 100
    checked = provenance["first_candidate_names_an_exact_answer"]["tuning"]
    assert checked["ranker"] > checked["similarity"]  # why it is on: measured on questions it never learned from


def test_features_see_what_an_answer_adds_to_the_question():
    rows = candidate_features(QUESTION, RANKED, PASSAGES, Addressing.of(QUESTION), top=16)
    assert rows.shape == (2, len(FEATURES))
    named = dict(zip(FEATURES, rows[1]))
    assert named["new_specialist_words"] >= 1 and named["adds_a_specialist_word"] == 1.0
    assert named["conclusions"] == 1.0 and named["first"] == 0.0
    assert dict(zip(FEATURES, rows[0]))["first"] == 1.0


def test_the_trained_ranker_puts_the_answer_before_the_topic():
    found = AnswerRanker.load().probabilities(QUESTION, RANKED, PASSAGES, Addressing.of(QUESTION), top=16)
    assert set(found) == {(0, TOPIC), (1, ANSWER)}
    assert all(0.0 <= p <= 1.0 for p in found.values())
    assert found[(1, ANSWER)] > found[(0, TOPIC)]


def test_weights_for_other_features_are_refused(tmp_path):
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps({"features": ["similarity"], "mean": [0], "scale": [1], "weights": [1], "bias": 0}))
    with pytest.raises(ValueError, match="other features"):
        AnswerRanker.load(path)
    with pytest.raises(ValueError, match="features"):
        AnswerRanker([0.0], [1.0], [1.0], 0.0)
    assert AnswerRanker.load().predict(np.zeros((0, len(FEATURES)))).shape == (0,)


@pytest.mark.parametrize("ranker", [True, False])
def test_the_extractive_answer_quotes_first_what_the_ranker_puts_first(ranker):
    from cpqa.answer.answerer import Answerer
    from cpqa.options import PipelineOptions

    from cpqa.config import get_settings
    from cpqa.models.encoders import load_encoder

    encoder, _ = load_encoder("sentence_embedder", get_settings(cpqa_profile="offline"))  # the bundled MiniLM
    # asked_first off: the question asks "which disease", and rule 3 would put the answer first without the ranker
    options = PipelineOptions().with_overrides(ranker=ranker, max_quotes=1, min_dense_score=0.0, asked_first=False)
    text = Answerer(encoder=encoder, options=options).answer(check_question(QUESTION), PASSAGES, "clinician").text
    first = ANSWER if ranker else TOPIC  # without the ranker, the similarity's order
    assert first in text and (TOPIC if ranker else ANSWER) not in text


def test_train_ranker_refuses_a_split_it_cannot_check_on(tmp_path):
    from typer.testing import CliRunner

    from cpqa.evaluation.cli.train import train_app

    result = CliRunner().invoke(train_app, ["ranker", "--out", str(tmp_path / "r.json"), "--check", "train"])
    assert result.exit_code != 0 and "--check must be" in result.output
    assert not (tmp_path / "r.json").exists()
