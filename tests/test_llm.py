"""The Claude client against the Messages API stand-in, over real HTTP with the real anthropic SDK."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from cpqa.config import get_settings
from cpqa.models.llm import Claude, LLMError, ToolSpec
from cpqa.testing.anthropic_standin import STANDIN_LABEL, Reply

KEY = "sk-ant-test-SECRET-123456"
CHOICE = ToolSpec(
    name="choose",
    description="Pick an option and cite evidence.",
    input_schema={
        "type": "object",
        "properties": {
            "letter": {"type": "string", "enum": ["A", "B", "C", "D"]},
            "reasoning": {"type": "string"},
            "citations": {"type": "array", "items": {"type": "string"}},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["letter", "reasoning", "citations"],
    },
)
MESSAGES = [{"role": "user", "content": "Evidence: [12345678] Tamoxifen ... PMID: 23456789\nWhich option?"}]


@pytest.fixture
def claude(api, home):
    return Claude(
        get_settings(anthropic_api_key=KEY, anthropic_base_url=api.url, cpqa_llm_max_retries=2, cpqa_llm_timeout=2.0)
    )


def test_unconfigured_client_is_unavailable_and_says_so(home):
    claude = Claude(get_settings())
    assert not claude.available
    with pytest.raises(LLMError, match="ANTHROPIC_API_KEY"):
        claude.complete("s", MESSAGES)


def test_call_tool_forces_the_tool_and_sends_its_schema(api, claude):
    api.script(Reply.tool({"letter": "B", "reasoning": "because [12345678]", "citations": ["12345678"]}))
    result = claude.call_tool("You are careful.", MESSAGES, CHOICE, max_tokens=300)
    assert result == {"letter": "B", "reasoning": "because [12345678]", "citations": ["12345678"]}
    body = api.requests[-1]
    assert body["tool_choice"] == {"type": "tool", "name": "choose"}
    assert body["tools"] == [CHOICE.to_api()]
    assert body["system"] == "You are careful." and body["max_tokens"] == 300
    assert body["messages"] == MESSAGES
    sent = api.headers[-1]
    assert "[set]" in (sent.get("x-api-key"), sent.get("authorization")) and KEY not in str(sent)
    usage = claude.usage
    assert usage.calls == 1 and usage.input_tokens > 0 and usage.output_tokens > 0


@pytest.mark.parametrize("status", [429, 529, 500])
def test_retries_then_succeeds(api, claude, status):
    api.script(Reply.error(status, retry_after=0.01), Reply.error(status, retry_after=0.01), Reply.text("fine"))
    assert claude.complete("s", MESSAGES) == "fine"
    assert len(api.requests) == 3


@pytest.mark.parametrize("status,kind", [(429, "rate_limit_error"), (529, "overloaded_error"), (500, "api_error")])
def test_retries_are_bounded_then_llm_error_without_the_key(api, claude, status, kind):
    api.script(*[Reply.error(status, retry_after=0.01) for _ in range(5)])
    with pytest.raises(LLMError) as err:
        claude.call_tool("s", MESSAGES, CHOICE)
    assert len(api.requests) == 3  # first try + max_retries=2
    assert str(status) in str(err.value) and kind in str(err.value)
    assert KEY not in str(err.value) and KEY not in repr(err.value)
    assert err.value.__cause__ is None


def test_bad_request_is_not_retried(api, claude):
    api.script(Reply.error(400, message="bad"))
    with pytest.raises(LLMError, match="400") as err:
        claude.complete("s", MESSAGES)
    assert len(api.requests) == 1 and "retries" not in str(err.value)


def test_retry_after_header_is_honoured(api, claude):
    api.script(Reply.error(429, retry_after=0.6), Reply.text("ok"))
    start = time.perf_counter()
    assert claude.complete("s", MESSAGES) == "ok"
    assert time.perf_counter() - start >= 0.55


@pytest.mark.parametrize(
    "bad_input,fragment",
    [
        ({"letter": "B", "reasoning": "x"}, "missing citations"),
        ({"letter": "E", "reasoning": "x", "citations": []}, "/letter: violates enum"),
        ({"letter": "A", "reasoning": 7, "citations": []}, "/reasoning: violates type"),
        ({"letter": "A", "reasoning": "x", "citations": "12345678"}, "/citations: violates type"),
        ("not an object", "not an object"),
    ],
)
def test_malformed_tool_input_is_an_llm_error(api, claude, bad_input, fragment):
    api.script(Reply.tool(bad_input))
    with pytest.raises(LLMError, match="choose") as err:
        claude.call_tool("s", MESSAGES, CHOICE)
    assert fragment in str(err.value)


def test_reply_without_the_tool_or_cut_short_is_an_error(api, claude):
    api.script(Reply.text("I refuse"), Reply.tool({"letter": "A"}, stop_reason="max_tokens"))
    with pytest.raises(LLMError, match="did not call the choose tool"):
        claude.call_tool("s", MESSAGES, CHOICE)
    with pytest.raises(LLMError, match="ran out of tokens"):
        claude.call_tool("s", MESSAGES, CHOICE)


def test_timeout_and_unreachable_are_llm_errors(api, home):
    slow = Claude(
        get_settings(anthropic_api_key=KEY, anthropic_base_url=api.url, cpqa_llm_max_retries=0, cpqa_llm_timeout=0.3)
    )
    api.script(Reply.text("late").after(1.0))
    with pytest.raises(LLMError, match="timed out"):
        slow.complete("s", MESSAGES)
    closed = Claude(
        get_settings(
            anthropic_api_key=KEY, anthropic_base_url="http://127.0.0.1:9", cpqa_llm_max_retries=0, cpqa_llm_timeout=0.5
        )
    )
    with pytest.raises(LLMError, match="unreachable") as err:
        closed.complete("s", MESSAGES)
    assert KEY not in str(err.value)


def test_default_responder_fills_the_schema_and_is_labelled(api, claude):
    result = claude.call_tool("s", MESSAGES, CHOICE)
    assert result["letter"] == "A" and result["citations"] == ["12345678"]
    assert STANDIN_LABEL in result["reasoning"] and "[12345678]" in result["reasoning"]
    text = claude.complete("s", MESSAGES)
    assert text.startswith(STANDIN_LABEL) and "[12345678]" in text


def test_raw_replies_are_passed_through(api, claude):
    api.script(Reply.raw(200, b"{not json"))
    with pytest.raises(LLMError):
        claude.complete("s", MESSAGES)


def text_responder(request: dict) -> Reply:
    """A custom responder for the command-line test (``--responder tests.test_llm:text_responder``)."""
    return Reply.text(f"custom reply to {len(request['messages'])} message(s)")


@pytest.mark.parametrize("responder", [None, "test_llm:text_responder"])
def test_command_line_serves_a_responder(responder):
    import os
    import socket
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    extra = ["--responder", responder] if responder else []
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cpqa.testing.anthropic_standin", "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert "Anthropic stand-in on" in proc.stdout.readline()
        reply = httpx.post(
            f"http://127.0.0.1:{port}/v1/messages",
            timeout=5,
            json={
                "model": "m",
                "max_tokens": 10,
                "messages": MESSAGES,
                "tools": [CHOICE.to_api()],
                "tool_choice": {"type": "tool", "name": "choose"},
            },
        ).json()
        assert reply["type"] == "message" and reply["id"].startswith("msg_") and reply["usage"]["input_tokens"] > 0
        block = reply["content"][0]
        if responder:
            assert block == {"type": "text", "text": "custom reply to 1 message(s)"}
        else:
            assert reply["stop_reason"] == "tool_use"
            assert block["type"] == "tool_use" and block["name"] == "choose" and block["id"].startswith("toolu_")
            assert block["input"]["letter"] == "A"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_stand_in_refuses_what_the_real_api_refuses(api):
    base = {"model": "m", "max_tokens": 10, "messages": MESSAGES}
    for body, fragment in (
        ({"model": "m", "messages": MESSAGES}, "max_tokens"),
        ({**base, "stream": "yes"}, "valid boolean"),
        ({**base, "tools": [CHOICE.to_api()], "tool_choice": {"type": "tool", "name": "other"}}, "not in tools"),
    ):
        reply = httpx.post(f"{api.url}/v1/messages", json=body, timeout=5)
        assert reply.status_code == 400
        error = reply.json()
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert fragment in error["error"]["message"]
    assert httpx.post(f"{api.url}/v1/other", json=base, timeout=5).status_code == 404


def test_a_tool_schema_comes_from_its_pydantic_model_inlined_and_required():
    from typing import Literal

    from pydantic import BaseModel, Field

    from cpqa.models.llm import ToolSpec

    class Part(BaseModel):
        name: str
        note: str | None = Field(None, description="a note")

    class Reply(BaseModel):
        """Not sent: the tool has its own description."""

        kind: Literal["a", "b"]
        parts: list[Part] = Field(min_length=1)

    schema = ToolSpec.of("reply", "Reply.", Reply, optional=("note",)).input_schema
    assert schema["required"] == ["kind", "parts"] and "description" not in schema and "$defs" not in schema
    assert schema["properties"]["kind"] == {"enum": ["a", "b"], "type": "string"}
    part = schema["properties"]["parts"]["items"]
    assert part["required"] == ["name"] and part["properties"]["note"] == {
        "type": ["string", "null"],
        "description": "a note",
    }
    assert "title" not in part and schema["properties"]["parts"]["minItems"] == 1
