"""The E-utilities client under fault injection (429, 5xx, slow, truncated, malformed, refused), its rate
limiter across threads, and its etiquette; all over real HTTP on 127.0.0.1."""

from __future__ import annotations

import email.utils
import threading
import time

import pytest

from cpqa.config import get_settings
from cpqa.sources.ncbi.client import (
    EutilsClient,
    NCBIError,
    NCBIUnavailable,
    normalize_pmcids,
    normalize_pmids,
    parse_retry_after,
)
from cpqa.sources.ncbi.ratelimit import RateLimiter, shared_limiter
from cpqa.testing.faulty_server import Fault, FaultyServer, closed_port_url

KEY = "NCBI-SECRET-KEY-0123456789"
ONE_HIT = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><Count>1</Count><RetMax>1</RetMax>'
    b"<RetStart>0</RetStart><IdList><Id>123</Id></IdList><TranslationSet/>"
    b"<QueryTranslation>x</QueryTranslation></eSearchResult>"
)


def fast_settings(url: str, **overrides):
    values = dict(
        cpqa_eutils_url=url,
        cpqa_http_timeout=0.3,
        cpqa_http_retries=2,
        cpqa_http_backoff=0.02,
        cpqa_http_backoff_max=1.0,
        cpqa_eutils_rate=0,
        ncbi_api_key=KEY,
        ncbi_email="dev@example.org",
    )
    values.update(overrides)
    return get_settings(**values)


@pytest.fixture
def faulty(home):
    with FaultyServer() as server:  # no upstream: an unscripted request gets NCBI's zero-hit answer
        yield server


@pytest.fixture
def client(faulty):
    with EutilsClient(fast_settings(faulty.url)) as c:
        yield c


def ok() -> Fault:
    return Fault("reply", body=ONE_HIT, headers={"Content-Type": "text/xml"})


def test_search_sends_etiquette_and_date_limits(faulty, client):
    faulty.script(ok())
    result = client.search("breast cancer", retmax=5, retstart=10, mindate=2015, maxdate="2020/06")
    assert result.count == 1 and result.pmids == ["123"] and result.query_translation == "x"
    params = {k: v[0] for k, v in faulty.requests[0].params.items()}
    assert faulty.requests[0].path.endswith("/esearch.fcgi")
    assert params == {
        "db": "pubmed",
        "term": "breast cancer",
        "retmax": "5",
        "retstart": "10",
        "sort": "relevance",
        "retmode": "xml",
        "datetype": "pdat",
        "mindate": "2015",
        "maxdate": "2020/06",
        "tool": "cpqa",
        "email": "dev@example.org",
        "api_key": KEY,
    }
    assert client.requests_made == 1


def test_zero_hits_is_an_answer_with_ncbi_warnings(faulty, client):
    result = client.search("abcXYZ")
    assert result.count == 0 and result.pmids == []
    assert "PhraseNotFound: abcXYZ" in result.warnings and "OutputMessage: No items found." in result.warnings


def test_retry_after_is_honoured_on_429(faulty, client):
    faulty.script(Fault.rate_limited(retry_after=0.4), ok())
    assert client.search("x").pmids == ["123"]
    first, second = faulty.timestamps
    assert second - first >= 0.38
    assert client.requests_made == 2


def test_a_retry_after_beyond_the_cap_fails_at_once(faulty, client):
    faulty.script(Fault.rate_limited(retry_after=120))
    with pytest.raises(NCBIUnavailable, match=r"after 1 attempt: HTTP 429; the server asked to wait 120s"):
        client.search("x")
    assert client.requests_made == 1


def test_retry_after_as_seconds_or_http_date():
    assert parse_retry_after("2") == 2.0 and parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27 <= parse_retry_after(later) <= 31


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried(faulty, client, status):
    faulty.script(Fault.status_code(status), Fault.status_code(status), ok())
    assert client.search("x").count == 1
    assert client.requests_made == 3


def test_retries_back_off_then_fail_clearly_without_the_key(faulty, home):
    faulty.script(*[Fault.status_code(503) for _ in range(4)])
    client = EutilsClient(fast_settings(faulty.url, cpqa_http_backoff=0.1))
    with pytest.raises(NCBIUnavailable, match=r"esearch.fcgi failed after 3 attempts: HTTP 503") as err:
        client.search("x")
    assert KEY not in str(err.value) and err.value.__cause__ is None
    t = faulty.timestamps
    assert len(t) == 3
    assert t[1] - t[0] >= 0.1 and t[2] - t[1] >= 0.2  # exponential: 0.1, then 0.2 (+ jitter)


def test_slower_than_the_timeout_is_retried_then_unavailable(faulty, client):
    faulty.script(*[Fault.slow(1.0, then=ok()) for _ in range(3)])
    with pytest.raises(NCBIUnavailable, match="timed out after 0.3s"):
        client.search("x")
    assert client.requests_made == 3


def test_truncated_body_is_retried(faulty, client):
    faulty.script(Fault.truncated(ONE_HIT), ok())
    assert client.search("x").pmids == ["123"]
    assert client.requests_made == 2


def test_malformed_xml_is_retried_then_a_clear_error(faulty, client):
    faulty.script(Fault.malformed(), Fault.malformed(), Fault.malformed())
    with pytest.raises(NCBIError, match="malformed XML") as err:
        client.search("x")
    assert not isinstance(err.value, NCBIUnavailable)
    assert client.requests_made == 3


def test_client_errors_and_ncbi_error_documents_are_not_retried(faulty, client):
    faulty.script(Fault.status_code(400, body=b'{"error":"bad api_key NCBI-SECRET-KEY-0123456789"}'))
    with pytest.raises(NCBIError, match="HTTP 400") as err:
        client.search("x")
    assert KEY not in str(err.value) and "[REDACTED]" in str(err.value)
    faulty.script(Fault("reply", body=b"<eSearchResult><ERROR>Invalid query</ERROR></eSearchResult>"))
    with pytest.raises(NCBIError, match="esearch.fcgi error: Invalid query"):
        client.search("x")
    faulty.script(Fault("reply", body=b"<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>"))
    with pytest.raises(NCBIError, match="efetch.fcgi error: Empty id list"):
        client.fetch_pubmed(["1"])
    assert client.requests_made == 3


def test_ncbi_backend_failures_are_retried(faulty, client):
    failed = b"<eSearchResult><ERROR>Search Backend failed: Couldn't resolve #tsv-3</ERROR></eSearchResult>"
    faulty.script(Fault("reply", body=failed), ok())
    assert client.search("x").pmids == ["123"] and client.requests_made == 2


def test_connection_refused_is_unavailable(home):
    client = EutilsClient(fast_settings(closed_port_url()))
    with pytest.raises(NCBIUnavailable, match="connection failed") as err:
        client.search("x")
    assert client.requests_made == 3 and KEY not in str(err.value)


def test_bad_input_is_refused_before_any_request(client):
    with pytest.raises(ValueError, match="empty search term"):
        client.search("  ")
    with pytest.raises(ValueError, match="not a PMID"):
        client.fetch_pubmed(["123", "12a"])
    assert normalize_pmids([1, "2", " 1 "]) == ["1", "2"]
    assert normalize_pmcids(["pmc12", "12", 7]) == ["PMC12", "PMC7"]
    assert client.requests_made == 0


def test_limiter_spaces_requests_across_threads():
    limiter = RateLimiter(20)
    stamps: list[float] = []
    lock = threading.Lock()

    def worker():
        for _ in range(3):
            limiter.acquire()
            with lock:
                stamps.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max_in_window(stamps, 0.5 - 0.02) <= 10  # 20/s: at most 10 in any half second
    assert max(stamps) - min(stamps) >= 17 / 20 - 0.02
    assert RateLimiter(0).acquire() == 0.0
    assert shared_limiter("http://x/", 3) is shared_limiter("http://x/", 10)
    with pytest.raises(ValueError):
        RateLimiter(-1)


def max_in_window(stamps: list[float], window: float) -> int:
    stamps = sorted(stamps)
    return max(sum(1 for s in stamps[i:] if s - start < window) for i, start in enumerate(stamps))


@pytest.mark.parametrize("with_key,rate,shared", [(True, 10, True), (True, 10, False), (False, 3, False)])
def test_concurrent_calls_never_exceed_ncbi_rate_at_the_server(faulty, with_key, rate, shared):
    """Threads sharing one client, or each with its own client on the same base URL, share NCBI's budget
    (10/s with a key, 3/s without), measured at the server."""
    settings = fast_settings(faulty.url, cpqa_eutils_rate=None, ncbi_api_key=KEY if with_key else None)
    assert settings.ncbi_rate_limit == rate
    calls = 2 * rate + 1
    common = EutilsClient(settings)
    clients = [common if shared else EutilsClient(settings) for _ in range(calls)]
    barrier = threading.Barrier(calls)

    def worker(c: EutilsClient):
        barrier.wait()
        c.search("x")

    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in {id(c): c for c in clients}.values():
        c.close()
    assert len(faulty.timestamps) == calls
    assert max_in_window(faulty.timestamps, 1.0 - 0.1) <= rate  # 100 ms tolerance for arrival jitter
    assert time.monotonic() - start >= (calls - 1) / rate - 0.05
