"""uvicorn as CPQA's production HTTP server, with the lifecycle of ``BackgroundHTTPServer`` (a context manager
serving from a thread, or ``serve_forever`` in the calling thread).

The socket is bound here, with a real listen backlog, so the URL is known before serving starts (port 0 works).
uvicorn gives every client a coroutine rather than a thread: a slow client holds a socket, never a worker. It
has no deadline on receiving a request's headers, so ``HeaderDeadlineH11`` adds one: a client that drips its
headers is answered 408 and dropped.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from cpqa.sources.httpserver import BackgroundServer

BACKLOG = 2048
HEADER_TIMEOUT = 10.0  # seconds a client may take to send a request's headers
_TIMEOUT_REPLY = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class HeaderDeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers (from connect, or from the last response
    on a kept-alive connection)."""

    header_timeout = HEADER_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and a socket bound by
        # socket.create_server has proto 0: without it, Nagle holds a response's body behind its headers until the
        # client's delayed ACK, 40 ms on every kept-alive request.
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.transport.write(_TIMEOUT_REPLY)
            self.transport.close()


class BackgroundASGIServer(BackgroundServer):
    """Serves an ASGI app with uvicorn on ``base_url``."""

    thread_name = "asgi-server"

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        backlog: int = BACKLOG,
        header_timeout: float = HEADER_TIMEOUT,
        keep_alive: int = 5,
    ):
        self._socket = socket.create_server((host, port), backlog=backlog)
        protocol = type("HeaderDeadline", (HeaderDeadlineH11,), {"header_timeout": header_timeout})
        config = uvicorn.Config(
            app,
            http=protocol,
            backlog=backlog,
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_keep_alive=keep_alive,
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def start(self) -> "BackgroundASGIServer":
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the HTTP server did not start")
            time.sleep(0.01)
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (uvicorn handles Ctrl-C and SIGTERM gracefully)."""
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()
            self._release()

    def close(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()
        self._release()
