"""The OpenAI-compatible provider against a real local model server: llama-cpp-python's server running
SmolLM2-135M-Instruct (``cpqa.testing.llama_server``). Faults and servers that refuse tools are played by the
fault-injecting proxy in front of it (``FaultyServer``), which passes every other request to the real server.
The weak model's answers are not judged; its protocol and its malformed output are real."""

from __future__ import annotations

import json

import pytest

from cpqa.config import get_settings
from cpqa.models.llm import LLMMalformed, LLMUnavailable, ToolSpec
from cpqa.models.providers import load_llm
from cpqa.models.openai_compatible import OpenAICompatible
from cpqa.options import PipelineOptions
from cpqa.testing import llama_server
from cpqa.testing.faulty_server import Fault, FaultyServer, closed_port_url

KEY = "sk-local-gateway-secret-0123456789"
TOOL = ToolSpec(
    "give_answer",
    "The answer to the question, with the PMIDs it rests on.",
    {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "pmids": {"type": "array", "items": {"type": "string"}}},
        "required": ["answer", "pmids"],
    },
)
SYSTEM = "Answer the question from the evidence in one short sentence."
QUESTION = "What are the side effects of tamoxifen in breast cancer?"
MESSAGES = [
    {
        "role": "user",
        "content": "Evidence [PMID 123]: tamoxifen reduced breast cancer recurrence by 39%.\n"
        "Question: what did tamoxifen do?",
    }
]


def provider_settings(base_url: str, **overrides):
    values = dict(
        cpqa_llm_provider="openai-compatible",
        cpqa_llm_base_url=base_url,
        cpqa_llm_model=llama_server.MODEL_ALIAS,
        cpqa_llm_api_key=KEY,
        cpqa_llm_max_retries=0,
        cpqa_llm_timeout=120,
    )
    values.update(overrides)
    return get_settings(**values)


@pytest.fixture(scope="module")
def llama():
    reason = llama_server.missing()
    if reason:
        pytest.skip(reason)
    with llama_server.LlamaServer() as server:
        yield server


@pytest.fixture
def proxy(llama):
    with FaultyServer(upstream=llama.url.removesuffix("v1")) as server:
        yield server


def sent(proxy: FaultyServer, index: int = -1) -> dict:
    return json.loads(proxy.requests[index].body)


def completion(content: str | None = None, arguments: str | None = None, finish: str = "stop") -> Fault:
    """A chat completion as a server would send it (for the shapes the real server cannot be made to produce)."""
    message: dict = {"role": "assistant", "content": content}
    if arguments is not None:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": TOOL.name, "arguments": arguments}}
        ]
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": llama_server.MODEL_ALIAS,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return Fault("reply", body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def test_load_llm_picks_the_provider_from_the_settings():
    assert isinstance(load_llm(provider_settings("http://127.0.0.1:1/v1")), OpenAICompatible)
    unset = load_llm(get_settings(cpqa_llm_provider="openai-compatible"))
    assert not unset.available and "CPQA_LLM_BASE_URL" in unset.unconfigured
    assert load_llm(get_settings()).provider == "anthropic"


def test_a_forced_function_call_on_the_real_server(proxy):
    llm = load_llm(provider_settings(proxy.url + "v1"))
    data = llm.call_tool(SYSTEM, MESSAGES, TOOL, max_tokens=200)
    assert isinstance(data["answer"], str) and data["answer"] and isinstance(data["pmids"], list)
    request = sent(proxy)
    assert request["tool_choice"] == {"type": "function", "function": {"name": TOOL.name}}
    assert request["tools"][0]["function"]["parameters"] == TOOL.input_schema and request["temperature"] == 0
    assert request["messages"][0] == {"role": "system", "content": SYSTEM}
    usage = llm.usage
    assert usage.calls == 1 and usage.input_tokens > 0 and usage.output_tokens > 0


def test_the_answer_field_streams_as_it_is_written(llama):
    llm = load_llm(provider_settings(llama.url))
    seen: list[str] = []
    data = llm.stream_tool(SYSTEM, MESSAGES, TOOL, "answer", seen.append, max_tokens=200)
    assert len(seen) > 3 and all(b.startswith(a) for a, b in zip(seen, seen[1:]))
    assert seen[-1] == data["answer"]
    assert llm.complete(SYSTEM, MESSAGES, max_tokens=40)  # free text too


def test_a_server_that_refuses_tools_steps_down_to_the_form_it_takes(proxy):
    llm = load_llm(provider_settings(proxy.url + "v1"))
    proxy.script(Fault.status_code(400, body=b'{"error": {"message": "tools are not supported"}}'))
    # The real server then refuses OpenAI's json_schema response format itself (a 500 naming response_format)
    # and takes its own form, a JSON object with the schema beside it, which it enforces by grammar.
    data = llm.call_tool(SYSTEM, MESSAGES, TOOL, max_tokens=200)
    assert set(data) >= {"answer", "pmids"}
    shapes = [sent(proxy, i).get("response_format", {}).get("type", "tools") for i in range(len(proxy.requests))]
    assert shapes == ["tools", "json_schema", "json_object"]
    assert sent(proxy)["response_format"]["schema"] == TOOL.input_schema
    llm.call_tool(SYSTEM, MESSAGES, TOOL, max_tokens=200)
    assert sent(proxy)["response_format"]["type"] == "json_object"  # the refusals are remembered
    proxy.script(
        Fault.status_code(422),
        completion('Sure! Here it is:\n```json\n{"answer": "It cut recurrence.", "pmids": ["123"]}\n```'),
    )
    assert llm.call_tool(SYSTEM, MESSAGES, TOOL) == {"answer": "It cut recurrence.", "pmids": ["123"]}
    prompt_request = sent(proxy)
    assert "response_format" not in prompt_request and "JSON schema" in prompt_request["messages"][0]["content"]


def test_malformed_and_cut_output_is_llm_malformed(proxy):
    llm = load_llm(provider_settings(proxy.url + "v1"))
    proxy.script(completion(arguments='{"answer": "never closed'))
    with pytest.raises(LLMMalformed, match="no JSON object"):
        llm.call_tool(SYSTEM, MESSAGES, TOOL)
    proxy.script(completion(arguments='{"answer": 7, "pmids": "123"}'))
    with pytest.raises(LLMMalformed, match="does not match its schema"):
        llm.call_tool(SYSTEM, MESSAGES, TOOL)
    # The real server, cut at 8 tokens: it reports the function call as finished, its arguments broken off.
    with pytest.raises(LLMMalformed, match="ran out of tokens|holds no JSON object"):
        llm.call_tool(SYSTEM, MESSAGES, TOOL, max_tokens=8)
    assert len(sent(proxy)["messages"]) == 2 and sent(proxy)["max_tokens"] == 8


def test_failures_are_typed_and_never_show_the_key(proxy):
    llm = load_llm(provider_settings(proxy.url + "v1", cpqa_llm_max_retries=1))
    proxy.script(Fault.status_code(503), Fault.status_code(503))
    with pytest.raises(LLMUnavailable, match="HTTP 503 after 1 retries") as failed:
        llm.call_tool(SYSTEM, MESSAGES, TOOL)
    assert KEY not in str(failed.value) and llama_server.MODEL_ALIAS in str(failed.value)
    down = load_llm(provider_settings(closed_port_url() + "v1"))
    with pytest.raises(LLMUnavailable, match="unreachable") as unreachable:
        down.call_tool(SYSTEM, MESSAGES, TOOL)
    assert KEY not in str(unreachable.value)
    assert get_settings(cpqa_llm_api_key=KEY).redact(f"key {KEY}") == "key [REDACTED]"


def test_the_pipeline_names_its_fallbacks_when_the_server_is_down(sample_settings):
    from cpqa.pipeline import Pipeline

    settings = provider_settings(closed_port_url() + "v1", cpqa_home=sample_settings.cpqa_home, cpqa_profile="offline")
    with Pipeline(settings, PipelineOptions.of(max_documents=8)) as pipeline:
        assert pipeline.models["answerer"].provider == "openai-compatible"
        result = pipeline.ask(QUESTION)
    models = result.trace.models
    assert result.answer.written_by == "extractive" and result.trace.rewrite.method == "rules"
    label = f"{llama_server.MODEL_ALIAS} (OpenAI-compatible server) could not be used"
    assert models["answerer"].model.startswith("extractive") and label in models["answerer"].reason
    assert models["rewriter"].model == "rule-based Boolean ladder" and label in models["rewriter"].reason
    assert any(n.startswith(label) for n in result.answer.notices)
    assert KEY not in result.model_dump_json()


@pytest.mark.slow
def test_the_pipeline_answers_through_the_local_model(llama, sample_settings):
    """The whole pipeline on the real server. SmolLM2 writes claims from memory and mangles PMIDs: the checks must
    leave the reader only cited, supported sentences (or the standard abstention)."""
    from cpqa.answer.messages import UNSUPPORTED
    from cpqa.answer.citations import MARKER, marker_pmids, sentences_of
    from cpqa.pipeline import Pipeline

    settings = provider_settings(
        llama.url, cpqa_home=sample_settings.cpqa_home, cpqa_profile="offline", cpqa_llm_max_output_tokens=384
    )
    with Pipeline(settings, PipelineOptions.of(max_documents=8, top_n=2)) as pipeline:
        result = pipeline.ask(QUESTION)
    answer, trace = result.answer, result.trace
    assert answer.written_by == "llm", f"fell back: {trace.models['answerer'].reason}; {answer.notices}"
    assert (trace.models["answerer"].provider, trace.models["answerer"].model) == (
        "openai-compatible",
        llama_server.MODEL_ALIAS,
    )
    assert (trace.models["rewriter"].provider == "openai-compatible") == (trace.rewrite.method == "llm")
    shown = {p.pmid for p in trace.passages}
    assert set(answer.citations) <= shown
    if answer.text != UNSUPPORTED:
        for sentence in (s for line in answer.text.splitlines() for s in sentences_of(line)):
            cited = [p for m in MARKER.finditer(sentence) for p in marker_pmids(m.group(0))]
            assert set(cited) <= shown
    assert answer.removed_sentences or answer.text != UNSUPPORTED  # an abstention here comes from removals
