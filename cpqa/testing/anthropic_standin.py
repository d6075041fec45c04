"""A stand-in for the Anthropic Messages API: a real HTTP server on 127.0.0.1 that answers
``POST /v1/messages`` with responses of the recorded shape (message objects with ``text`` and
``tool_use`` content blocks, ``stop_reason``, ``usage``; errors as ``{"type": "error", "error": {...}}``).
With ``"stream": true`` the same message goes out as the API's server-sent events (``message_start``,
``content_block_start``, ``text_delta`` / ``input_json_delta`` chunks, ``message_delta``, ``message_stop``),
chunked; ``Reply.cut(n)`` drops the connection after ``n`` events, or sends an ``error`` event there.

Tests script replies (``.script(Reply.tool({...}), Reply.error(429, retry_after=0.01))``); when the script
is empty the ``default`` responder answers. Calls that run beside the conversation (the triage pass, ``aside``) are
kept apart: they are recorded in ``aside_requests`` and take only replies scripted for their tool by name
(``Reply.tool({...}, name="triage_message")``), so a script's order is the conversation's. The default fills a
requested tool's schema minimally and deterministically (first enum option, first PMID seen in the request) and
labels every text as a stand-in, so harnesses run end to end here:
``python -m cpqa.testing.anthropic_standin --port 8765``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from cpqa.sources.httpserver import BackgroundHTTPServer

STANDIN_LABEL = "Stand-in reply, not written by Claude"
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_PMID = re.compile(r"(?:PMID[:\s]*|\[)(\d{4,9})\b")
_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted answer: a message, an error, or raw bytes; ``delay`` seconds before answering."""

    status: int = 200
    body: bytes = b""
    content: list[dict[str, Any]] | None = None  # message content blocks; None for error / raw replies
    stop_reason: str = "end_turn"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    cut_after: int | None = None  # streamed replies: events sent before the stream breaks
    cut_error: int | None = None  # ... with an SSE error event of this status instead of a dropped connection

    @classmethod
    def tool(cls, tool_input: Any, name: str | None = None, stop_reason: str = "tool_use") -> "Reply":
        """A ``tool_use`` block; ``name`` defaults to the tool the request forced (or its first tool).
        ``tool_input`` is sent as given, so malformed inputs (missing fields, wrong types) are scriptable."""
        block = {"type": "tool_use", "id": f"toolu_standin_{next(_ids):06d}", "name": name, "input": tool_input}
        return cls(content=[block], stop_reason=stop_reason)

    @classmethod
    def text(cls, text: str, stop_reason: str = "end_turn") -> "Reply":
        return cls(content=[{"type": "text", "text": text}], stop_reason=stop_reason)

    @classmethod
    def error(cls, status: int, retry_after: float | None = None, message: str | None = None) -> "Reply":
        kind = ERROR_TYPES.get(status, "api_error")
        body = {
            "type": "error",
            "error": {"type": kind, "message": message or f"stand-in {kind}"},
            "request_id": f"req_standin_{next(_ids):06d}",
        }
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(status=status, body=json.dumps(body).encode(), headers=headers)

    @classmethod
    def raw(cls, status: int, body: bytes | str, headers: dict[str, str] | None = None) -> "Reply":
        data = body.encode() if isinstance(body, str) else body
        return cls(status=status, body=data, headers=dict(headers or {}))

    def after(self, seconds: float) -> "Reply":
        """The same reply, sent ``seconds`` late (for client timeouts)."""
        self.delay = seconds
        return self

    def cut(self, after_events: int, error: int | None = None) -> "Reply":
        """The same reply, streamed, breaking after ``after_events`` events (dropped connection, or an error
        event of status ``error`` such as 529 overloaded)."""
        self.cut_after, self.cut_error = after_events, error
        return self

    def message(self, request: dict[str, Any]) -> dict[str, Any]:
        content = [dict(b) for b in self.content or []]
        for block in content:
            if block["type"] == "tool_use" and block["name"] is None:
                block["name"] = _requested_tool(request).get("name", "tool")
        return {
            "id": f"msg_standin_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-standin"),
            "content": content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, len(json.dumps(request)) // 4),
                "output_tokens": max(1, len(json.dumps(content)) // 4),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def render(self, request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if self.content is None:
            return self.status, {"content-type": "application/json", **self.headers}, self.body
        return 200, {"content-type": "application/json", **self.headers}, json.dumps(self.message(request)).encode()

    def events(self, request: dict[str, Any], chunk: int = 12) -> list[tuple[str, dict[str, Any]]]:
        """The message as the API streams it: (event name, data) pairs, text and tool JSON in small chunks."""
        message = self.message(request)
        content, usage = message["content"], message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(content):
            if block["type"] == "tool_use":
                opening, kind, key, body = (
                    {**block, "input": {}},
                    "input_json_delta",
                    "partial_json",
                    json.dumps(block["input"]),
                )
            else:
                opening, kind, key, body = {"type": "text", "text": ""}, "text_delta", "text", block.get("text", "")
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
            )
            for i in range(0, len(body), chunk):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": kind, key: body[i : i + chunk]},
                        },
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "usage": {"output_tokens": usage["output_tokens"]},
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events


def _replies_as(reply: Reply) -> str | None:
    """The tool a scripted reply names explicitly, if any."""
    return next((b.get("name") for b in reply.content or [] if b.get("type") == "tool_use"), None)


def _requested_tool(request: dict[str, Any]) -> dict[str, Any]:
    tools = request.get("tools") or []
    choice = request.get("tool_choice") or {}
    if choice.get("type") == "tool":
        return next((t for t in tools if t.get("name") == choice.get("name")), {"name": choice.get("name")})
    return tools[0] if tools else {}


def invalid_request(request: Any) -> str | None:
    """What the real API would refuse with 400 invalid_request_error (the checks a client bug trips)."""
    if not isinstance(request, dict):
        return "body must be a JSON object"
    missing = [k for k in ("model", "max_tokens", "messages") if k not in request]
    if missing:
        return f"{', '.join(missing)}: Field required"
    if not isinstance(request.get("stream", False), bool):
        return "stream: Input should be a valid boolean"
    choice = request.get("tool_choice") or {}
    names = {t.get("name") for t in request.get("tools") or []}
    if choice.get("type") == "tool" and choice.get("name") not in names:
        return f"tool_choice names {choice.get('name')!r}, which is not in tools"
    return None


def request_text(request: dict[str, Any]) -> str:
    """All text a request carries (system prompt and messages), for responders that look at it."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in ("text", "content"):
                if key in value:
                    walk(value[key])

    walk(request.get("system", ""))
    walk(request.get("messages", []))
    return "\n".join(parts)


def fill_schema(schema: dict[str, Any], pmids: list[str], name: str = "") -> Any:
    """The smallest value that satisfies ``schema``: first enum option, required keys only, minItems items."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties", {})
        keys = schema.get("required", list(props))
        return {k: fill_schema(props.get(k, {"type": "string"}), pmids, k) for k in keys}
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        return [fill_schema(schema.get("items", {"type": "string"}), pmids, name) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0.0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if pmids and ("pmid" in name.lower() or "citation" in name.lower()):
        return pmids[0]
    return f"{STANDIN_LABEL}{f' [{pmids[0]}]' if pmids else ''}."


def default_responder(request: dict[str, Any]) -> Reply:
    """Deterministic stand-in: fill the requested tool's schema, or a labelled text citing the first PMID."""
    pmids = list(dict.fromkeys(_PMID.findall(request_text(request))))
    tool = _requested_tool(request)
    if tool:
        return Reply.tool(fill_schema(tool.get("input_schema", {}), pmids), name=tool.get("name"))
    return Reply.text(f"{STANDIN_LABEL}{f' [{pmids[0]}]' if pmids else ''}.")


class AnthropicStandIn(BackgroundHTTPServer):
    """``with AnthropicStandIn() as api:`` point ANTHROPIC_BASE_URL at ``api.url``; read ``api.requests``."""

    thread_name = "anthropic-standin"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        default: Callable[[dict[str, Any]], Reply] = default_responder,
        aside: frozenset[str] = frozenset({"triage_message"}),
    ):
        self.default = default
        self.aside = aside
        self.aside_requests: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        """The base URL for ANTHROPIC_BASE_URL."""
        return self.base_url

    def script(self, *replies: Reply) -> "AnthropicStandIn":
        """Queue replies, answered in order before the default responder takes over."""
        with self._lock:
            self._script.extend(replies)
        return self

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        tool = _requested_tool(request).get("name")
        with self._lock:
            self.headers.append(headers)
            if tool in self.aside:
                self.aside_requests.append(request)
                mine = next((r for r in self._script if _replies_as(r) == tool), None)
            else:
                self.requests.append(request)
                mine = next((r for r in self._script if _replies_as(r) not in self.aside), None)
            if mine is not None:
                self._script.remove(mine)
                return mine
        return self.default(request)


def _handler_for(standin: AnthropicStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.path.split("?")[0].rstrip("/") != "/v1/messages":
                return self._send(Reply.error(404, message=f"no route {self.path}"), {})
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return self._send(Reply.error(400, message="body is not JSON"), {})
            problem = invalid_request(request)
            if problem:
                return self._send(Reply.error(400, message=problem), request)
            # Header names only: the key the client sends is never recorded.
            names = {
                k.lower(): ("[set]" if k.lower() in {"x-api-key", "authorization"} else v)
                for k, v in self.headers.items()
            }
            self._send(standin._next(request, names), request)

        def _send(self, reply: Reply, request: dict[str, Any]) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            if request.get("stream") and reply.content is not None:
                return self._stream(reply, request)
            status, headers, body = reply.render(request)
            try:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout); nothing to answer

        def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
            """Server-sent events, one chunk each; a cut stream ends without the terminating chunk."""
            events = reply.events(request)
            if reply.cut_after is not None:
                events = events[: reply.cut_after]
                if reply.cut_error is not None:
                    kind = ERROR_TYPES.get(reply.cut_error, "api_error")
                    events.append(("error", {"type": "error", "error": {"type": kind, "message": f"stand-in {kind}"}}))
            try:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for name, data in events:
                    frame = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                    self.wfile.flush()
                if reply.cut_after is None or reply.cut_error is not None:
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.close_connection = True  # a dropped stream: no terminating chunk
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the Anthropic Messages API stand-in (default responder).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--responder",
        default=None,
        metavar="MODULE:FUNCTION",
        help="a callable(request_json) -> Reply to use instead of the default responder",
    )
    args = parser.parse_args(argv)
    responder = default_responder
    if args.responder:
        module, _, name = args.responder.partition(":")
        if not name:
            parser.error("--responder takes MODULE:FUNCTION")
        responder = getattr(importlib.import_module(module), name)
    server = AnthropicStandIn(host=args.host, port=args.port, default=responder)
    print(f"Anthropic stand-in on {server.url} (set ANTHROPIC_BASE_URL to it); Ctrl-C stops", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
