"""Ranking metrics with binary gains, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from cpqa.evaluation.stats.metrics import average, hits_at, mrr_at, ndcg_at, question_scores, recall_at

RANKED = ["a", "b", "c", "a", "d", "e"]  # the repeated "a" counts once


def test_recall_and_hits():
    assert recall_at(RANKED, {"c", "e", "z"}, 3) == pytest.approx(1 / 3)
    assert recall_at(RANKED, {"c", "e", "z"}, 5) == pytest.approx(2 / 3)  # "a" twice does not push "e" out
    assert hits_at(RANKED, {"z"}, 5) == 0.0 and hits_at(RANKED, {"d"}, 4) == 1.0


def test_mrr_counts_the_first_gold_within_k():
    assert mrr_at(RANKED, {"c", "d"}, 10) == pytest.approx(1 / 3)
    assert mrr_at(RANKED, {"e"}, 4) == 0.0


def test_ndcg_binary_gains():
    expected = (1 / math.log2(3)) / (1 / math.log2(2) + 1 / math.log2(3))
    assert ndcg_at(RANKED, {"b", "z"}, 10) == pytest.approx(expected)
    assert ndcg_at(["x", "y"], {"x", "y"}, 10) == pytest.approx(1.0)


def test_question_scores_and_average():
    one = question_scores(["g"], {"g"})
    two = question_scores(["x"], {"g"})
    assert set(one) == {"recall@5", "recall@10", "recall@20", "hits@5", "hits@10", "hits@20", "mrr@10", "ndcg@10"}
    assert average([one, two])["mrr@10"] == 0.5
    assert average([]) == {}


def test_bad_input_is_an_error():
    with pytest.raises(ValueError, match="gold"):
        recall_at(["a"], set(), 5)
    with pytest.raises(ValueError, match="k must"):
        hits_at(["a"], {"a"}, 0)
