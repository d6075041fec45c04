"""The E-utilities client: esearch, efetch PubMed XML and efetch PMC JATS, against NCBI or the local mirror.

httpx directly (Bio.Entrez hard-codes its URLs and has no backoff), with NCBI's etiquette: ``tool``,
``email`` and ``api_key`` on every request, one process-wide rate limiter per base URL, and tenacity
backoff with jitter on 429, 5xx, timeouts, dropped connections and malformed XML, honouring Retry-After.
Fetched records go into the store before they are returned, so a PMID is fetched once; a response that
fails to parse caches nothing. Error messages never contain the API key (the URL that carries it is
never quoted, and every message passes ``settings.redact``).
"""

from __future__ import annotations

import email.utils
import logging
import re
import threading
import time
from functools import lru_cache
from typing import Callable, Iterable, Protocol, TypeVar

import httpx
from lxml import etree
from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_exponential_jitter

from cpqa.config import Settings
from cpqa.sources.ncbi.jats import iter_pmc_records
from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from cpqa.sources.ncbi.ratelimit import RateLimiter, shared_limiter
from cpqa.sources.ncbi.xmlio import XmlFormatError
from cpqa.types import Article, SearchResult

log = logging.getLogger(__name__)
T = TypeVar("T")
EFETCH_BATCH = 200  # NCBI: at most 200 IDs per efetch GET; we POST, but keep batches this size
TOOL = "cpqa"
_PMID = re.compile(r"^\d{1,9}$")
_PMCID = re.compile(r"^(?:PMC)?(\d{1,9})$", re.IGNORECASE)
_TRANSIENT_ERROR = re.compile(r"backend|temporar|try again|unavailable", re.IGNORECASE)
# NCBI wraps some parameter errors in "Search Backend failed" too: asking again cannot help those.
_PARAMETER_ERROR = re.compile(r"cannot be larger|out of acceptable range|invalid", re.IGNORECASE)
_XML_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True)


class RecordCache(Protocol):
    """Where fetched records are kept so a PMID is fetched once (``cpqa.sources.store.Store`` is one)."""

    def get_many(self, pmids: Iterable[str]) -> dict[str, Article]: ...

    def raw_pmc_xml(self, pmcids: Iterable[str]) -> dict[str, bytes]: ...

    def upsert(self, records: Iterable[tuple[Article, bytes | None]]) -> object: ...


class NCBIError(RuntimeError):
    """E-utilities gave an answer we cannot use (an error document, malformed XML, a client error)."""


class NCBIUnavailable(NCBIError):
    """E-utilities could not be reached, or kept failing (429 / 5xx / timeouts) until retries ran out."""


@lru_cache(maxsize=8)
def eutils_reachable(base_url: str, timeout: float) -> bool:
    """One short probe of E-utilities (einfo), cached per process: the ``auto`` profile uses it to choose between
    live NCBI and the local store, so a machine without network never waits on retries for every question."""
    try:
        return httpx.get(base_url.rstrip("/") + "/einfo.fcgi", timeout=timeout).status_code < 500
    except httpx.HTTPError:
        return False


class _Retryable(Exception):
    """One failed attempt worth retrying; ``retry_after`` is the server's requested wait in seconds."""

    def __init__(self, reason: str, retry_after: float | None = None, malformed: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.malformed = malformed


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


def normalize_pmids(pmids: Iterable[str | int]) -> list[str]:
    """Unique PMIDs in order; a value that is not a PMID raises ``ValueError``."""
    out = []
    for raw in pmids:
        pmid = str(raw).strip()
        if not _PMID.match(pmid):
            raise ValueError(f"not a PMID: {pmid[:40]!r}")
        out.append(pmid)
    return list(dict.fromkeys(out))


def normalize_pmcids(pmcids: Iterable[str | int]) -> list[str]:
    """Unique PMC IDs as ``PMC1234567`` in order; a value that is not one raises ``ValueError``."""
    out = []
    for raw in pmcids:
        match = _PMCID.match(str(raw).strip())
        if not match:
            raise ValueError(f"not a PMC ID: {str(raw)[:40]!r}")
        out.append(f"PMC{match.group(1)}")
    return list(dict.fromkeys(out))


def error_document(data: bytes) -> str | None:
    """The message of an E-utilities ``<ERROR>`` answer (``<eSearchResult><ERROR>…``, ``<eFetchResult>…``)."""
    if b"<ERROR>" not in data[:4096]:
        return None
    try:
        root = etree.fromstring(data, _XML_PARSER)
    except etree.XMLSyntaxError:
        return None
    node = root if root.tag == "ERROR" else root.find("ERROR")
    return None if node is None else " ".join((node.text or "").split())[:300] or "unspecified error"


def parse_esearch(data: bytes) -> SearchResult:
    """An eSearchResult document -> SearchResult; NCBI's ErrorList / WarningList entries become warnings."""
    try:
        root = etree.fromstring(data, _XML_PARSER)
    except etree.XMLSyntaxError as exc:
        raise XmlFormatError(f"malformed esearch XML: {exc}") from None
    if root.tag != "eSearchResult":
        raise XmlFormatError(f"expected <eSearchResult>, got <{root.tag}>")
    count = root.findtext("Count")
    if count is None or not count.strip().isdigit():
        raise XmlFormatError("esearch answer has no Count")
    warnings = [
        f"{e.tag}: {(e.text or '').strip()}" for lst in ("ErrorList", "WarningList") for e in root.findall(f"{lst}/*")
    ]
    return SearchResult(
        count=int(count),
        pmids=[i.text.strip() for i in root.findall("IdList/Id") if i.text],
        query_translation=root.findtext("QueryTranslation"),
        warnings=warnings,
    )


def eutils_limiter(settings: Settings) -> RateLimiter:
    """The process-wide limiter of the E-utilities server ``settings`` names, which every client of it shares."""
    return shared_limiter(settings.cpqa_eutils_url.rstrip("/") + "/", settings.ncbi_rate_limit)


class EutilsClient:
    """esearch / efetch with NCBI etiquette; thread-safe; ``requests_made`` counts HTTP attempts."""

    def __init__(self, settings: Settings, store: RecordCache | None = None, *, limiter: RateLimiter | None = None):
        self.settings = settings
        self.store = store
        self.base_url = settings.cpqa_eutils_url.rstrip("/") + "/"
        self.limiter = limiter or eutils_limiter(settings)
        self._http = httpx.Client(timeout=settings.cpqa_http_timeout, headers={"User-Agent": f"{TOOL} (httpx)"})
        self._count_lock = threading.Lock()
        self.requests_made = 0

    # ------------------------------------------------------------ public API
    def search(
        self,
        term: str,
        retmax: int = 20,
        retstart: int = 0,
        mindate: int | str | None = None,
        maxdate: int | str | None = None,
        sort: str = "relevance",
    ) -> SearchResult:
        """esearch db=pubmed; ``mindate``/``maxdate`` (YYYY, YYYY/MM or YYYY/MM/DD) limit the publication date."""
        if not term or not term.strip():
            raise ValueError("empty search term")
        params: dict[str, str | int] = {
            "db": "pubmed",
            "term": term,
            "retmax": retmax,
            "retstart": retstart,
            "sort": sort,
            "retmode": "xml",
        }
        if mindate is not None or maxdate is not None:
            # NCBI needs both ends of a date range.
            params.update(datetype="pdat", mindate=str(mindate or 1800), maxdate=str(maxdate or 3000))
        return self._call("esearch.fcgi", params, parse_esearch)

    def fetch_pubmed(self, pmids: Iterable[str | int]) -> dict[str, Article]:
        """Articles by PMID: from the store when there, else efetch (200 per request), stored on arrival.
        PMIDs NCBI does not know are absent from the result."""
        wanted = normalize_pmids(pmids)
        found = self.store.get_many(wanted) if self.store is not None and wanted else {}
        missing = [p for p in wanted if p not in found]
        for start in range(0, len(missing), EFETCH_BATCH):
            batch = missing[start : start + EFETCH_BATCH]
            records = self._call(
                "efetch.fcgi",
                {"db": "pubmed", "id": ",".join(batch), "retmode": "xml"},
                lambda data: list(iter_pubmed_records(data)),
            )
            self._keep(records)
            found.update({a.pmid: a for a, _ in records if a.pmid in batch})
        return {p: found[p] for p in wanted if p in found}

    def fetch_pmc(self, pmcids: Iterable[str | int]) -> dict[str, Article]:
        """PMC full texts keyed ``PMC…``: from the store's cached JATS when there, else efetch db=pmc."""
        wanted = normalize_pmcids(pmcids)
        found: dict[str, Article] = {}
        if self.store is not None and wanted:
            for raw in self.store.raw_pmc_xml(wanted).values():
                found.update({a.pmcid: a for a, _ in iter_pmc_records(raw) if a.pmcid})
        missing = [p for p in wanted if p not in found]
        for start in range(0, len(missing), EFETCH_BATCH):
            batch = missing[start : start + EFETCH_BATCH]
            ids = ",".join(p[3:] for p in batch)
            records = self._call(
                "efetch.fcgi", {"db": "pmc", "id": ids, "retmode": "xml"}, lambda data: list(iter_pmc_records(data))
            )
            self._keep(records)
            found.update({a.pmcid: a for a, _ in records if a.pmcid in batch})
        return {p: found[p] for p in wanted if p in found}

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "EutilsClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ plumbing
    def _keep(self, records: list[tuple[Article, bytes]]) -> None:
        if self.store is not None and records:
            self.store.upsert(records)

    def _params(self, params: dict) -> dict:
        extra = {"tool": TOOL}
        if self.settings.ncbi_email:
            extra["email"] = self.settings.ncbi_email
        if self.settings.ncbi_api_key and self.settings.ncbi_api_key.get_secret_value():
            extra["api_key"] = self.settings.ncbi_api_key.get_secret_value()
        return {**params, **extra}

    def _wait(self, state: RetryCallState) -> float:
        s = self.settings
        backoff = wait_exponential_jitter(
            initial=s.cpqa_http_backoff, max=s.cpqa_http_backoff_max, jitter=s.cpqa_http_backoff / 2
        )(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            backoff = max(backoff, exc.retry_after)
        return min(backoff, s.cpqa_http_backoff_max)

    def _stop(self, state: RetryCallState) -> bool:
        """Stop when attempts run out, or when the server asks for a longer wait than we allow."""
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and (exc.retry_after or 0) > self.settings.cpqa_http_backoff_max:
            exc.reason += (
                f"; the server asked to wait {exc.retry_after:g}s, more than "
                f"cpqa_http_backoff_max={self.settings.cpqa_http_backoff_max:g}s"
            )
            return True
        return state.attempt_number > self.settings.cpqa_http_retries

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "E-utilities attempt %d failed (%s); retrying", state.attempt_number, self.settings.redact(str(exc))
        )

    def _call(self, endpoint: str, params: dict, parse: Callable[[bytes], T]) -> T:
        """One E-utilities call with rate limiting and retries; ``parse`` turns the body into the result."""
        retrying = Retrying(
            stop=self._stop,
            wait=self._wait,
            retry=retry_if_exception_type(_Retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(endpoint, params, parse)
        except _Retryable as exc:
            attempts = retrying.statistics.get("attempt_number", 1)
            cls = NCBIError if exc.malformed else NCBIUnavailable
            raise cls(
                self.settings.redact(
                    f"E-utilities {endpoint} failed after {attempts} attempt{'s' if attempts > 1 else ''}: {exc.reason}"
                )
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover (tenacity either returns or raises)

    def _attempt(self, endpoint: str, params: dict, parse: Callable[[bytes], T]) -> T:
        self.limiter.acquire()
        with self._count_lock:
            self.requests_made += 1
        url = self.base_url + endpoint
        try:
            if endpoint.startswith("efetch"):  # long ID lists: POST, as NCBI recommends
                reply = self._http.post(url, data=self._params(params))
            else:
                reply = self._http.get(url, params=self._params(params))
        except httpx.TimeoutException:
            raise _Retryable(f"timed out after {self.settings.cpqa_http_timeout:g}s") from None
        except httpx.TransportError as exc:  # refused, reset, truncated body (the exception text holds the URL)
            raise _Retryable(f"connection failed ({type(exc).__name__})") from None
        status = reply.status_code
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}", retry_after=parse_retry_after(reply.headers.get("Retry-After")))
        if status >= 400:
            raise NCBIError(
                self.settings.redact(f"E-utilities {endpoint} answered HTTP {status}: {_short(reply.content)}")
            )
        error = error_document(reply.content)
        if error is not None:
            if _TRANSIENT_ERROR.search(error) and not _PARAMETER_ERROR.search(error):  # "Search Backend failed"
                raise _Retryable(f"NCBI error {error!r}")
            raise NCBIError(self.settings.redact(f"E-utilities {endpoint} error: {error}"))
        try:
            return parse(reply.content)
        except ValueError as exc:  # XmlFormatError, or a record the parser cannot make sense of
            raise _Retryable(f"malformed XML ({str(exc)[:200]})", malformed=True) from None


def _short(body: bytes, limit: int = 200) -> str:
    """The start of an error body as one line (NCBI's JSON / XML error texts are short)."""
    text = body[: limit * 2].decode("utf-8", "replace")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()[:limit]
