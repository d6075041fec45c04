"""Concurrent questions sharing one pipeline of a reliability ``World``: answers, deadlock, the request rate the
E-utilities server saw, and the store afterwards."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Sequence

from pydantic import BaseModel

from cpqa.evaluation.evaluations.reliability import World, store_health
from cpqa.sources.ncbi.client import eutils_limiter
from cpqa.sources.ncbi.ratelimit import RateLimiter
from cpqa.testing.routes import fault_for

if TYPE_CHECKING:
    from cpqa.trace import Result

JITTER_WINDOW = 0.8  # seconds: the limiter spaces departures; on two busy cores a request's thread (client or
# server) may wait up to 200 ms for a core between leaving the limiter and being stamped at the server
LOAD_TOPIC_SIZE = 10  # records: few, so twenty cold questions at once stay cheap on two cores
LOAD_QUESTIONS = [
    f"{lead} {topic}?"
    for lead in (
        "What is known about",
        "What do studies say about",
        "How do researchers model",
        "What are recent findings on",
    )
    for topic in (
        "cancer metabolism",
        "tumour glucose metabolism",
        "metabolic models of cancer",
        "metabolism in cancer cells",
        "mathematical models of tumour growth",
    )
]


class LoadResult(BaseModel):
    questions: int
    concurrency: int
    answered: int
    deadlock: bool  # some question did not finish within the time limit
    errors: list[str]
    seconds: float
    ncbi_requests: int
    rate_limit_per_s: float
    peak_departures_per_s: int  # most requests the rate limiter let go in any 1 s window (what the client controls)
    peak_requests_per_s: int  # most requests the server saw in any 1 s window
    peak_tolerant: int  # the same over 0.8 s: 200 ms allowed for arrival jitter (threads waiting for a core)
    mean_requests_per_s: float  # over the span from the first to the last request
    store_rows: int
    duplicate_rows: int
    integrity_ok: bool


def peak_in_window(stamps: Sequence[float], window: float = 1.0) -> int:
    stamps = sorted(stamps)
    return max((sum(1 for s in stamps[i:] if s - start < window) for i, start in enumerate(stamps)), default=0)


def run_load(world: World, questions: Sequence[str] = tuple(LOAD_QUESTIONS), time_limit: float = 300.0) -> LoadResult:
    """All ``questions`` at once, one thread each, sharing ``world.pipeline``.

    One warm-up question first loads the models and segments the local records, with efetch failing so the
    held-out records are still missing when the concurrent questions start: they fetch and store them at once."""
    with world.ncbi.failing("efetch_pubmed", fault_for("efetch_pubmed", "5xx", world.settings.cpqa_http_timeout)):
        world.pipeline.ask(questions[0])
    answers: dict[int, Result] = {}
    errors: list[str] = []
    barrier = threading.Barrier(len(questions))

    def ask(i: int) -> None:
        barrier.wait()
        try:
            answers[i] = world.pipeline.ask(questions[i])
        except Exception as exc:  # noqa: BLE001 - counted as a lost question
            errors.append(world.settings.redact(f"{type(exc).__name__}: {exc}")[:200])

    since = len(world.ncbi.requests)
    threads = [threading.Thread(target=ask, args=(i,), daemon=True) for i in range(len(questions))]
    start = time.monotonic()
    with _departures(eutils_limiter(world.settings)) as departures:
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, time_limit - (time.monotonic() - start)))
    seconds = time.monotonic() - start
    stamps = [r.at for r in list(world.ncbi.requests)[since:]]
    rows, dupes, ok = store_health(world.store_path)
    return LoadResult(
        questions=len(questions),
        concurrency=len(threads),
        answered=sum(1 for r in answers.values() if r.answer.text),
        deadlock=any(t.is_alive() for t in threads),
        errors=errors,
        seconds=round(seconds, 2),
        ncbi_requests=len(stamps),
        rate_limit_per_s=world.settings.ncbi_rate_limit,
        peak_departures_per_s=peak_in_window(departures),
        peak_requests_per_s=peak_in_window(stamps),
        peak_tolerant=peak_in_window(stamps, JITTER_WINDOW),
        mean_requests_per_s=round((len(stamps) - 1) / max(1e-9, max(stamps) - min(stamps)), 2)
        if len(stamps) > 1
        else 0.0,
        store_rows=rows,
        duplicate_rows=dupes,
        integrity_ok=ok,
    )


@contextmanager
def _departures(limiter: RateLimiter) -> Iterator[list[float]]:
    """The times ``limiter`` let a caller go, recorded while the block runs."""
    stamps: list[float] = []
    acquire = limiter.acquire

    def recording() -> float:
        waited = acquire()
        stamps.append(time.monotonic())
        return waited

    limiter.acquire = recording  # type: ignore[method-assign]
    try:
        yield stamps
    finally:
        del limiter.acquire
