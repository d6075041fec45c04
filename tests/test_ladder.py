"""The ladder executor on the sample store, and `cpqa eval retrieval` end to end."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.cli import app
from cpqa.documents.boolean_search import run_ladder
from cpqa.types import RetrievalTrace
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
    trace = RetrievalTrace()
    result = run_ladder(LADDER, store, min_docs=5, retmax=50, trace=trace)
    first = store.search(LADDER[0], retmax=50)
    assert 0 < first.count < 5  # the specific level alone is not enough ...
    assert result.last_level == 2 and len(result.levels) == 2  # ... the second is, so the third never runs
    assert result.pmids[:first.count] == first.pmids  # earlier, more specific levels rank first
    assert len(result.pmids) == len(set(result.pmids)) >= 5
    assert [lv.expression for lv in trace.ladder] == LADDER[:2]
    assert trace.ladder[0].count == first.count and trace.ladder[0].new_pmids == first.count
    assert all(lv.ms > 0 for lv in trace.ladder)


def test_runs_to_the_end_when_documents_are_scarce(store):
    result = run_ladder(LADDER[:1], store, min_docs=1000)
    assert result.last_level == 1 and len(result.pmids) == result.levels[0].count


def test_a_failing_level_is_recorded_and_skipped(store):
    trace = RetrievalTrace()
    result = run_ladder(['"prostate cancer"[tiab] AND (', *LADDER[2:]], store, min_docs=3, trace=trace)
    assert result.levels[0].error.startswith("BooleanQueryError") and result.levels[0].count == 0
    assert result.last_level == 2 and len(result.pmids) >= 3
    assert any("level 1 failed" in w for w in trace.warnings)


def test_bad_limits_are_rejected(store):
    with pytest.raises(ValueError):
        run_ladder(LADDER, store, min_docs=0)


def test_eval_retrieval_cli_prints_the_shared_json_shape(sample_home, monkeypatch):
    questions = shared("pubmedqa", "dev_cancer_questions.jsonl")
    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    result = CliRunner().invoke(app, ["eval", "retrieval", "--questions", str(questions), "--paths", "E2",
                                      "--limit", "30", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    e2 = payload["E2"]
    assert e2["n"] == 30
    assert {"recall@5", "recall@10", "recall@20", "mrr@10", "ndcg@10", "hits@10"} <= set(e2)
    assert e2["recall@10"] >= 0.9 and e2["mrr@10"] >= 0.8  # PubMedQA is the easy set
    assert sum(payload["E2_ladder_last_level"].values()) == 30
    assert payload["questions"]["gold_missing"] == 0


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


def test_paths_plug_into_the_harness(home, tmp_path):
    from cpqa.config import get_settings
    from cpqa.evaluation.retrieval import evaluate, load_questions

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "q1", "gold_pmids": ["1"]}\n'
                    '{"id": "b", "question": "q2", "gold_pmids": ["2", "9"]}\n')
    questions = load_questions(path)

    class Fixed:  # ranks "1" then "2" for every question, and reports an extra key
        def __init__(self, settings):
            pass

        def __call__(self, question):
            return ["1", "2"]

        def report(self):
            return {"X_extra": {"ok": 1}}

    result = evaluate(questions, ["X"], get_settings(), paths={"X": Fixed})
    assert result["X"]["n"] == 2 and result["X"]["mrr@10"] == 0.75  # (1/1 + 1/2) / 2
    assert result["X"]["recall@5"] == 0.75  # (1 + 1/2) / 2
    assert result["X_extra"] == {"ok": 1}
    with pytest.raises(ValueError, match="unknown path"):
        evaluate(questions, ["E9"], get_settings(), paths={"X": Fixed})


def test_an_unavailable_service_ends_the_ladder_at_once():
    from cpqa.sources.ncbi.client import NCBIUnavailable
    from cpqa.types import RetrievalTrace

    class Down:
        calls = 0

        def search(self, term, **kwargs):
            Down.calls += 1
            raise NCBIUnavailable("E-utilities esearch.fcgi failed after 5 attempts")

    trace = RetrievalTrace()
    result = run_ladder(["a AND b", "a OR b", "a"], Down(), trace=trace)
    assert Down.calls == 1 and result.pmids == [] and len(result.levels) == 1
    assert any("levels 2-3 not tried" in w for w in trace.warnings)


def test_auto_profile_uses_the_local_store_when_ncbi_does_not_answer(monkeypatch, tmp_path):
    from cpqa.documents import hsrdr
    from cpqa.config import get_settings
    from cpqa.sources.ncbi import client

    monkeypatch.setattr(client, "eutils_reachable", lambda url, timeout: False)
    assert hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="auto"))
    monkeypatch.setattr(client, "eutils_reachable", lambda url, timeout: True)
    assert not hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="auto"))
    assert hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="offline"))
    assert not hsrdr.uses_local_store(get_settings(cpqa_home=tmp_path, cpqa_profile="offline",
                                                   cpqa_eutils_url="http://127.0.0.1:9/"))
