"""HSRDR: hybrid semantic real-time document retrieval.

E1 (semantic search over the vector index) and E2 (the rewrite's Boolean ladder on a term-search backend) run
concurrently. Their rankings merge by PMID (category E1, E2, or E3 when both found it) and fuse by reciprocal
rank fusion: ``rrf = sum_path weight_path / (rrf_k + rank_path)``. Records come from the store, else efetch.
Then the temporal filter, the abstract filter and the source choice run; every decision lands in the trace.

Sources: D1 PubMed abstract, D2 PMC review (full text fetched from PMC), D3 other PMC article (full text).
A candidate takes the most specific selected source it qualifies for (D2/D3 need a PMCID and the full text),
else D1 when D1 is selected, else it is dropped. Default D1+D2, the paper's best.

Term-search backend rule (``term_backend``): with the default NCBI URL, the local Store answers E2 (SQLite FTS5,
same Boolean syntax) in the offline profile, and in ``auto`` when NCBI does not answer a short probe; otherwise
``EutilsClient`` queries ``CPQA_EUTILS_URL`` (live NCBI, or a mirror such as ``cpqa mirror serve``). When one path fails the other still answers; ``trace.lost_paths``
says which path was lost and why.
"""

from __future__ import annotations

import datetime as _dt
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import BaseModel, Field

from cpqa.config import NCBI_EUTILS_URL, Settings
from cpqa.types import Article, Candidate, RetrievalTrace, Source

SOURCES: tuple[Source, ...] = ("D1", "D2", "D3")


class HSRDRConfig(BaseModel):
    # rrf_k 20 and a ladder that gathers 50 PMIDs were chosen on the BioASQ cancer dev questions (recall@10 0.717 ->
    # 0.758, MRR@10 0.846 -> 0.854 vs k 60 / 20 PMIDs) and leave PubMedQA unchanged; the sweep is in the README.
    e1_k: int = 100  # semantic hits taken into fusion
    min_docs: int = 50  # the ladder stops once this many PMIDs are found
    retmax: int = 100  # PMIDs per ladder level
    rrf_k: int = 20
    weights: dict[str, float] = Field(default_factory=lambda: {"E1": 1.0, "E2": 1.0})
    depth: int = 100  # ranks per path that enter fusion
    max_docs: int = 50  # kept candidates returned


def year_window(years: int | None = None, mindate: str | None = None, maxdate: str | None = None,
                today: _dt.date | None = None) -> tuple[int | None, int | None]:
    """(first, last) publication year allowed: ``years`` = the last N calendar years including this one."""
    if years is not None:
        if years < 1:
            raise ValueError("years must be at least 1")
        this = (today or _dt.date.today()).year
        return this - years + 1, this
    first = int(str(mindate)[:4]) if mindate else None
    last = int(str(maxdate)[:4]) if maxdate else None
    if first and last and first > last:
        raise ValueError(f"date range {mindate}..{maxdate} is empty")
    return first, last


def natural_source(article: Article) -> Source:
    """D2 for a PMC review, D3 for another PMC article, D1 otherwise."""
    if article.pmcid:
        return "D2" if article.is_review else "D3"
    return "D1"


def rrf_fuse(rankings: dict[str, Sequence[str]], *, rrf_k: int = 60, weights: dict[str, float] | None = None,
             depth: int | None = None) -> list[tuple[str, float, dict[str, int]]]:
    """(pmid, rrf, {path: 1-based rank}) sorted by rrf; ties keep the first path's order."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for path, pmids in rankings.items():
        weight = (weights or {}).get(path, 1.0)
        for rank, pmid in enumerate(pmids[:depth] if depth else pmids, 1):
            if path in ranks.setdefault(pmid, {}):
                continue
            ranks[pmid][path] = rank
            scores[pmid] = scores.get(pmid, 0.0) + weight / (rrf_k + rank)
    order = sorted(scores, key=lambda p: -scores[p])
    return [(p, scores[p], ranks[p]) for p in order]


def category(ranks: dict[str, int]) -> str:
    return "E3" if len(ranks) > 1 else next(iter(ranks))


def uses_local_store(settings: Settings) -> bool:
    """The E2 rule (see the module docstring): the local Store, or E-utilities at CPQA_EUTILS_URL."""
    if settings.cpqa_eutils_url.rstrip("/") != NCBI_EUTILS_URL.rstrip("/") or settings.cpqa_profile == "paper":
        return False
    if settings.cpqa_profile == "offline":
        return True
    from cpqa.sources.ncbi.client import eutils_reachable

    return not eutils_reachable(settings.cpqa_eutils_url, settings.cpqa_hub_timeout)


def term_backend(settings: Settings, store, client=None):
    """The E2 backend under the rule of ``uses_local_store``."""
    return store if uses_local_store(settings) else client


class HSRDR:
    """Holds the store, semantic search and E-utilities client across questions (thread-safe to share)."""

    def __init__(self, settings: Settings, *, store=None, semantic=None, client=None, config: HSRDRConfig | None = None):
        from cpqa.documents.semantic import SemanticSearch
        from cpqa.sources.store import Store

        self.settings = settings
        self.config = config or HSRDRConfig()
        self._own_store = store is None
        self.store = store if store is not None else Store(settings.store_path)
        self.semantic = semantic if semantic is not None else SemanticSearch(settings)
        self.client = client
        self._own_client = client is None and not uses_local_store(settings)
        if self._own_client:
            from cpqa.sources.ncbi.client import EutilsClient

            self.client = EutilsClient(settings, self.store)
        self.terms = term_backend(settings, self.store, self.client)

    def close(self) -> None:
        if self._own_client:
            self.client.close()
        if self._own_store:
            self.store.close()

    # ------------------------------------------------------------ the two paths
    def _e1(self, query: str, trace: RetrievalTrace) -> list[tuple[str, float]]:
        with trace.stage("E1", k=self.config.e1_k) as rec:
            hits = self.semantic.search(query, k=self.config.e1_k)
            rec.info["hits"] = len(hits)
        trace.use_model(self.semantic.choice)
        return hits

    def _e2(self, ladder: Sequence[str], first: int | None, last: int | None, trace: RetrievalTrace) -> list[str]:
        from cpqa.documents.boolean_search import run_ladder

        with trace.stage("E2", backend=type(self.terms).__name__) as rec:
            if not ladder:
                raise ValueError("the rewrite produced no Boolean ladder")
            result = run_ladder(ladder, self.terms, min_docs=self.config.min_docs, retmax=self.config.retmax,
                                mindate=str(first) if first else None, maxdate=str(last) if last else None,
                                trace=trace)
            rec.info.update(levels=len(result.levels), hits=len(result.pmids))
        if result.levels and all(level.error for level in result.levels):
            raise RuntimeError(f"every ladder level failed; first: {result.levels[0].error}")
        return result.pmids

    # ------------------------------------------------------------ the whole retrieval
    def retrieve(self, question: str, rewrite, *, years: int | None = None, mindate: str | None = None,
                 maxdate: str | None = None, sources: Sequence[str] = ("D1", "D2"),
                 trace: RetrievalTrace | None = None) -> list[tuple[Candidate, Article]]:
        trace = trace if trace is not None else RetrievalTrace(question=question)
        sources = tuple(sources)
        bad = [s for s in sources if s not in SOURCES]
        if bad or not sources:
            raise ValueError(f"sources must be a non-empty subset of {SOURCES}, got {sources}")
        first, last = year_window(years, mindate, maxdate)
        query = (getattr(rewrite, "search_intent", "") or question).strip() or question
        cfg = self.config
        trace.options.update(sources=list(sources), years=years, year_window=[first, last], rrf_k=cfg.rrf_k,
                             weights=cfg.weights, depth=cfg.depth, term_backend=type(self.terms).__name__)
        requests_before = getattr(self.client, "requests_made", 0)

        rankings: dict[str, list[str]] = {}
        semantic_scores: dict[str, float] = {}
        with trace.stage("hsrdr_paths"), ThreadPoolExecutor(max_workers=2) as pool:
            jobs = {"E1": pool.submit(self._e1, query, trace),
                    "E2": pool.submit(self._e2, list(getattr(rewrite, "ladder", []) or []), first, last, trace)}
            for path, job in jobs.items():
                try:
                    found = job.result()
                except Exception as exc:  # noqa: BLE001 - a lost path is recorded, the other still answers
                    reason = self.settings.redact(f"{type(exc).__name__}: {exc}")[:400]
                    trace.lost_paths[path] = reason
                    trace.warn(f"{path} path lost: {reason}")
                    continue
                if path == "E1":
                    rankings["E1"] = [p for p, _ in found]
                    semantic_scores = dict(found)
                else:
                    rankings["E2"] = found

        with trace.stage("fuse") as rec:
            fused = rrf_fuse(rankings, rrf_k=cfg.rrf_k, weights=cfg.weights, depth=cfg.depth)
            rec.info["candidates"] = len(fused)
        articles = self._records([p for p, _, _ in fused], trace)
        kept: list[tuple[Candidate, Article]] = []
        with trace.stage("filter") as rec:
            for pmid, score, ranks in fused:
                cand = Candidate(pmid=pmid, category=category(ranks), rrf=round(score, 6),
                                 semantic_score=semantic_scores.get(pmid), semantic_rank=ranks.get("E1"),
                                 boolean_rank=ranks.get("E2"))
                article = articles.get(pmid)
                reason = self._decide(cand, article, first, last, sources) if len(kept) < cfg.max_docs \
                    else "beyond max_docs"
                if reason:
                    cand.kept, cand.dropped_reason = False, reason
                else:
                    body = self._full_text(cand, article, trace) if cand.source != "D1" else None
                    kept.append((cand, body or article.model_copy(update={"body_sections": []})))
                trace.candidates.append(cand)
            rec.info.update(kept=len(kept), dropped=len(fused) - len(kept))
        trace.ncbi_requests += getattr(self.client, "requests_made", 0) - requests_before
        return kept

    def _records(self, pmids: list[str], trace: RetrievalTrace) -> dict[str, Article]:
        with trace.stage("records") as rec:
            found = self.store.get_many(pmids)
            missing = [p for p in pmids if p not in found]
            rec.info.update(from_store=len(found), missing=len(missing))
            if missing and self.client is not None:
                try:
                    found.update(self.client.fetch_pubmed(missing))
                except Exception as exc:  # noqa: BLE001 - records we cannot fetch are dropped, with the reason
                    trace.warn(self.settings.redact(f"efetch failed for {len(missing)} records: {exc}")[:400])
        return found

    def _decide(self, cand: Candidate, article: Article | None, first: int | None, last: int | None,
                sources: tuple[str, ...]) -> str | None:
        """Fill the candidate from its record; the reason it is dropped, or None to keep it."""
        if article is None:
            return "record unavailable"
        cand.title, cand.year, cand.journal, cand.pmcid = article.title, article.year, article.journal, article.pmcid
        if first or last:
            if article.year is None:
                return "no publication year (temporal filter)"
            if (first and article.year < first) or (last and article.year > last):
                return f"published {article.year}, outside {first or ''}-{last or ''}"
        if not article.has_abstract:
            return "no abstract"
        natural = natural_source(article)
        if natural in sources and natural != "D1":
            cand.source = natural
        elif "D1" in sources:
            cand.source = "D1"
        else:
            return f"source {natural} not selected"
        return None

    def _full_text(self, cand: Candidate, article: Article, trace: RetrievalTrace) -> Article | None:
        """The PMC full text for a D2/D3 candidate; None (the abstract, as D1) when it cannot be had."""
        if article.has_full_text:
            return article
        full, failure = None, ""
        if article.pmcid:
            full = self.store.get_by_pmcid(article.pmcid)
            if (full is None or not full.has_full_text) and self.client is not None:
                try:
                    full = self.client.fetch_pmc([article.pmcid]).get(article.pmcid)
                except Exception as exc:  # noqa: BLE001 - recorded in the trace below
                    full, failure = None, f" (efetch failed: {type(exc).__name__}: {exc})"
        if full is not None and full.has_full_text:
            return article.model_copy(update={"body_sections": full.body_sections,
                                              "article_type": full.article_type or article.article_type})
        cand.source = "D1"
        trace.warn(self.settings.redact(f"full text of {article.pmcid} (PMID {cand.pmid}) unavailable{failure}: "
                                        "its abstract is used (D1)")[:400])
        return None


def retrieve_documents(question: str, rewrite, *, settings: Settings, years: int | None = None,
                       sources: Sequence[str] = ("D1", "D2"), trace: RetrievalTrace,
                       engine: HSRDR | None = None, **dates: Any) -> list[tuple[Candidate, Article]]:
    """One HSRDR retrieval; pass ``engine`` to reuse the store, encoder and index across questions."""
    own = engine is None
    engine = engine or HSRDR(settings)
    try:
        return engine.retrieve(question, rewrite, years=years, sources=sources, trace=trace, **dates)
    finally:
        if own:
            engine.close()


def article_node(candidate: Candidate, article: Article):
    """A LlamaIndex TextNode for one retrieved document (title + abstract, or the full text for D2/D3)."""
    parts = [article.title, article.abstract]
    if candidate.source != "D1":
        parts += [p for s in article.body_sections for p in ([s.title] if s.title else []) + s.paragraphs]
    metadata = {"pmid": candidate.pmid, "pmcid": candidate.pmcid, "source": candidate.source,
                "category": candidate.category, "title": article.title, "year": article.year,
                "journal": article.journal, "rrf": candidate.rrf}
    return TextNode(id_=f"pmid:{candidate.pmid}", text="\n\n".join(p for p in parts if p), metadata=metadata,
                    excluded_embed_metadata_keys=list(metadata), excluded_llm_metadata_keys=["rrf", "category"])


class HSRDRRetriever(BaseRetriever):
    """HSRDR as a LlamaIndex retriever: query -> rewrite -> E1 + E2 -> fused documents as nodes (score = RRF).
    The trace of the latest call is ``last_trace``."""

    def __init__(self, engine: HSRDR, rewriter=None, *, years: int | None = None,
                 sources: Sequence[str] = ("D1", "D2"), **kwargs: Any):
        super().__init__(**kwargs)
        if rewriter is None:
            from cpqa.rewrite.rewriter import Rewriter

            rewriter = Rewriter(engine.settings, llm=None)
        self.engine, self.rewriter, self.years, self.sources = engine, rewriter, years, tuple(sources)
        self.last_trace: RetrievalTrace | None = None

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        question = query_bundle.query_str
        trace = RetrievalTrace(question=question)
        rewrite = self.rewriter.rewrite(question)
        trace.search_intent = rewrite.search_intent
        docs = self.engine.retrieve(question, rewrite, years=self.years, sources=self.sources, trace=trace)
        self.last_trace = trace
        return [NodeWithScore(node=article_node(c, a), score=c.rrf) for c, a in docs]
