"""The lifecycle shared by CPQA's HTTP servers (the E-utilities mirror and the local protocol peers in
``cpqa.testing``): serve in a daemon thread as a context manager (tests, in-process use), or in the calling
thread until interrupted (the CLI)."""

from __future__ import annotations

import threading
from http.server import HTTPServer
from typing import TypeVar

Self = TypeVar("Self", bound="BackgroundHTTPServer")


class BackgroundHTTPServer:
    """Subclasses set ``self._server`` in ``__init__`` and free their own resources in ``_release``."""

    thread_name = "http-server"
    _server: HTTPServer
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self: Self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted."""
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

    def _release(self) -> None:
        """Free what the subclass holds besides the socket (a store, an HTTP client)."""

    def __enter__(self: Self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
