"""A misbehaving HTTP server for fault injection: it answers with scripted faults (429 with Retry-After,
500, 503, a reply slower than the client's timeout, a truncated body, malformed XML, a zero-hit search)
and otherwise passes requests through to a real upstream (e.g. the local E-utilities mirror).
Every request is recorded with its arrival time, so tests can measure the rate a client really sends.
``closed_port_url()`` gives a URL where nothing listens (connection refused).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
from cpqa.sources.httpserver import BackgroundHTTPServer

ZERO_HITS = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN"'
    b' "https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n<eSearchResult><Count>0</Count>'
    b"<RetMax>0</RetMax><RetStart>0</RetStart><IdList/><TranslationSet/><QueryTranslation>(abcXYZ[All Fields])"
    b"</QueryTranslation><ErrorList><PhraseNotFound>abcXYZ</PhraseNotFound></ErrorList><WarningList>"
    b"<OutputMessage>No items found.</OutputMessage></WarningList></eSearchResult>\n"
)
MALFORMED = b'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><Count>3</Count><IdList><Id>1</Id></IdLi'


@dataclass
class Fault:
    """What the server does with one request. ``delay`` seconds pass before it answers."""

    kind: Literal["reply", "truncate", "passthrough"]
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def status_code(cls, status: int, retry_after: float | None = None, body: bytes = b"") -> "Fault":
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return cls("reply", status=status, body=body or f"stand-in HTTP {status}".encode(), headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1) -> "Fault":
        """NCBI's 429 answer shape (JSON body) with Retry-After."""
        body = b'{"error":"API rate limit exceeded","count":"4"}'
        fault = cls.status_code(429, retry_after, body)
        fault.headers["Content-Type"] = "application/json"
        return fault

    @classmethod
    def slow(cls, seconds: float, then: "Fault | None" = None) -> "Fault":
        """Wait ``seconds`` (longer than the client's timeout), then answer as ``then`` (default: pass through)."""
        fault = then or cls.passthrough()
        return cls(fault.kind, fault.status, fault.body, dict(fault.headers), delay=seconds)

    @classmethod
    def truncated(cls, body: bytes = ZERO_HITS) -> "Fault":
        """Promise ``len(body)`` bytes, send half, close the connection."""
        return cls("truncate", body=body)

    @classmethod
    def malformed(cls, body: bytes = MALFORMED) -> "Fault":
        return cls("reply", body=body, headers={"Content-Type": "text/xml"})

    @classmethod
    def zero_hits(cls) -> "Fault":
        return cls("reply", body=ZERO_HITS, headers={"Content-Type": "text/xml"})

    @classmethod
    def passthrough(cls) -> "Fault":
        return cls("passthrough")


@dataclass
class Recorded:
    at: float  # time.monotonic() on arrival
    method: str
    path: str
    params: dict[str, list[str]]
    body: bytes = b""  # the raw request body (JSON for APIs that take it), for routing and inspection


class FaultyServer(BackgroundHTTPServer):
    """``with FaultyServer(upstream=mirror.url) as bad:`` point a client at ``bad.url``; script faults with
    ``bad.script(Fault.rate_limited(0.1), Fault.status_code(503))``; read ``bad.requests`` / ``bad.timestamps``.
    With an empty script it passes through to ``upstream`` (or answers zero hits when there is none)."""

    thread_name = "faulty-server"

    def __init__(self, upstream: str | None = None, host: str = "127.0.0.1", port: int = 0):
        self.upstream = upstream.rstrip("/") + "/" if upstream else None
        self.requests: list[Recorded] = []
        self._script: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._http = httpx.Client(timeout=30.0)
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return self.base_url + "/"

    @property
    def timestamps(self) -> list[float]:
        with self._lock:
            return [r.at for r in self.requests]

    def script(self, *faults: Fault) -> "FaultyServer":
        with self._lock:
            self._script.extend(faults)
        return self

    def _next(self, recorded: Recorded) -> Fault:
        with self._lock:
            self.requests.append(recorded)
            if self._script:
                return self._script.popleft()
        return Fault.passthrough() if self.upstream else Fault.zero_hits()

    def _forward(self, method: str, path: str, body: bytes, content_type: str | None) -> tuple[int, dict, bytes]:
        if self.upstream is None:
            raise RuntimeError("a passthrough fault needs a FaultyServer with an upstream")
        headers = {"Content-Type": content_type} if content_type else {}
        reply = self._http.request(method, self.upstream + path.lstrip("/"), content=body or None, headers=headers)
        keep = {k: v for k, v in reply.headers.items() if k.lower() in {"content-type", "retry-after"}}
        return reply.status_code, keep, reply.content

    def _release(self) -> None:
        self._http.close()


def _handler_for(server: FaultyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            self._handle(b"")

        def do_POST(self) -> None:  # noqa: N802
            self._handle(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _handle(self, body: bytes) -> None:
            arrived = time.monotonic()
            parts = urlsplit(self.path)
            params = parse_qs(parts.query)
            if body and "form-urlencoded" in (self.headers.get("Content-Type") or ""):
                for key, values in parse_qs(body.decode("utf-8", "replace")).items():
                    params.setdefault(key, []).extend(values)
            fault = server._next(Recorded(arrived, self.command, parts.path, params, body))
            if fault.delay:
                time.sleep(fault.delay)
            try:
                if fault.kind == "passthrough":
                    status, headers, data = server._forward(
                        self.command, self.path, body, self.headers.get("Content-Type")
                    )
                    self._send(status, headers, data)
                elif fault.kind == "truncate":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/xml")
                    self.send_header("Content-Length", str(len(fault.body)))
                    self.end_headers()
                    self.wfile.write(fault.body[: len(fault.body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                else:
                    self._send(fault.status, fault.headers, fault.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
