"""The language-model interface (``LLM``; ``cpqa.models.providers.load_llm`` picks the configured one) and its Anthropic
provider, the Claude client: one place where the pipeline talks to the Anthropic Messages API. The other
provider, any OpenAI-compatible server, is ``cpqa.models.openai_compatible``.

Structured output goes through tool use with a forced ``tool_choice``, and the returned tool input is
checked against the tool's JSON schema, so callers get a dict of the declared shape or an ``LLMError``.
Retries (429, 529, 5xx, connection errors) are the SDK's own, bounded by ``cpqa_llm_max_retries``;
``ANTHROPIC_BASE_URL`` points the client at a stand-in (``cpqa.testing.anthropic_standin``).
``stream_tool`` is the same forced tool call over the SDK's streaming API, reporting one string field of the
tool input as it grows; a stream that breaks raises ``LLMStreamCut`` carrying what had arrived.
Error messages carry the status and Anthropic's error type, never the key or the prompt.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel

from cpqa.config import Settings
from cpqa.types import ComponentChoice


class LLMError(RuntimeError):
    """The language model could not give a usable answer (unconfigured, unreachable, refused or malformed)."""


class LLMUnavailable(LLMError):
    """Unconfigured, unreachable or refused, after the SDK's own retries: asking again now is futile."""


class LLMMalformed(LLMError):
    """The model answered, but not with a usable tool call or text: asking again may help."""


class LLMStreamCut(LLMMalformed):
    """A streamed reply broke off; ``partial`` is the tool input parsed from what had arrived."""

    def __init__(self, message: str, partial: dict[str, Any]):
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class ToolSpec:
    """A tool Claude is forced to call; ``input_schema`` is the JSON schema of the structured answer."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @classmethod
    def of(cls, name: str, description: str, model: type[BaseModel], optional: tuple[str, ...] = ()) -> "ToolSpec":
        """The tool whose input is ``model``'s fields (the model that also reads the reply): its JSON schema, every
        field required but those named in ``optional`` (at any depth)."""
        return cls(name=name, description=description, input_schema=tool_schema(model, optional))


def tool_schema(model: type[BaseModel], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``model``'s JSON schema as a tool's input schema: nested models inlined (no ``$ref``, which some local servers'
    grammars cannot follow), titles, defaults and the model's docstring dropped, every property required but the
    ``optional`` ones."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return clean(definitions[node["$ref"].split("/")[-1]])
        cleaned = {key: clean(value) for key, value in node.items() if key not in ("title", "default")}
        options = cleaned.get("anyOf", [])
        if options and all(set(option) == {"type"} and isinstance(option["type"], str) for option in options):
            cleaned["type"] = [option["type"] for option in cleaned.pop("anyOf")]  # "str | None": ["string", "null"]
        if cleaned.get("type") == "object" and "properties" in cleaned:
            cleaned["required"] = [name for name in cleaned["properties"] if name not in optional]
        return cleaned

    cleaned = clean(schema)
    cleaned.pop("description", None)  # the model's docstring: the tool has its own description
    return cleaned


class Usage(BaseModel):
    """Tokens and calls spent so far by one client."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


def schema_errors(instance: Any, schema: dict[str, Any], limit: int = 5) -> list[str]:
    """Where ``instance`` breaks ``schema``, described by location and rule only (never the values)."""
    from jsonschema import Draft202012Validator

    problems = []
    for error in sorted(Draft202012Validator(schema).iter_errors(instance), key=lambda e: list(e.path)):
        where = "/" + "/".join(str(p) for p in error.path)
        if error.validator == "required":
            missing = [
                k for k in error.validator_value if not (isinstance(error.instance, dict) and k in error.instance)
            ]
            problems.append(f"{where}: missing {', '.join(missing)}")
        else:
            problems.append(f"{where}: violates {error.validator}={error.validator_value!r}")
        if len(problems) >= limit:
            break
    return problems


class LLM:
    """What the rewriter, the answerer, verification and the evaluation ask of a language model: a forced tool
    call whose input is checked against the tool's schema (``call_tool``, and streamed: ``stream_tool``), and free
    text (``complete``). Thread-safe, with usage accounting; failures are ``LLMUnavailable`` / ``LLMMalformed``."""

    provider = ""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.model = settings.cpqa_llm_model
        self._usage = Usage()
        self._lock = threading.Lock()
        self._client = None

    @property
    def available(self) -> bool:
        return self.settings.has_llm

    @property
    def label(self) -> str:
        """How notices and the models table name this model."""
        return f"{self.model} ({self.provider})"

    @property
    def unconfigured(self) -> str:
        """Why ``available`` is False, for the models table."""
        return "no OpenAI-compatible server (set CPQA_LLM_BASE_URL)"

    def choice(self, component: str) -> ComponentChoice:
        """This model serving ``component``, for the models table and the trace."""
        return ComponentChoice(
            component=component,
            model=self.model,
            provider=self.provider,
            profile="paper",
            reason=f"CPQA_LLM_PROVIDER={self.provider} configured",
        )

    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._usage.model_copy()

    def _failure(
        self,
        who: str,
        *,
        status: int | None = None,
        kind: str = "",
        timed_out: bool = False,
        unreachable: bool = False,
        error: str = "",
    ) -> LLMUnavailable:
        """The typed, redacted error for a call the SDK gave up on, worded the same for every provider."""
        retries = self.settings.cpqa_llm_max_retries
        if timed_out:
            text = f"{who} timed out after {self.settings.cpqa_llm_timeout:g}s and {retries} retries"
        elif unreachable:
            text = f"{who} unreachable (connection failed after {retries} retries)"
        elif status is not None:
            retried = status in (408, 409, 429) or status >= 500
            detail = f" ({kind})" if kind else ""
            after = f" after {retries} retries" if retried else ""
            text = f"{who} error: HTTP {status}{detail}{after}"
        else:
            text = f"{who} error: {error}"
        return LLMUnavailable(self.settings.redact(text))

    def _output_limit(self, requested: int) -> int:
        """``requested``, capped by CPQA_LLM_MAX_OUTPUT_TOKENS (a local model's context window is small)."""
        cap = self.settings.cpqa_llm_max_output_tokens
        return min(requested, cap) if cap else requested

    def _count(self, input_tokens: int | None, output_tokens: int | None) -> None:
        with self._lock:
            self._usage.calls += 1
            self._usage.input_tokens += int(input_tokens or 0)
            self._usage.output_tokens += int(output_tokens or 0)

    def call_tool(self, system: str, messages: list[dict], tool: ToolSpec, max_tokens: int = 1024) -> dict:
        raise NotImplementedError

    def stream_tool(
        self,
        system: str,
        messages: list[dict],
        tool: ToolSpec,
        field: str,
        on_text: Callable[[str], None],
        max_tokens: int = 1024,
    ) -> dict:
        raise NotImplementedError

    def complete(self, system: str, messages: list[dict], max_tokens: int = 1024) -> str:
        raise NotImplementedError


class Claude(LLM):
    """Thread-safe wrapper over ``anthropic.Anthropic``."""

    provider = "anthropic"

    @property
    def available(self) -> bool:
        return self.settings.has_anthropic

    @property
    def label(self) -> str:
        return "Claude"

    @property
    def unconfigured(self) -> str:
        return "no Anthropic API key (set ANTHROPIC_API_KEY)"

    def _sdk(self):
        if not self.available:
            raise LLMUnavailable("Claude is not configured: set ANTHROPIC_API_KEY")
        with self._lock:
            if self._client is None:
                import anthropic

                self._client = anthropic.Anthropic(
                    api_key=self.settings.anthropic_api_key.get_secret_value(),
                    base_url=self.settings.anthropic_base_url or None,
                    max_retries=self.settings.cpqa_llm_max_retries,
                    timeout=self.settings.cpqa_llm_timeout,
                )
            return self._client

    def _create(self, **kwargs: Any):
        kwargs["max_tokens"] = self._output_limit(kwargs["max_tokens"])
        return self._request(lambda client: client.messages.create(model=self.model, **kwargs))

    def _request(self, send: Callable[[Any], Any]):
        """``send(sdk_client)`` -> message, with the SDK's failures turned into typed, redacted errors."""
        import anthropic

        client = self._sdk()
        try:
            message = send(client)
        except anthropic.APIStatusError as exc:
            kind = _error_type(exc.body)
            if exc.status_code == 200:  # an error event inside a stream that had started
                raise LLMUnavailable(f"Claude API error event{f' ({kind})' if kind else ''}") from None
            raise self._failure("Claude API", status=exc.status_code, kind=kind or "") from None
        except anthropic.APITimeoutError:
            raise self._failure("Claude API", timed_out=True) from None
        except anthropic.APIConnectionError:
            raise self._failure("Claude API", unreachable=True) from None
        except anthropic.AnthropicError as exc:
            raise self._failure("Claude API", error=type(exc).__name__) from None
        except ValueError:  # a 200 whose body is not a message (JSON or schema); pydantic errors are ValueErrors
            raise LLMUnavailable("Claude API answered with a malformed response") from None
        usage = getattr(message, "usage", None)
        self._count(getattr(usage, "input_tokens", 0), getattr(usage, "output_tokens", 0))
        return message

    def call_tool(self, system: str, messages: list[dict], tool: ToolSpec, max_tokens: int = 1024) -> dict:
        """Force Claude to call ``tool`` and return its input, checked against the tool's schema."""
        message = self._create(
            system=system,
            messages=messages,
            max_tokens=max_tokens,
            tools=[tool.to_api()],
            tool_choice={"type": "tool", "name": tool.name},
        )
        return _tool_input(message, tool, max_tokens)

    def stream_tool(
        self,
        system: str,
        messages: list[dict],
        tool: ToolSpec,
        field: str,
        on_text: Callable[[str], None],
        max_tokens: int = 1024,
    ) -> dict:
        """``call_tool`` over the streaming API: ``on_text`` receives the string ``field`` of the tool input each
        time it grows (unchecked draft text). Raises ``LLMStreamCut`` with the partial input if the stream breaks."""
        import anthropic
        from jiter import from_json

        received = bytearray()
        shown, started = "", False

        def consume(client):
            nonlocal shown, started
            with client.messages.stream(
                model=self.model,
                system=system,
                messages=messages,
                max_tokens=self._output_limit(max_tokens),
                tools=[tool.to_api()],
                tool_choice={"type": "tool", "name": tool.name},
            ) as stream:
                for event in stream:
                    started = True
                    if event.type != "input_json":
                        continue
                    received.extend(event.partial_json.encode())
                    text = partial_json(received, from_json).get(field)
                    if isinstance(text, str) and text != shown:
                        shown = text
                        on_text(text)
                return stream.get_final_message()

        try:
            message = self._request(consume)
        except LLMUnavailable as exc:
            if not started:
                raise
            raise LLMStreamCut(
                f"Claude's reply broke off mid-stream ({exc})", partial_json(received, from_json)
            ) from None
        except transport_errors() + (anthropic.AnthropicError,) as exc:  # raised while reading the stream
            raise LLMStreamCut(
                f"Claude's reply broke off mid-stream ({type(exc).__name__})", partial_json(received, from_json)
            ) from None
        return _tool_input(message, tool, max_tokens)

    def complete(self, system: str, messages: list[dict], max_tokens: int = 1024) -> str:
        """Free text: the concatenated text blocks of Claude's reply."""
        message = self._create(system=system, messages=messages, max_tokens=max_tokens)
        text = "".join(b.text for b in message.content if b.type == "text").strip()
        if not text:
            raise LLMMalformed(f"Claude returned no text (stop_reason={message.stop_reason})")
        return text


def transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP library's base error, whichever the SDK uses (``httpx``, or ``httpx2`` in newer releases)."""
    import importlib.util

    return tuple(
        importlib.import_module(name).HTTPError
        for name in ("httpx", "httpx2")
        if importlib.util.find_spec(name) is not None
    )


def partial_json(received: bytes | bytearray, from_json) -> dict[str, Any]:
    """The tool input parsed from a JSON prefix (an unfinished string kept as far as it goes)."""
    try:
        value = from_json(bytes(received), partial_mode="trailing-strings") if received else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool_input(message: Any, tool: ToolSpec, max_tokens: int) -> dict:
    """The forced tool call's input from a finished message, checked against the tool's schema."""
    if message.stop_reason == "max_tokens":
        raise LLMMalformed(f"Claude ran out of tokens ({max_tokens}) before finishing the {tool.name} call")
    blocks = [b for b in message.content if b.type == "tool_use" and b.name == tool.name]
    if not blocks:
        raise LLMMalformed(f"Claude did not call the {tool.name} tool (stop_reason={message.stop_reason})")
    return checked_input(blocks[0].input, tool, "Claude")


def checked_input(data: Any, tool: ToolSpec, who: str) -> dict:
    """``data`` if it is an object that ``tool``'s schema accepts, else ``LLMMalformed``."""
    if not isinstance(data, dict):
        raise LLMMalformed(f"{who}'s {tool.name} input is not an object")
    problems = schema_errors(data, tool.input_schema)
    if problems:
        raise LLMMalformed(f"{who}'s {tool.name} input does not match its schema: {'; '.join(problems)}")
    return data


def _error_type(body: Any) -> str | None:
    """Anthropic's error type ("rate_limit_error", "overloaded_error", ...) from an error body."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return inner["type"]
    return None
