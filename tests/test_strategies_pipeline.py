"""The answer-quality options inside the pipeline (issue 10), each folded into the stage it changes: off by
default, recorded in the trace, and each doing what it says, offline and with Claude played by the stand-in.
Runs over the shared sample (offline profile)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from llama_index.core.postprocessor import LongContextReorder

from cpqa.answer.verify import VERIFY_TOOL
from cpqa.answer.answerer import ANSWER_TOOL
from cpqa.answer.refine import DRAFT_TOOL
from cpqa.options import PipelineOptions
from cpqa.passages.context import apply
from cpqa.passages.records import source_text
from cpqa.pipeline import Pipeline
from cpqa.rewrite.rewriter import LADDER_TOOL
from cpqa.sources.store import Store
from cpqa.testing.anthropic_standin import AnthropicStandIn, Reply, default_responder

SWITCHES = {
    "adaptive_retrieval": False,
    "hyde": False,
    "multi_query": False,
    "small_to_big": "off",
    "restructure": False,
    "repack": False,
    "cot_refine": False,
}

pytestmark = pytest.mark.slow  # each question runs the whole pipeline over the sample

QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"
LADDER = {
    "normalized": QUESTION,
    "search_intent": QUESTION,
    "intent": "treatment",
    "concepts": [{"text": "tamoxifen", "role": "core"}, {"text": "breast cancer", "role": "core"}],
    "ladder": ['"tamoxifen" AND "breast cancer" AND recurrence', '"tamoxifen" AND "breast cancer"', "tamoxifen"],
}


@pytest.fixture(scope="module")
def pipeline(sample_settings) -> Pipeline:
    return Pipeline(sample_settings)


def test_strategies_are_off_by_default_and_recorded(pipeline):
    result = pipeline.ask(QUESTION)
    assert {k: result.trace.options.flat()[k] for k in SWITCHES} == SWITCHES
    assert not result.trace.context and "context" not in result.trace.stages
    assert result.trace.options == PipelineOptions()
    with pytest.raises(ValueError):
        pipeline.ask(QUESTION, small_to_big="everything")
    with pytest.raises(ValueError, match="unknown pipeline option"):
        pipeline.ask(QUESTION, small_to_bigg="section")


def test_small_to_big_gives_the_answerer_exact_source_text_around_the_passages(pipeline, sample_settings):
    result = pipeline.ask(QUESTION, small_to_big="section", repack=True)
    trace = result.trace
    assert trace.options.passages.small_to_big == "section" and trace.context
    with Store(sample_settings.store_path) as store:
        articles = store.get_many([p.pmid for p in trace.context])
    for passage in trace.context:
        text, _ = source_text(articles[passage.pmid])
        assert text[passage.start : passage.end] == passage.text
    retrieved = sum(len(p.text.split()) for p in trace.passages)
    assert trace.stages["context"].info["words"] >= retrieved
    assert set(result.answer.citations) <= {p.pmid for p in trace.context}


def test_multi_query_and_repack(pipeline):
    trace = pipeline.ask(QUESTION, multi_query=True, repack=True, top_n=3).trace
    queries = trace.stages["multi_query"].info["queries"]
    assert queries[0] == trace.search_intent and len(queries) >= 1
    assert 0 < len(trace.passages) <= 3 and all(p.score > 0 for p in trace.passages)
    assert [p.node_id for p in trace.context] == [p.node_id for p in apply([LongContextReorder()], trace.passages, "")]
    assert trace.stages["context"].info["postprocessors"] == ["LongContextReorder"]


def test_restructure_groups_the_evidence_into_topics(pipeline):
    trace = pipeline.ask(QUESTION, restructure=True).trace
    assert trace.stages["context"].info["postprocessors"] == ["RestructurePostprocessor"]
    assert trace.context and all(p.section.startswith("topic ") for p in trace.context)
    assert {p.pmid for p in trace.context} <= {p.pmid for p in trace.passages}


def test_llm_options_without_claude_fall_back_with_a_warning(pipeline):
    trace = pipeline.ask("What is a lymph node?", adaptive_retrieval=True, hyde=True, cot_refine=True).trace
    assert trace.retrieval_decision.retrieve is False  # the rules would skip ...
    assert trace.stages["adaptive_retrieval"].info["skipped"] is False
    assert "documents" in trace.stages  # ... but nothing answers without evidence offline, so it retrieved
    assert sum("needs a language model" in w for w in trace.warnings) == 3


@pytest.fixture(scope="module")
def claude(sample_settings):
    def respond(request: dict) -> Reply:
        if (request.get("tool_choice") or {}).get("name") == LADDER_TOOL.name:
            return Reply.tool(LADDER)
        return default_responder(request)

    with AnthropicStandIn(default=respond) as api:
        settings = sample_settings.model_copy(
            update={
                "anthropic_api_key": SecretStr("sk-standin-key"),
                "anthropic_base_url": api.url,
                "cpqa_llm_max_retries": 0,
            }
        )
        yield api, Pipeline(settings)


def _tools(api, since: int) -> list[str | None]:
    return [(r.get("tool_choice") or {}).get("name") for r in api.requests[since:]]


def test_adaptive_retrieval_skips_a_definitional_question_with_claude(claude):
    api, pipe = claude
    before = len(api.requests)
    result = pipe.ask("What is a lymph node?", adaptive_retrieval=True)
    assert _tools(api, before) == [LADDER_TOOL.name, "retrieval_decision", DRAFT_TOOL.name]
    assert "documents" not in result.trace.stages and result.trace.stages["adaptive_retrieval"].info["skipped"]
    answer = result.answer
    assert answer.written_by == "llm" and "no_retrieval" in answer.flags and not answer.citations
    assert answer.disclaimer


def test_hyde_and_cot_refine_with_claude(claude):
    api, pipe = claude
    before = len(api.requests)
    result = pipe.ask(QUESTION, hyde=True, cot_refine=True)
    tools = _tools(api, before)
    # None: HyDE's free-text draft; last, the verification pass over the answer's claims
    assert tools == [LADDER_TOOL.name, None, DRAFT_TOOL.name, ANSWER_TOOL.name, VERIFY_TOOL.name]
    assert "hyde" in result.trace.stages and result.trace.stages["cot_refine"].info["drafted"]
    answer_request = api.requests[before + 3]
    assert "<draft>" in str(answer_request["messages"])
    assert "cot_refine" in result.answer.flags and result.answer.written_by == "llm"
    assert set(result.answer.citations) <= {p.pmid for p in result.trace.passages}
    assert result.trace.options.rewrite.hyde and result.trace.options.answer.cot_refine
