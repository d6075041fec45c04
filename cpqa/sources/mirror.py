"""An E-utilities-compatible HTTP server over the local store (``cpqa mirror serve``).

It answers ``esearch.fcgi`` (db=pubmed: term, retmax, retstart, sort, mindate/maxdate) with NCBI's
eSearchResult, and ``efetch.fcgi`` with a PubmedArticleSet (db=pubmed) or a pmc-articleset (db=pmc), over
GET and POST, so the E-utilities client, Bio.Entrez and the ladder run unchanged against it: point
``CPQA_EUTILS_URL`` at ``MirrorServer.url``. Zero hits and unusable terms come back in NCBI's shapes
(Count 0 with ErrorList / WarningList); a missing or unknown parameter is NCBI's ``<ERROR>`` with HTTP 400.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from cpqa.sources.boolean import BooleanQueryError
from cpqa.sources.httpserver import BackgroundHTTPServer
from cpqa.sources.ncbi.client import normalize_pmcids, normalize_pmids
from cpqa.sources.ncbi.jats import render_pmc_article_set
from cpqa.sources.ncbi.pubmed_xml import render_pubmed_article_set
from cpqa.sources.store import Store
from cpqa.types import SearchResult

log = logging.getLogger(__name__)
ESEARCH_HEAD = ('<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch '
                '20060628//EN" "https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n')
MAX_RETMAX = 10000  # NCBI's own cap for esearch
WORKERS = 8
_DATE = re.compile(r"^\d{4}(?:[/-](?:0?[1-9]|1[0-2])(?:[/-](?:0?[1-9]|[12]\d|3[01]))?)?$")


class BadRequest(ValueError):
    """A request the mirror answers with NCBI's ``<ERROR>`` document and HTTP 400."""

    def __init__(self, message: str, root: str = "eSearchResult"):
        super().__init__(message)
        self.root = root


def esearch_xml(result: SearchResult, retstart: int, translation: str,
                errors: list[tuple[str, str]] = (), warnings: list[tuple[str, str]] = ()) -> bytes:
    """An eSearchResult document in NCBI's element order (see the esearch DTD)."""
    ids = "".join(f"<Id>{escape(p)}</Id>\n" for p in result.pmids)
    parts = [ESEARCH_HEAD, f"<eSearchResult><Count>{result.count}</Count><RetMax>{len(result.pmids)}</RetMax>"
             f"<RetStart>{retstart}</RetStart>",
             f"<IdList>\n{ids}</IdList>" if ids else "<IdList/>",
             f"<TranslationSet/><QueryTranslation>{escape(translation)}</QueryTranslation>"]
    if errors:
        parts.append("<ErrorList>" + "".join(f"<{t}>{escape(v)}</{t}>" for t, v in errors) + "</ErrorList>")
    if warnings:
        parts.append("<WarningList>" + "".join(f"<{t}>{escape(v)}</{t}>" for t, v in warnings) + "</WarningList>")
    parts.append("</eSearchResult>\n")
    return "".join(parts).encode("utf-8")


def error_xml(message: str, root: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8" ?>\n<{root}><ERROR>{escape(message)}</ERROR></{root}>\n'
            .encode("utf-8"))


def _int(params: dict[str, str], name: str, default: int, high: int) -> int:
    value = params.get(name, "")
    if value == "":
        return default
    if not value.isdigit():
        raise BadRequest(f"{name} must be a non-negative integer")
    return min(int(value), high)


def _date(params: dict[str, str], name: str) -> str | None:
    value = params.get(name, "").strip()
    if value and not _DATE.match(value):
        raise BadRequest(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD")
    return value or None


class Mirror:
    """The request logic, independent of HTTP: flattened params -> XML body, or ``BadRequest``."""

    def __init__(self, store: Store):
        self.store = store

    def esearch(self, params: dict[str, str]) -> bytes:
        if params.get("db", "pubmed") != "pubmed":
            raise BadRequest(f"database {params.get('db')!r} is not served by the mirror (pubmed only)")
        term = params.get("term", "").strip()
        if not term:
            raise BadRequest("Empty term and query_key - nothing todo")
        retmax = _int(params, "retmax", 20, MAX_RETMAX)
        retstart = _int(params, "retstart", 0, 10**9)
        warnings: list[tuple[str, str]] = []
        sort = params.get("sort", "relevance")
        if sort not in ("relevance", ""):
            warnings.append(("OutputMessage", f"sort={sort} is not supported by the mirror; relevance order used"))
        if params.get("datetype", "pdat") not in ("pdat", ""):
            warnings.append(("OutputMessage", f"datetype={params['datetype']} is not supported; pdat used"))
        mindate, maxdate = _date(params, "mindate"), _date(params, "maxdate")
        try:
            result = self.store.search(term, retmax=retmax, retstart=retstart, mindate=mindate, maxdate=maxdate)
        except BooleanQueryError as exc:
            # NCBI answers an unusable term with zero hits and an error list, not an HTTP error.
            empty = SearchResult(count=0, pmids=[])
            return esearch_xml(empty, retstart, term, errors=[("PhraseNotFound", term)],
                               warnings=[*warnings, ("OutputMessage", f"Invalid query: {exc}"),
                                         ("OutputMessage", "No items found.")])
        if result.count == 0:
            warnings.append(("OutputMessage", "No items found."))
        return esearch_xml(result, retstart, result.query_translation or term, warnings=warnings)

    def efetch(self, params: dict[str, str]) -> bytes:
        db = params.get("db", "pubmed")
        raw_ids = [i for i in params.get("id", "").replace(" ", ",").split(",") if i]
        if not raw_ids:
            raise BadRequest("Empty id list - nothing todo", root="eFetchResult")
        try:
            if db == "pubmed":
                pmids = normalize_pmids(raw_ids)
                raw = self.store.raw_xml(pmids)  # records that arrived without XML come back rendered
                return render_pubmed_article_set([raw[p] for p in pmids if p in raw])
            if db == "pmc":
                pmcids = normalize_pmcids(raw_ids)
                raw = self.store.raw_pmc_xml(pmcids)
                return render_pmc_article_set([raw[p] for p in pmcids if p in raw])
        except ValueError as exc:
            raise BadRequest(str(exc), root="eFetchResult") from None
        raise BadRequest(f"database {db!r} is not served by the mirror (pubmed, pmc)", root="eFetchResult")


class PooledHTTPServer(ThreadingHTTPServer):
    """Serves requests on a fixed pool of threads: the store keeps one SQLite connection per thread, so a
    thread per request would open a connection per request. Handlers close each connection (HTTP/1.0),
    so an idle keep-alive client never holds a worker."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], workers: int = WORKERS):
        super().__init__(address, handler)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="eutils-mirror")

    def process_request(self, request, client_address) -> None:  # noqa: ANN001 (socketserver signature)
        self._pool.submit(self.process_request_thread, request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=True, cancel_futures=True)


class MirrorServer(BackgroundHTTPServer):
    """``with MirrorServer(store_path) as mirror:`` serves the store on ``mirror.url`` from a thread."""

    thread_name = "eutils-mirror"

    def __init__(self, store_path: str | Path, host: str = "127.0.0.1", port: int = 0):
        self.store = Store(store_path)
        self.mirror = Mirror(self.store)
        try:
            self._server = PooledHTTPServer((host, port), _handler_for(self.mirror))
        except OSError:
            self.store.close()
            raise


    @property
    def url(self) -> str:
        """The base URL, ending in "/", usable as CPQA_EUTILS_URL."""
        return self.base_url + "/"

    def _release(self) -> None:
        self.store.close()


def _handler_for(mirror: Mirror) -> type[BaseHTTPRequestHandler]:
    routes = {"esearch.fcgi": mirror.esearch, "efetch.fcgi": mirror.efetch}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection (see PooledHTTPServer)
        timeout = 30  # seconds a worker waits for a slow client's request

        def do_GET(self) -> None:  # noqa: N802
            self._handle(b"")

        def do_POST(self) -> None:  # noqa: N802
            self._handle(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _handle(self, body: bytes) -> None:
            parts = urlsplit(self.path)
            params = parse_qs(parts.query, keep_blank_values=True)
            if body:
                for key, values in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items():
                    params.setdefault(key, []).extend(values)
            flat = {k: ",".join(v) if k == "id" else v[-1] for k, v in params.items()}
            route = routes.get(parts.path.rsplit("/", 1)[-1])
            if route is None:
                return self._send(404, "text/plain", b"not found: the mirror serves esearch.fcgi and efetch.fcgi\n")
            try:
                self._send(200, "text/xml; charset=UTF-8", route(flat))
            except BadRequest as exc:
                self._send(400, "text/xml; charset=UTF-8", error_xml(str(exc), exc.root))
            except Exception:  # one bad request must not take the server down
                log.exception("mirror failed on %s", parts.path)
                self._send(500, "text/xml; charset=UTF-8", error_xml("internal mirror error", "eSearchResult"))

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s %s", self.address_string(), format % args)

    return Handler
