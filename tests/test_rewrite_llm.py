"""The Claude path of the rewriter, over real HTTP against the Messages API stand-in: the tool schema it
sends, validation and repair of Claude's expressions, and retry-then-fallback for every kind of failure."""

from __future__ import annotations

import pytest

from cpqa.sources.boolean import parse
from cpqa.config import get_settings
from cpqa.models.llm import Claude
from cpqa.rewrite.rewriter import LADDER_TOOL, Rewriter, repair_expression
from cpqa.testing.anthropic_standin import Reply

KEY = "sk-ant-test-REWRITE-987654"
GOOD = {
    "normalized": "What are the side effects of pembrolizumab in lung cancer?",
    "search_intent": "pembrolizumab adverse effects in lung cancer",
    "intent": "side_effects",
    "concepts": [
        {"text": "lung cancer", "mesh": "Lung Neoplasms", "synonyms": ["NSCLC"], "role": "core"},
        {"text": "pembrolizumab", "mesh": None, "synonyms": ["Keytruda"], "role": "supporting"},
        {"text": "adverse effects", "synonyms": ["side effects", "toxicity"], "role": "supporting"},
    ],
    "relations": ["pembrolizumab treats lung cancer"],
    "ladder": [
        '"lung neoplasms"[mh] AND pembrolizumab[tiab] AND "adverse effects"[tiab]',
        (
            '("lung cancer"[tiab] OR NSCLC[tiab]) AND (pembrolizumab[tiab] OR keytruda[tiab]) '
            'AND (toxicity[tiab] OR "side effects"[tiab])'
        ),
        '"lung cancer"[tw] OR pembrolizumab[tw]',
    ],
}


@pytest.fixture
def rewriter(api, home):
    settings = get_settings(
        anthropic_api_key=KEY, anthropic_base_url=api.url, cpqa_llm_max_retries=1, cpqa_llm_timeout=2.0
    )
    return Rewriter(settings, llm=Claude(settings))


def test_sends_the_tool_schema_and_uses_claudes_ladder(api, rewriter):
    api.script(Reply.tool(GOOD))
    result = rewriter.rewrite("what about its side efects?", history=["Does pembrolizumab work for lung cancer?"])
    assert result.method == "llm" and result.ladder == GOOD["ladder"]
    assert result.search_intent == GOOD["search_intent"] and result.intent == "side_effects"
    assert [c.core for c in result.concepts] == [True, False, False]
    body = api.requests[-1]
    assert body["tools"] == [LADDER_TOOL.to_api()]
    assert body["tool_choice"] == {"type": "tool", "name": "query_ladder"}
    assert body["model"] == rewriter.settings.cpqa_llm_model
    schema = body["tools"][0]["input_schema"]
    assert set(schema["required"]) == {"normalized", "search_intent", "intent", "concepts", "ladder"}
    text = body["messages"][0]["content"]
    assert "Does pembrolizumab work for lung cancer?" in text and "what about its side efects?" in text
    assert KEY not in str(body)


def test_invalid_expressions_are_repaired_or_dropped_and_the_ladder_completed(api, rewriter):
    broken = dict(
        GOOD,
        ladder=[
            '"lung cancer"[tiab] AND (pembrolizumab[tiab] OR keytruda[tiab]',  # missing ')'
            "cancer[nonsense] AND",  # unknown tag, dangling operator
            ")(",
            '"" OR',
        ],
    )  # beyond repair
    api.script(Reply.tool(broken))
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert result.method == "llm" and len(result.ladder) >= 3
    assert result.ladder[:2] == ['"lung cancer"[tiab] AND (pembrolizumab[tiab] OR keytruda[tiab])', "cancer"]
    for expression in result.ladder:
        parse(expression)
    assert any("dropped" in n for n in result.notes) and any("rule-built" in n for n in result.notes)


def test_no_valid_expression_rebuilds_the_ladder_from_claudes_concepts(api, rewriter):
    api.script(Reply.tool(dict(GOOD, ladder=["((("])))
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert result.method == "llm" and len(result.ladder) >= 3
    assert '"Keytruda"' in result.ladder[-1]  # Claude's synonyms widen the last level
    assert result.ladder[0].startswith('("lung cancer"[tiab] OR "Lung Neoplasms"[mh])')  # its core first


def test_transport_errors_are_retried_by_the_client_then_fall_back(api, rewriter):
    api.script(Reply.error(500, retry_after=0.01), Reply.error(500, retry_after=0.01))
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert len(api.requests) == 2  # one try and cpqa_llm_max_retries=1 retry, no re-ask on top
    assert result.method == "rules" and len(result.ladder) >= 3
    assert "HTTP 500" in result.notes[0] and KEY not in " ".join(result.notes)


def test_rate_limit_then_success(api, rewriter):
    api.script(Reply.error(429, retry_after=0.01), Reply.tool(GOOD))
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert result.method == "llm" and len(api.requests) == 2


def test_malformed_tool_input_is_asked_again_once(api, rewriter):
    api.script(Reply.tool({"normalized": "x"}), Reply.tool(GOOD))
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert result.method == "llm" and len(api.requests) == 2
    assert "could not be used" in api.requests[-1]["messages"][0]["content"]


@pytest.mark.parametrize(
    "replies",
    [
        (Reply.tool({"ladder": "not a list"}), Reply.tool({"concepts": []})),  # schema violations twice
        (Reply.text("I cannot help with that."), Reply.text("Still no.")),  # no tool call
        (Reply.raw(200, "{not json"), Reply.raw(200, "{not json")),  # garbage body
    ],
)
def test_unusable_answers_twice_fall_back_to_rules(api, rewriter, replies):
    api.script(*replies)
    result = rewriter.rewrite("side effects of pembrolizumab in lung cancer")
    assert result.method == "rules" and len(result.ladder) >= 3
    assert "rule-based ladder used" in result.notes[-1]


def test_without_a_key_the_llm_is_never_called(api, home):
    settings = get_settings(anthropic_base_url=api.url)
    result = Rewriter(settings, llm=Claude(settings)).rewrite("side effects of pembrolizumab")
    assert result.method == "rules" and api.requests == []


@pytest.mark.parametrize(
    "expression,expected",
    [
        ("a[tiab] AND b[tiab]", "a[tiab] AND b[tiab]"),
        ("\u201clung cancer\u201d[tiab]", '"lung cancer"[tiab]'),
        ("a AND OR b", "a AND b"),
        ("(a OR b", "(a OR b)"),
        ("a OR b)", "a OR b"),
        ('"lung cancer[tiab]', "lung cancer[tiab]"),
        ("NOT", None),
        ("", None),
    ],
)
def test_repair_expression(expression, expected):
    assert repair_expression(expression) == expected
