"""The lifecycle shared by CPQA's HTTP servers: serve in a daemon thread as a context manager (tests,
in-process use), or in the calling thread until interrupted (the CLI). ``BackgroundHTTPServer`` runs the
standard library's server, kept for the local protocol peers in ``cpqa.testing`` that must misbehave at
socket level; the mirror runs on uvicorn (``cpqa.sources.asgi_server``)."""

from __future__ import annotations

import threading
from http.server import HTTPServer
from typing import Self, cast


class BackgroundServer:
    """Subclasses serve on ``base_url``; ``_release`` frees what they hold besides the socket."""

    thread_name = "http-server"

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    def start(self) -> Self:
        raise NotImplementedError

    def serve_forever(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        """Free what the subclass holds besides the socket (a store, an HTTP client)."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class BackgroundHTTPServer(BackgroundServer):
    """Subclasses set ``self._server`` in ``__init__``."""

    _server: HTTPServer
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        # TCPServer.server_bind stores socket.getsockname(), whose host is a str for AF_INET and AF_INET6
        # (the stub's wider type covers the address passed in, which may be bytes)
        return f"http://{cast(str, host)}:{port}"

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()
            self._release()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._release()
