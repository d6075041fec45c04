"""E2, the Boolean path: the rewrite's ladder of PubMed Boolean queries run on a term-search backend.

A backend is anything with ``search(term, retmax=..., retstart=..., mindate=..., maxdate=...) -> SearchResult``:
the local ``Store`` (SQLite FTS5, BM25 within a level), or ``EutilsClient`` on live NCBI or a mirror.
``ranking="ladder"`` (the paper's) runs the levels top down until ``min_docs`` PMIDs are found and keeps the
ladder's order: PMIDs from earlier, more specific levels first. ``ranking="weighted"`` keeps the same stop rule as a
depth budget but ranks the union by RRF over the levels' own BM25 rankings, level n weighing ``decay ** (n - 1)``.
``ranking="rrf"`` runs every level and fuses their rankings with equal weights (multi-query fusion of the ladder).
``ranking="bestmatch"`` (Best-Match-like, the default) keeps the budget and ranks the union by one field-weighted BM25
score of the question's words and MeSH headings (the bag-of-words level), normalised to the best hit, plus a bonus
for the most specific level that found the document (``level_bonus * decay ** (n - 1)``): specific levels count
more without always coming first. It needs a backend that scores (the local store); on E-utilities each level
already comes in PubMed's Best Match order (``sort=relevance``) and "bestmatch" ranks as "weighted". A level that
fails (bad expression, backend error) is recorded
with its error and skipped, so one bad level never loses the others; an unavailable service (``NCBIUnavailable``,
already retried with backoff) ends the ladder at once.

Which backend answers (``term_backend``): with the default NCBI URL, the local store in the offline profile, and
in ``auto`` when NCBI does not answer a short probe; otherwise E-utilities at ``CPQA_EUTILS_URL``.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol, Sequence


from cpqa.config import NCBI_EUTILS_URL, Settings
from cpqa.fusion import rrf_fuse
from cpqa.documents.path import DocumentPath, DocumentQuery, PathHits, year_window
from cpqa.options import DocumentOptions, LadderRanking
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.sources.ncbi import client as eutils
from cpqa.sources.ncbi.client import NCBIUnavailable
from cpqa.types import LadderLevel, SearchResult, StageLog

_TUNED = DocumentOptions()


class TermSearch(Protocol):
    def search(
        self, term: str, retmax: int = 20, retstart: int = 0, mindate: str | None = None, maxdate: str | None = None
    ) -> SearchResult: ...


class LadderResult(PathHits):
    """What E2 found: ranked unique PMIDs (score 1 / rank) and every level that ran."""

    path: str = "E2"
    last_level: int | None = None  # 1-based number of the last level that ran; None when none did
    ladder_size: int = 0


def run_ladder(
    ladder: Sequence[str],
    backend: TermSearch,
    *,
    min_docs: int = _TUNED.ladder_min_docs,
    retmax: int = _TUNED.ladder_retmax,
    mindate: str | None = None,
    maxdate: str | None = None,
    ranking: LadderRanking = "ladder",
    level_decay: float = _TUNED.ladder_level_decay,
    scorer: Callable[[list[str]], dict[str, float]] | None = None,
    level_bonus: float = _TUNED.ladder_level_bonus,
    rrf_k: int = _TUNED.ladder_rrf_k,
) -> LadderResult:
    """Run ``ladder`` on ``backend``: top down until ``min_docs`` PMIDs, in level order ("ladder", the paper's; the
    product's ranking is ``DocumentOptions.ladder_ranking``), fused with specific levels weighing more ("weighted") or
    scored by ``scorer`` plus a level bonus ("bestmatch"); or every level, fused ("rrf"). The other defaults are
    ``DocumentOptions``'."""
    if min_docs < 1 or retmax < 1:
        raise ValueError("min_docs and retmax must be at least 1")
    result = LadderResult(ladder_size=len(ladder), backend=type(backend).__name__)
    per_level: dict[str, list[str]] = {}
    seen: set[str] = set()
    pmids: list[str] = []
    for number, expression in enumerate(ladder, 1):
        level = LadderLevel(level=number, expression=expression)
        unavailable = False
        start = time.perf_counter()
        try:
            found = backend.search(expression, retmax=retmax, mindate=mindate, maxdate=maxdate)
        except Exception as exc:  # noqa: BLE001 - any backend failure costs one level, never the ladder
            level.error = f"{type(exc).__name__}: {exc}"[:300]
            unavailable = isinstance(exc, NCBIUnavailable)
            result.warn(f"ladder level {number} failed: {level.error}")
        else:
            level.count = found.count
            new = [p for p in found.pmids if p not in seen]
            seen.update(new)
            level.new_pmids = len(new)
            per_level[str(number)] = found.pmids
            pmids.extend(new)
        level.ms = (time.perf_counter() - start) * 1000.0
        result.levels.append(level)
        result.last_level = number
        if unavailable:  # the service is down after its own retries: the next levels would only wait the same way
            if number < len(ladder):
                result.warn(f"E-utilities unavailable: ladder levels {number + 1}-{len(ladder)} not tried")
            break
        if ranking != "rrf" and len(pmids) >= min_docs:
            break
    if ranking == "rrf":
        pmids = [pmid for pmid, _, _ in rrf_fuse(per_level, k=rrf_k)]
    elif ranking == "bestmatch" and scorer is not None and pmids:
        pmids = best_match_order(per_level, scorer(pmids), level_bonus, level_decay)
    elif ranking in ("weighted", "bestmatch"):
        weights = {level: level_decay ** (int(level) - 1) for level in per_level}
        pmids = [pmid for pmid, _, _ in rrf_fuse(per_level, k=rrf_k, weights=weights)]
    result.hits = [(pmid, 1.0 / rank) for rank, pmid in enumerate(pmids, 1)]
    return result


def best_match_order(
    per_level: dict[str, list[str]], scores: dict[str, float], level_bonus: float, level_decay: float
) -> list[str]:
    """The union of the levels' PMIDs by BM25 score / best score + ``level_bonus * level_decay ** (n - 1)``, n the
    most specific level that found the PMID; ties keep ladder order."""
    first_level: dict[str, int] = {}
    for level, pmids in per_level.items():
        for pmid in pmids:
            first_level.setdefault(pmid, int(level))
    best = max(scores.values(), default=0.0) or 1.0
    total = {
        pmid: scores.get(pmid, 0.0) / best + level_bonus * level_decay ** (level - 1)
        for pmid, level in first_level.items()
    }
    return sorted(first_level, key=lambda pmid: -total[pmid])


def uses_local_store(settings: Settings) -> bool:
    """The backend rule of the module docstring: True for the local store, False for E-utilities."""
    if settings.cpqa_eutils_url.rstrip("/") != NCBI_EUTILS_URL.rstrip("/") or settings.cpqa_profile == "paper":
        return False
    if settings.cpqa_profile == "offline":
        return True
    return not eutils.eutils_reachable(settings.cpqa_eutils_url, settings.cpqa_hub_timeout)


class BooleanLadderRetriever(DocumentPath):
    """E2 as a LlamaIndex retriever: the rewrite a ``DocumentQuery`` carries -> its ladder on the backend -> PMID
    nodes (score = 1 / rank; metadata path "E2", rank)."""

    name = "E2"

    def __init__(self, backend: TermSearch, options: DocumentOptions | None = None):
        super().__init__(options)
        self.backend = backend

    def hits(self, query: DocumentQuery, options: DocumentOptions) -> LadderResult:
        options = options or self.options
        rewrite = query.rewritten()
        first, last = year_window(options.years)
        log = StageLog()
        with log.stage("E2", backend=type(self.backend).__name__) as record:
            result = run_ladder(
                rewrite.ladder,
                self.backend,
                min_docs=options.ladder_min_docs,
                retmax=options.ladder_retmax,
                mindate=str(first) if first else None,
                maxdate=str(last) if last else None,
                ranking=options.ladder_ranking,
                level_decay=options.ladder_level_decay,
                scorer=self._scorer(rewrite, options),
                level_bonus=options.ladder_level_bonus,
                rrf_k=options.ladder_rrf_k,
            )
            record.info.update(levels=len(result.levels), hits=len(result.pmids), ranking=options.ladder_ranking)
        result.absorb(log)
        if not rewrite.ladder:
            result.error = "the rewrite produced no Boolean ladder"
        elif all(level.error for level in result.levels):
            result.error = f"every ladder level failed; first: {result.levels[0].error}"
        return result

    def _scorer(
        self, rewrite: RewriteResult, options: DocumentOptions
    ) -> Callable[[list[str]], dict[str, float]] | None:
        """Field-weighted BM25 of the question's words (the rewrite's bag-of-words level) on a backend that scores
        (the local store; its ranked pass starts now, beside the ladder); None on E-utilities, whose levels come in
        Best Match order already."""
        score_soon = getattr(self.backend, "score_soon", None)
        expression = rewrite.ranking or (rewrite.ladder[-1] if rewrite.ladder else "")
        if score_soon is None or not expression or options.ladder_ranking != "bestmatch":
            return None
        title, abstract, mesh = options.ladder_field_weights
        return score_soon(expression, weights=(title, abstract, abstract, mesh, mesh / 2, abstract / 2))  # FTS_COLUMNS


__all__ = ["BooleanLadderRetriever", "DocumentQuery", "LadderResult", "TermSearch", "run_ladder", "uses_local_store"]
