"""The E-utilities mirror over HTTP (``cpqa mirror serve``): ``Mirror``'s request logic as an ASGI app on uvicorn.

``esearch.fcgi`` and ``efetch.fcgi`` over GET and POST (form body). The request logic runs on a fixed pool of
threads: the store keeps one SQLite connection per thread. Every request has a deadline from its first header
byte to its answer: headers (``HeaderDeadlineH11``), body and work. A body over the limit is 413, too many
parameters 400, a deadline passed while the body was arriving 408 and after it 503 with Retry-After (which the
E-utilities client retries), as is a queue past ``max_pending``. Parameter errors are NCBI's HTTP 200 ``<ERROR>``
documents (``cpqa.sources.mirror``): a bad parameter never gets a 500.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs

from cpqa.sources.asgi_server import BACKLOG, HEADER_TIMEOUT, BackgroundASGIServer
from cpqa.sources.mirror import EutilsError, Mirror, error_xml
from cpqa.sources.store import Store

log = logging.getLogger(__name__)
WORKERS = 8
MAX_BODY = 1 << 20  # a POST of 200 PMIDs is about 2 KB
MAX_FIELDS = 1000
DEADLINE = 30.0  # seconds from a request's first byte to its answer
MAX_PENDING = 1024  # requests in the work queue before new ones are turned away (503)
XML = "text/xml; charset=UTF-8"
TEXT = "text/plain; charset=utf-8"


class Rejected(Exception):
    """A request refused at the HTTP level, before the request logic sees it."""

    def __init__(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.status, self.headers = status, headers


def request_params(query_string: bytes, body: bytes) -> dict[str, str]:
    """Query string and form body as one flat dict: ``id`` values joined by commas, otherwise the last value."""
    params: dict[str, list[str]] = {}
    try:
        for raw in (query_string, body):
            if raw:
                for key, values in parse_qs(
                    raw.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_FIELDS
                ).items():
                    params.setdefault(key, []).extend(values)
    except ValueError:
        raise Rejected(400, f"more than {MAX_FIELDS} parameters") from None
    return {k: ",".join(v) if k == "id" else v[-1] for k, v in params.items()}


async def read_body(scope: dict, receive: Callable, limit: int) -> bytes:
    declared = dict(scope["headers"]).get(b"content-length")
    if declared is not None and int(declared) > limit:  # h11 has already refused a malformed Content-Length
        raise Rejected(413, f"request body over {limit} bytes")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Rejected(400, "client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Rejected(413, f"request body over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


class MirrorApp:
    """The ASGI app: routes, limits and the deadline around ``Mirror``."""

    def __init__(
        self,
        mirror: Mirror,
        *,
        workers: int = WORKERS,
        max_body: int = MAX_BODY,
        deadline: float = DEADLINE,
        max_pending: int = MAX_PENDING,
    ):
        self.routes = {
            "esearch.fcgi": (mirror.esearch, "eSearchResult"),
            "efetch.fcgi": (mirror.efetch, "eFetchResult"),
        }
        self.max_body, self.deadline, self.max_pending = max_body, deadline, max_pending
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="eutils-mirror")
        self._pending = 0  # touched only on the event loop's thread

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        status, content_type, body, headers = await self._respond(scope, receive)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type.encode()),
                    (b"content-length", str(len(body)).encode()),
                    *((k.encode(), v.encode()) for k, v in headers),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _respond(self, scope: dict, receive: Callable) -> tuple[int, str, bytes, tuple]:
        route = self.routes.get(scope["path"].rsplit("/", 1)[-1])
        if route is None:
            return 404, TEXT, b"not found: the mirror serves esearch.fcgi and efetch.fcgi\n", ()
        if scope["method"] not in ("GET", "POST"):
            return 405, TEXT, b"esearch.fcgi and efetch.fcgi take GET or POST\n", (("allow", "GET, POST"),)
        if self._pending >= self.max_pending:
            return 503, TEXT, b"the mirror is busy; retry shortly\n", (("retry-after", "1"),)
        self._pending += 1
        body_read = False
        try:
            async with asyncio.timeout(self.deadline):
                body = await read_body(scope, receive, self.max_body)
                body_read = True
                params = request_params(scope["query_string"], body)
                status, payload = await asyncio.get_running_loop().run_in_executor(self.pool, answer, *route, params)
                return status, XML, payload, ()
        except Rejected as exc:
            return exc.status, TEXT, f"{exc}\n".encode(), exc.headers
        except TimeoutError:
            if not body_read:
                return 408, TEXT, b"request body not received in time\n", (("connection", "close"),)
            log.warning("mirror request passed its %.0f s deadline", self.deadline)
            return 503, TEXT, b"the mirror could not answer in time; retry shortly\n", (("retry-after", "1"),)
        finally:
            self._pending -= 1


def answer(handler: Callable[[dict[str, str]], bytes], root: str, params: dict[str, str]) -> tuple[int, bytes]:
    """The request logic's answer: a result, NCBI's HTTP 200 error document, or (a fault of ours) a 500."""
    try:
        return 200, handler(params)
    except EutilsError as exc:
        return 200, error_xml(str(exc), exc.root)
    except Exception:  # one request must not take the server down
        log.exception("mirror failed on %s", root)
        return 500, error_xml("internal mirror error", root)


class MirrorServer(BackgroundASGIServer):
    """``with MirrorServer(store_path) as mirror:`` serves the store on ``mirror.url`` from a thread."""

    thread_name = "eutils-mirror"

    def __init__(
        self,
        store_path: str | Path,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        workers: int = WORKERS,
        max_body: int = MAX_BODY,
        deadline: float = DEADLINE,
        header_timeout: float = HEADER_TIMEOUT,
        backlog: int = BACKLOG,
    ):
        self.store = Store(store_path)
        self.mirror = Mirror(self.store)
        self.app = MirrorApp(self.mirror, workers=workers, max_body=max_body, deadline=deadline)
        try:
            super().__init__(self.app, host, port, backlog=backlog, header_timeout=header_timeout)
        except OSError:
            self._release()
            raise

    @property
    def url(self) -> str:
        """The base URL, ending in "/", usable as CPQA_EUTILS_URL."""
        return self.base_url + "/"

    def _release(self) -> None:
        self.app.pool.shutdown(wait=False, cancel_futures=True)
        self.store.close()
