"""Fault injection per outside call: a ``FaultyServer`` that knows which of the pipeline's five outside calls
a request is (esearch, efetch PubMed, efetch PMC, the Claude rewrite call, the Claude answer call) and fails
only that one, on every attempt, until healed; ``refusing()`` takes the whole service off the network
(connection refused) and brings it back on the same port.

It answers one request per connection (HTTP/1.0), so no pooled keep-alive connection outlives ``refusing()``.
"""

from __future__ import annotations

import json
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, cast

from cpqa.testing.faulty_server import Fault, FaultyServer, Recorded

NCBI_CALLS = ("esearch", "efetch_pubmed", "efetch_pmc")
CLAUDE_CALLS = ("claude_rewrite", "claude_answer")
CALLS = NCBI_CALLS + CLAUDE_CALLS
FAULTS = ("429", "5xx", "timeout", "truncated", "malformed")  # per call; "refused" is per service
CLAUDE_TOOLS = {"query_ladder": "claude_rewrite", "give_answer": "claude_answer"}

_TRUNCATED_JSON = json.dumps(
    {
        "id": "msg_truncated",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "a reply cut off in transit " * 20}],
    }
).encode()
_MALFORMED = {
    "esearch": None,  # FaultyServer's own malformed eSearchResult
    "efetch_pubmed": b'<?xml version="1.0" ?>\n<PubmedArticleSet><PubmedArticle><MedlineCitation Status="MEDLINE">'
    b'<PMID Version="1">1</PMID><Article><ArticleTitle>cut sho',
    "efetch_pmc": b'<?xml version="1.0" ?>\n<pmc-articleset><article article-type="review-article"><front>'
    b'<article-meta><article-id pub-id-type="pmc">1',
    "claude_rewrite": b'{"id": "msg_malformed", "type": "message", "content": [{"type": "tool_use", "input": {',
    "claude_answer": b'{"id": "msg_malformed", "type": "message", "content": [{"type": "tool_use", "input": {',
}


def call_of(recorded: Recorded) -> str | None:
    """Which outside call a request is, from its endpoint, ``db`` parameter or forced Claude tool."""
    endpoint = recorded.path.rstrip("/").rsplit("/", 1)[-1]
    if endpoint == "esearch.fcgi":
        return "esearch"
    if endpoint == "efetch.fcgi":
        return "efetch_pmc" if recorded.params.get("db", ["pubmed"])[-1] == "pmc" else "efetch_pubmed"
    if endpoint == "messages":
        try:
            request = json.loads(recorded.body or b"{}")
        except ValueError:
            return None
        name = ((request.get("tool_choice") or {}) if isinstance(request, dict) else {}).get("name")
        return CLAUDE_TOOLS.get(name) if isinstance(name, str) else None
    return None


def fault_for(call: str, kind: str, timeout: float) -> Fault:
    """The fault ``kind`` shaped for ``call``; ``timeout`` is the client's, so "timeout" answers later than it."""
    if call not in CALLS or kind not in FAULTS:
        raise ValueError(f"unknown call or fault: {call!r}, {kind!r}")
    claude = call in CLAUDE_CALLS
    if kind == "429":
        if claude:
            body = b'{"type": "error", "error": {"type": "rate_limit_error", "message": "injected"}}'
            return Fault.status_code(429, 0.05, body)
        return Fault.rate_limited(0.05)
    if kind == "5xx":
        return Fault.status_code(529 if claude else 503)
    if kind == "timeout":
        return Fault.slow(timeout + 0.5, then=Fault.status_code(503))
    if kind == "truncated":
        return Fault.truncated(_TRUNCATED_JSON) if claude else Fault.truncated()
    malformed = _MALFORMED[call]
    fault = Fault.malformed(malformed) if malformed else Fault.malformed()
    if claude:
        fault.headers["Content-Type"] = "application/json"
    return fault


class RoutedFaultyServer(FaultyServer):
    """``with RoutedFaultyServer(upstream) as proxy:`` passes every call through until ``proxy.fail(call, fault)``;
    ``proxy.calls(since)`` counts the requests per call."""

    def __init__(self, upstream: str, host: str = "127.0.0.1", port: int = 0):
        super().__init__(upstream, host=host, port=port)
        self._failing: dict[str, Fault] = {}
        # FaultyServer serves with the handler class from _handler_for()
        handler = cast(type[BaseHTTPRequestHandler], self._server.RequestHandlerClass)
        self._server.RequestHandlerClass = type(
            "OneShot" + handler.__name__, (handler,), {"protocol_version": "HTTP/1.0"}
        )

    def fail(self, call: str, fault: Fault) -> None:
        with self._lock:
            self._failing[call] = fault

    def heal(self) -> None:
        with self._lock:
            self._failing.clear()

    @contextmanager
    def failing(self, call: str, fault: Fault) -> Iterator["RoutedFaultyServer"]:
        self.fail(call, fault)
        try:
            yield self
        finally:
            self.heal()

    def calls(self, since: int = 0) -> Counter:
        with self._lock:
            return Counter(call_of(r) for r in self.requests[since:])

    def _next(self, recorded: Recorded) -> Fault:
        with self._lock:
            fault = self._failing.get(call_of(recorded) or "")
            if fault is not None:
                self.requests.append(recorded)
                return fault
        return super()._next(recorded)

    @contextmanager
    def refusing(self) -> Iterator["RoutedFaultyServer"]:
        """Close the listening socket (connections are refused), then listen again on the same port."""
        host, port = self._server.server_address[:2]
        handler = self._server.RequestHandlerClass
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            yield self
        finally:
            self._server = ThreadingHTTPServer((host, port), handler)
            self._server.daemon_threads = True
            self.start()
