"""The record reranker trained here (``cpqa.documents.record_rerank``): it reads the question beside each of the first
kept records and its probability moves them within HSRDR's order; records past ``rerank_records`` keep their places.
Off by default (``rerank_records`` 0), by measurement."""

from __future__ import annotations

import pytest

from cpqa.documents.record_rerank import TRAINED_RERANKER, RecordReranker
from cpqa.options import DocumentOptions
from cpqa.types import AbstractSection, Article, Candidate, RetrievedDocument

QUESTION = "Which gene is mutated in cystic fibrosis?"
RECORDS = [  # the fusion's order: two unrelated records before the one that answers
    ("1", "Drip irrigation and greenhouse tomato yield", "Drip irrigation raised tomato yield by a fifth."),
    ("2", "Statin use after myocardial infarction", "Statins lowered the rate of a second heart attack."),
    (
        "3",
        "CFTR mutations in cystic fibrosis",
        "Cystic fibrosis is caused by mutations in the CFTR gene; F508del is the most common.",
    ),
    ("4", "Screening for colorectal cancer", "Colonoscopy every ten years lowered colorectal cancer mortality."),
]


def _documents() -> list[RetrievedDocument]:
    return [
        RetrievedDocument(
            candidate=Candidate(pmid=pmid, category="E3"),
            article=Article(pmid=pmid, title=title, abstract_sections=[AbstractSection(text=text)]),
        )
        for pmid, title, text in RECORDS
    ]


@pytest.fixture(scope="module")
def reranker() -> RecordReranker:
    if not (TRAINED_RERANKER / "model-int8.onnx").is_file():
        pytest.fail("the trained record reranker is not in cpqa/models/trained/reranker (cpqa train reranker)")
    return RecordReranker()


def test_the_record_that_answers_moves_up_and_each_read_record_keeps_its_score(reranker):
    reranked = reranker.rerank(QUESTION, _documents(), DocumentOptions(rerank_records=4, rerank_weight=50.0))
    assert reranked[0].candidate.pmid == "3"  # the model's order weighs most here
    scores = {d.candidate.pmid: d.candidate.reranker_score for d in reranked}
    assert scores["3"] == max(scores.values()) and None not in scores.values()
    assert [d.candidate.reranker_score for d in reranked] == sorted(scores.values(), reverse=True)


def test_beside_the_fusion_a_weighted_order_moves_records_within_the_first_n_only(reranker):
    reranked = reranker.rerank(QUESTION, _documents(), DocumentOptions(rerank_records=2, rerank_weight=50.0))
    assert [d.candidate.pmid for d in reranked][2:] == ["3", "4"]  # past the first two: untouched, unread
    assert all(d.candidate.reranker_score is None for d in reranked[2:])
    kept = reranker.rerank(QUESTION, _documents(), DocumentOptions(rerank_records=4, rerank_weight=0.0))
    assert [d.candidate.pmid for d in kept] == ["1", "2", "3", "4"]  # weight 0: the fusion's order


def test_one_record_is_left_as_it_is(reranker):
    one = _documents()[:1]
    assert reranker.rerank(QUESTION, one, DocumentOptions(rerank_records=25)) == one
    assert one[0].candidate.reranker_score is None
