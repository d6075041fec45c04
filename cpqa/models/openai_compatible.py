"""The OpenAI-compatible provider (``CPQA_LLM_PROVIDER=openai-compatible``): vLLM, Ollama, llama.cpp's server, TGI
or a hospital gateway, at ``CPQA_LLM_BASE_URL`` serving ``CPQA_LLM_MODEL``, through the official ``openai`` SDK.

Structured output asks first for a forced function call (``tools`` with a named ``tool_choice``). Servers differ
in what they honour, so each call steps down until one way works: a server that refuses tools or answers without
calling the function is asked for ``response_format`` JSON-schema output, then for a JSON object with the schema
beside it (llama-cpp-python's and others' form), then for a JSON object described in the prompt. A refusal is an
HTTP 400 / 404 / 405 / 422 / 501, or an error that names the refused parameter (llama-cpp-python answers an
unknown ``response_format`` type with a 500); it is remembered for the client's lifetime; a reply that merely breaks
the schema is ``LLMMalformed`` (the callers retry once, then fall back), as with Claude. Retries, timeouts and the
typed, redacted errors are the same as ``Claude``'s.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from cpqa.models.llm import (
    LLM,
    LLMMalformed,
    LLMStreamCut,
    LLMUnavailable,
    ToolSpec,
    checked_input,
    partial_json,
    transport_errors,
)

MODES = ("tools", "json_schema", "json_object", "prompt")  # ways to get structured output, best first
_PARAMETER = {"tools": "tool", "json_schema": "response_format", "json_object": "response_format", "prompt": ""}
_REFUSED = (400, 404, 405, 422, 501)  # statuses with which a server says it does not take a request's shape
_PROMPT_SCHEMA = (
    "\n\nReply with one JSON object and nothing else: the input of the function `{name}` ({description}), "
    "matching this JSON schema:\n{schema}"
)


class _Refused(Exception):
    """The server refused the request's shape (not its content): try the next mode."""


class OpenAICompatible(LLM):
    """Thread-safe client of one OpenAI-compatible chat-completions server."""

    provider = "openai-compatible"

    def __init__(self, settings):
        super().__init__(settings)
        self._first_mode = 0  # index into MODES of the best mode this server has not refused

    @property
    def label(self) -> str:
        return f"{self.model} (OpenAI-compatible server)"

    def _sdk(self):
        if not self.available:
            raise LLMUnavailable("no OpenAI-compatible server is configured: set CPQA_LLM_BASE_URL")
        with self._lock:
            if self._client is None:
                import openai

                key = self.settings.cpqa_llm_api_key
                self._client = openai.OpenAI(
                    base_url=self.settings.cpqa_llm_base_url,
                    api_key=key.get_secret_value() if key else "unused",
                    max_retries=self.settings.cpqa_llm_max_retries,
                    timeout=self.settings.cpqa_llm_timeout,
                )
            return self._client

    def _request(self, send: Callable[[Any], Any], mode: str = ""):
        """``send(sdk_client)`` -> response, with the SDK's failures turned into typed, redacted errors; ``_Refused``
        when the server refuses the shape of a request in structured-output ``mode``."""
        import openai

        try:
            return send(self._sdk())
        except openai.APIStatusError as exc:
            parameter = _PARAMETER.get(mode)
            if parameter and (exc.status_code in _REFUSED or parameter in str(exc.message).lower()):
                raise _Refused(exc.status_code) from None
            raise self._failure(self.label, status=exc.status_code) from None
        except openai.APITimeoutError:
            raise self._failure(self.label, timed_out=True) from None
        except openai.APIConnectionError:
            raise self._failure(self.label, unreachable=True) from None
        except openai.OpenAIError as exc:
            raise self._failure(self.label, error=type(exc).__name__) from None
        except ValueError:  # a 200 whose body is not a completion
            raise LLMUnavailable(f"{self.label} answered with a malformed response") from None

    def _structured(
        self,
        system: str,
        messages: list[dict],
        tool: ToolSpec,
        max_tokens: int,
        run: Callable[[str, dict], dict | None],
    ) -> dict:
        """Try each mode from the best one this server takes; ``run(mode, request)`` gives the input or None."""
        for index in range(self._first_mode, len(MODES)):
            mode = MODES[index]
            try:
                data = run(mode, self._shape(mode, system, messages, tool, max_tokens))
            except _Refused:
                self._first_mode = max(self._first_mode, index + 1)
                continue
            if data is not None:
                return checked_input(data, tool, self.label)
        raise LLMMalformed(f"{self.label} gave no {tool.name} input in any structured-output mode")

    def _shape(self, mode: str, system: str, messages: list[dict], tool: ToolSpec, max_tokens: int) -> dict:
        request: dict[str, Any] = {"model": self.model, "max_tokens": self._output_limit(max_tokens), "temperature": 0}
        if mode == "tools":
            request["tools"] = [
                {
                    "type": "function",
                    "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
                }
            ]
            request["tool_choice"] = {"type": "function", "function": {"name": tool.name}}
        elif mode == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": tool.name, "description": tool.description, "schema": tool.input_schema},
            }
        elif mode == "json_object":
            request["response_format"] = {"type": "json_object", "schema": tool.input_schema}
        if mode != "tools":
            system += _PROMPT_SCHEMA.format(
                name=tool.name, description=tool.description, schema=json.dumps(tool.input_schema)
            )
        request["messages"] = [{"role": "system", "content": system}, *messages]
        return request

    def call_tool(self, system: str, messages: list[dict], tool: ToolSpec, max_tokens: int = 1024) -> dict:
        def run(mode: str, request: dict) -> dict | None:
            response = self._request(lambda client: client.chat.completions.create(**request), mode)
            usage = getattr(response, "usage", None)
            self._count(getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0))
            if not response.choices:
                raise LLMMalformed(f"{self.label} returned no choices")
            choice = response.choices[0]
            calls = [
                c
                for c in (choice.message.tool_calls or [])
                if getattr(c, "function", None) is not None and c.function.name == tool.name
            ]
            text = calls[0].function.arguments if calls else choice.message.content
            if choice.finish_reason == "length":
                raise LLMMalformed(
                    f"{self.label} ran out of tokens ({max_tokens}) before finishing the {tool.name} input"
                )
            return json_object(text) if text else None

        return self._structured(system, messages, tool, max_tokens, run)

    def stream_tool(
        self,
        system: str,
        messages: list[dict],
        tool: ToolSpec,
        field: str,
        on_text: Callable[[str], None],
        max_tokens: int = 1024,
    ) -> dict:
        """``call_tool`` streamed: ``on_text`` receives the string ``field`` each time it grows. Raises
        ``LLMStreamCut`` with the partial input if the stream breaks."""
        from jiter import from_json

        def run(mode: str, request: dict) -> dict | None:
            received, shown, started, finish = bytearray(), "", False, None

            def consume(client):
                nonlocal shown, started, finish
                for chunk in client.chat.completions.create(**request, stream=True):
                    started = True
                    if not chunk.choices:
                        continue
                    delta, finish = chunk.choices[0].delta, chunk.choices[0].finish_reason or finish
                    piece = "".join(
                        c.function.arguments or ""
                        for c in (delta.tool_calls or [])
                        if getattr(c, "function", None) is not None
                    ) or (delta.content or "")
                    received.extend(piece.encode())
                    text = partial_json(received, from_json).get(field)
                    if isinstance(text, str) and text != shown:
                        shown = text
                        on_text(text)

            try:
                self._request(consume, mode)
            except LLMUnavailable as exc:
                if not started:
                    raise
                raise LLMStreamCut(
                    f"{self.label}'s reply broke off mid-stream ({exc})", partial_json(received, from_json)
                ) from None
            except transport_errors() as exc:  # raised while reading the stream
                if not started:
                    raise LLMUnavailable(f"{self.label} unreachable ({type(exc).__name__})") from None
                raise LLMStreamCut(
                    f"{self.label}'s reply broke off mid-stream ({type(exc).__name__})",
                    partial_json(received, from_json),
                ) from None
            self._count(0, 0)
            if finish == "length":
                raise LLMMalformed(
                    f"{self.label} ran out of tokens ({max_tokens}) before finishing the {tool.name} input"
                )
            return json_object(received.decode("utf-8", "replace")) if received else None

        return self._structured(system, messages, tool, max_tokens, run)

    def complete(self, system: str, messages: list[dict], max_tokens: int = 1024) -> str:
        request = {
            "model": self.model,
            "max_tokens": self._output_limit(max_tokens),
            "messages": [{"role": "system", "content": system}, *messages],
        }
        response = self._request(lambda client: client.chat.completions.create(**request))
        usage = getattr(response, "usage", None)
        self._count(getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0))
        text = (response.choices[0].message.content or "").strip() if response.choices else ""
        if not text:
            raise LLMMalformed(f"{self.label} returned no text")
        return text


def json_object(text: str) -> dict:
    """The first JSON object in ``text`` (small models wrap it in prose or code fences), else ``LLMMalformed``."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise LLMMalformed("the model's reply holds no JSON object")
