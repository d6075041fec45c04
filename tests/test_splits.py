"""The written splits are what their seeds give, disjoint, and keep the reported questions out of training."""

from __future__ import annotations

from conftest import shared

from cpqa.evaluation.data.splits import (
    BIOASQ_SPLITS,
    MEDQUAD_SPLITS,
    bioasq_splits,
    load_splits,
    medquad_page_splits,
    medquad_pages,
)


def test_the_bioasq_splits_are_written_as_their_seeds_give_them_and_disjoint():
    shared("bioasq", "dev_questions.jsonl")
    written = load_splits(BIOASQ_SPLITS)
    assert {name: frozenset(ids) for name, ids in bioasq_splits().items()} == written
    assert [len(written[n]) for n in ("cancer", "tuning", "dev", "train")] == [179, 400, 500, 1231]
    names = list(written)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not written[a] & written[b], (a, b)


def test_the_tuning_split_is_the_one_the_fusion_was_tuned_on():
    from cpqa.evaluation.evaluations.fusion_sweep import split
    from cpqa.evaluation.evaluations.retrieval import load_questions

    items = load_questions(shared("bioasq", "dev_questions.jsonl"))
    never = {q.id for q in load_questions(shared("bioasq", "dev_cancer_questions.jsonl"))}
    tuning, _ = split(items, 400, 13, never)
    assert {q.id for q in tuning} == load_splits(BIOASQ_SPLITS)["tuning"]


def test_the_medquad_pages_split_by_page_per_collection():
    shared("medquad")
    written = load_splits(MEDQUAD_SPLITS)
    assert {name: frozenset(ids) for name, ids in medquad_page_splits(medquad_pages()).items()} == written
    assert not (written["eval"] & written["train"]) and not (written["tuning"] & written["train"])
    cancer = [p for p in written["eval"] if p.startswith("1_CancerGov_QA/")]
    assert 30 <= len(cancer) <= 40  # 30 % of cancer.gov's 116 pages
