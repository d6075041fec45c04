"""The ladder executor: run Boolean levels in order on a term-search backend until enough documents.

A backend is anything with ``search(term, retmax=..., retstart=..., mindate=..., maxdate=...) ->
SearchResult`` (the local ``Store``, ``EutilsClient`` on live NCBI or the mirror). The ranking keeps the
ladder's order: PMIDs from earlier, more specific levels first, each level in the backend's own order
(BM25 on the local store, relevance on NCBI). A level that fails (bad expression, backend error) is
recorded with its error and skipped, so one bad level never loses the others; an unavailable service
(``NCBIUnavailable``, already retried with backoff) ends the ladder at once.
"""

from __future__ import annotations

import time
from typing import Protocol, Sequence

from pydantic import BaseModel, Field

from cpqa.sources.ncbi.client import NCBIUnavailable
from cpqa.types import LadderLevel, RetrievalTrace, SearchResult

DEFAULT_MIN_DOCS = 20


class TermSearch(Protocol):
    def search(self, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None,
               maxdate: str | None = None) -> SearchResult: ...


class LadderResult(BaseModel):
    pmids: list[str] = Field(default_factory=list)  # ranked, unique
    levels: list[LadderLevel] = Field(default_factory=list)  # the levels that ran
    last_level: int | None = None  # 1-based number of the last level that ran; None when none did


def run_ladder(ladder: Sequence[str], backend: TermSearch, *, min_docs: int = DEFAULT_MIN_DOCS, retmax: int = 100,
               mindate: str | None = None, maxdate: str | None = None,
               trace: RetrievalTrace | None = None) -> LadderResult:
    """Run ``ladder`` top down until ``min_docs`` unique PMIDs are found or the ladder ends."""
    if min_docs < 1 or retmax < 1:
        raise ValueError("min_docs and retmax must be at least 1")
    result = LadderResult()
    seen: set[str] = set()
    for number, expression in enumerate(ladder, 1):
        level = LadderLevel(level=number, expression=expression)
        unavailable = False
        start = time.perf_counter()
        try:
            found = backend.search(expression, retmax=retmax, mindate=mindate, maxdate=maxdate)
        except Exception as exc:  # noqa: BLE001 - any backend failure costs one level, never the ladder
            level.error = f"{type(exc).__name__}: {exc}"[:300]
            unavailable = isinstance(exc, NCBIUnavailable)
        else:
            level.count = found.count
            new = [p for p in found.pmids if p not in seen]
            seen.update(new)
            result.pmids.extend(new)
            level.new_pmids = len(new)
        level.ms = (time.perf_counter() - start) * 1000.0
        result.levels.append(level)
        result.last_level = number
        if trace is not None:
            trace.ladder.append(level)
            if level.error:
                trace.warn(f"ladder level {number} failed: {level.error}")
        if unavailable:  # the service is down after its own retries: the next levels would only wait the same way
            if trace is not None and number < len(ladder):
                trace.warn(f"E-utilities unavailable: ladder levels {number + 1}-{len(ladder)} not tried")
            break
        if len(result.pmids) >= min_docs:
            break
    return result
