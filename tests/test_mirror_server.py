"""The mirror as a server under load and abuse: 200 simultaneous requests, slow clients, deadlines, malformed
HTTP and fuzzed parameters. Everything runs over real sockets against uvicorn on 127.0.0.1."""

from __future__ import annotations

import io
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from Bio import Entrez

from cpqa.sources.asgi_server import BackgroundASGIServer
from cpqa.sources.mirror import EutilsError, Mirror
from cpqa.sources.mirror_server import MirrorApp, MirrorServer
from cpqa.sources.ncbi.client import error_document
from cpqa.sources.store import Store

TERMS = [
    "cancer",
    "breast cancer AND tamoxifen",
    "lung AND smoking",
    "leukemia",
    "p53",
    "melanoma[ti]",
    "glioma OR glioblastoma",
    "prostate cancer AND 2010:2020[dp]",
]


@pytest.fixture(scope="module")
def mirror(sample_settings):
    with MirrorServer(sample_settings.store_path) as server:
        yield server


def _address(url: str) -> tuple[str, int]:
    host, port = url.split("//", 1)[1].rstrip("/").split(":")
    return host, int(port)


def raw_exchange(url: str, request: bytes, timeout: float = 10.0) -> bytes:
    """Send ``request`` as it is and read the answer until the server closes or a whole answer is in."""
    with socket.create_connection(_address(url), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                head, _, body = received.partition(b"\r\n\r\n")
                length = [
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                ]
                if length and len(body) >= length[0]:
                    break
        except ConnectionResetError:
            pass
        return received


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def test_two_hundred_simultaneous_requests_are_all_answered(mirror):
    start = threading.Barrier(200)

    def one(i: int) -> tuple[int, int]:
        start.wait()
        if i % 4 == 3:
            reply = httpx.post(mirror.url + "efetch.fcgi", data={"db": "pubmed", "id": "20000000,1"}, timeout=60)
            return reply.status_code, reply.content.count(b"<PubmedArticle>")
        reply = httpx.get(mirror.url + "esearch.fcgi", params={"term": TERMS[i % len(TERMS)], "retmax": 20}, timeout=60)
        if reply.status_code != 200:
            return reply.status_code, 0
        return reply.status_code, int(Entrez.read(io.BytesIO(reply.content))["Count"])

    with ThreadPoolExecutor(200) as pool:
        answers = list(pool.map(one, range(200)))
    assert [status for status, _ in answers] == [200] * 200
    assert all(count > 0 for i, (_, count) in enumerate(answers) if i % 4 != 3)


def _drip(url: str, stop: threading.Event, interval: float) -> None:
    """A slow client: a request line, then one header line every ``interval`` seconds, never the end."""
    with socket.create_connection(_address(url), timeout=30) as sock:
        sock.sendall(b"GET /esearch.fcgi?term=cancer HTTP/1.1\r\nHost: x\r\n")
        while not stop.wait(interval):
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:  # dropped at the header deadline: connect again, as a slowloris client would
                return _drip(url, stop, interval)


def test_slow_clients_do_not_keep_probes_waiting(sample_settings):
    with MirrorServer(sample_settings.store_path, workers=2) as server:  # fewer workers than slow clients
        stop = threading.Event()
        slow = [threading.Thread(target=_drip, args=(server.url, stop, 0.5), daemon=True) for _ in range(8)]
        for thread in slow:
            thread.start()
        time.sleep(1.0)
        waits = []
        try:
            for term in TERMS * 2:
                began = time.perf_counter()
                reply = httpx.get(server.url + "esearch.fcgi", params={"term": term}, timeout=5)
                waits.append(time.perf_counter() - began)
                assert reply.status_code == 200
        finally:
            stop.set()
        assert max(waits) < 1.0, waits


def test_a_client_dripping_its_headers_is_dropped_at_the_header_deadline(sample_settings):
    # A short header deadline of its own: the shared server keeps the default, since 200 client threads on two
    # cores can take more than a second between connecting and sending their headers.
    with (
        MirrorServer(sample_settings.store_path, header_timeout=1.0) as mirror,
        socket.create_connection(_address(mirror.url), timeout=10) as sock,
    ):
        began = time.monotonic()
        sock.sendall(b"GET /esearch.fcgi?term=cancer HTTP/1.1\r\nHost: x\r\n")
        received = b""
        while time.monotonic() - began < 5:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.2)
                sock.setblocking(False)
                received += sock.recv(1024)
            except BlockingIOError:
                pass
            except OSError:
                break
            finally:
                sock.setblocking(True)
            if received:
                break
    assert received.startswith(b"HTTP/1.1 408") and 0.9 < time.monotonic() - began < 3


class SlowMirror(Mirror):
    """The real request logic, delayed: stands for a store that takes too long."""

    def esearch(self, params: dict[str, str]) -> bytes:
        time.sleep(2.0)
        return super().esearch(params)


def test_the_request_deadline_covers_the_body_and_the_work(sample_settings):
    with (
        Store(sample_settings.store_path) as store,
        BackgroundASGIServer(MirrorApp(SlowMirror(store), deadline=0.5)) as server,
    ):
        url = server.base_url + "/"
        began = time.monotonic()
        reply = httpx.get(url + "esearch.fcgi", params={"term": "cancer"}, timeout=10)
        assert reply.status_code == 503 and reply.headers["retry-after"] == "1"
        assert time.monotonic() - began < 1.5
        partial = b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\ndb=pubmed&id=1"
        assert status_of(raw_exchange(url, partial)) == 408
        fetched = httpx.post(url + "efetch.fcgi", data={"db": "pubmed", "id": "20000000"}, timeout=10)
        assert fetched.status_code == 200  # efetch is not slowed: the server still answers


@pytest.mark.parametrize(
    "request_bytes,status",
    [
        (b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\nid=1", 400),
        (b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nid=1", 400),
        (b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nid=12", 400),
        (b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999\r\n\r\nid=1", 413),
        (
            b"POST /efetch.fcgi HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"".join(b"10000\r\n" + b"i" * 0x10000 + b"\r\n" for _ in range(20))
            + b"0\r\n\r\n",
            413,
        ),
        (b"GET /esearch.fcgi?" + b"&".join(b"p%d=1" % i for i in range(1500)) + b" HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET /esearch.fcgi?term=a\x00b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"GET /esearch.fcgi?term=x HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n", 400),
        (b"PUT /esearch.fcgi?term=x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        (b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        (b"GET /esearch.fcgi?term=%ff%fe%00&retmax=%C2%B2 HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        (b"GET /esearch.fcgi?term=cancer&retstart=99999999999999999999999 HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        (b"NOT-HTTP\r\n\r\n", 400),
    ],
)
def test_malformed_requests_get_a_4xx_never_a_500(mirror, request_bytes, status):
    reply = raw_exchange(mirror.url, request_bytes)
    assert status_of(reply) == status, reply[:300]
    assert httpx.get(mirror.url + "esearch.fcgi", params={"term": "cancer"}).status_code == 200  # still serving


def _fuzz_value(rng: random.Random) -> str:
    pieces = [
        '"',
        "(",
        ")",
        "[",
        "]",
        "*",
        ":",
        "AND",
        "OR",
        "NOT",
        " ",
        "tiab",
        "[mh]",
        "[dp]",
        "2020",
        "\u00b2",
        "\x00",
        "\x1f",
        "\u202e",
        "é",
        "\ud7ff",
        "%",
        "&",
        "=",
        "cancer",
        "breast",
        "-",
        "/",
        "\\",
        "'",
        "\t",
    ]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))


def test_fuzzed_parameters_give_results_or_ncbi_errors_never_exceptions(sample_settings, mirror):
    rng = random.Random(20261124)
    with Store(sample_settings.store_path) as store:
        logic = Mirror(store)
        for _ in range(600):
            params = {
                name: _fuzz_value(rng)
                for name in rng.sample(
                    ["term", "retmax", "retstart", "mindate", "maxdate", "sort", "db", "id", "datetype"],
                    rng.randint(1, 5),
                )
            }
            for handler in (logic.esearch, logic.efetch):
                try:
                    handler(params)
                except EutilsError:
                    pass
    for _ in range(60):  # and over HTTP, where the bytes pass through percent-encoding
        params = {"term": _fuzz_value(rng), "retmax": _fuzz_value(rng), "mindate": _fuzz_value(rng)}
        reply = httpx.get(mirror.url + "esearch.fcgi", params=params)
        assert reply.status_code == 200
        assert b"<Count>" in reply.content or error_document(reply.content)


def test_bench_mirror_reports_every_client_count(sample_home):
    from cpqa.evaluation.benchmarks.mirrorbench import run_mirror_bench

    report = run_mirror_bench(sample_home, [1, 4], seconds=1.0, warmup=0.2, workers=2)
    assert [run["clients"] for run in report["runs"]] == [1, 4]
    for run in report["runs"]:
        assert run["errors"] == 0 and run["requests"] > 0 and run["requests_per_s"] > 0
        assert 0 < run["p50_ms"] <= run["p95_ms"] <= run["p99_ms"]
    assert report["distinct_requests"] > 20


def test_kept_alive_connections_send_without_nagle_delay(mirror):
    """asyncio leaves TCP_NODELAY off on sockets bound with proto 0; a kept-alive client then waited 40 ms for
    every answer after its first (the body held behind the headers until its delayed ACK)."""
    with httpx.Client() as client:
        for _ in range(2):
            assert client.get(mirror.url + "esearch.fcgi", params={"term": "cancer"}).status_code == 200
        sockets = [p.transport.get_extra_info("socket") for p in mirror._server.server_state.connections]
        assert sockets and all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets)
