"""What every request passes before the pipeline sees it: a bearer token (when ``CPQA_API_TOKEN`` is set), a body
size limit and a per-client rate limit; and an access log that names the method, path, status and time only (no
query string, no body, no client address: questions may hold personal details and the pipeline removes them, the
log must not keep them first)."""

from __future__ import annotations

import hmac
import logging
import threading
import time

from starlette.requests import Request
from starlette.responses import JSONResponse

ACCESS_LOG = logging.getLogger("cpqa.serving.access")
OPEN_PATHS = frozenset({"/health", "/docs", "/openapi.json", "/redoc"})
OPEN_PREFIX = "/docs-static/"  # the documentation pages' scripts and styles


class TokenBucket:
    """``rate`` requests per minute per client, bursts up to ``burst``; thread-safe."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate / 60.0, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0 when a request may go now, else the seconds until one may."""
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate if self.rate else float("inf")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class Guard:
    """Pure ASGI middleware (streamed responses pass through untouched)."""

    def __init__(self, app, *, token: str | None, max_body: int, bucket: TokenBucket | None):
        self.app, self.token, self.max_body, self.bucket = app, token, max_body, bucket

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]

        async def send_logged(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            rejection = self._rejection(Request(scope))
            if rejection is not None:
                await rejection(scope, receive, send_logged)
                return
            if b"content-length" not in dict(scope["headers"]) and scope["method"] in ("POST", "PUT", "PATCH"):
                replay = await self._buffered(receive)  # a streamed body: read up to the limit before the app
                if replay is None:
                    await _error(413, f"request body over {self.max_body} bytes")(scope, receive, send_logged)
                    return
                receive = replay
            await self.app(scope, receive, send_logged)
        finally:
            ACCESS_LOG.info(
                "%s %s %d %.0fms", scope["method"], scope["path"], status[0], (time.perf_counter() - started) * 1000.0
            )

    async def _buffered(self, receive):
        """A ``receive`` replaying the whole body, read here; None when it is over the limit."""
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > self.max_body:
                return None
            if message["type"] != "http.request" or not message.get("more_body"):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        return replay

    def _rejection(self, request: Request) -> JSONResponse | None:
        path = request.url.path
        is_open = path in OPEN_PATHS or path.startswith(OPEN_PREFIX)
        if self.token and not is_open:
            scheme, _, value = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self.token.encode()):
                return _error(
                    401,
                    "a bearer token is required (Authorization: Bearer <CPQA_API_TOKEN>)",
                    {"WWW-Authenticate": "Bearer"},
                )
        if self.bucket is not None and not is_open:
            wait = self.bucket.take(request.client.host if request.client else "unknown")
            if wait:
                return _error(429, "too many requests; slow down", {"Retry-After": str(max(1, round(wait)))})
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return _error(
                413 if declared.isdigit() else 400,
                f"request body over {self.max_body} bytes" if declared.isdigit() else "bad Content-Length",
            )
        return None
