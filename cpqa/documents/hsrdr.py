"""HSRDR: hybrid semantic real-time document retrieval, a LlamaIndex retriever composed of E1 and E2.

E1 (``SemanticRetriever``) and E2 (``BooleanLadderRetriever``) run concurrently on the same ``DocumentQuery``, with
plain BM25 (``Bm25Retriever``) as an optional third path; each is a ``DocumentPath`` returning ``PathHits``, so HSRDR
composes them without knowing which is which. Their rankings merge by PMID (category E1 when only
semantic search found it, E2 when only lexical search did, E3 when both did) and fuse by reciprocal rank fusion:
``rrf = sum_path weight_path / (rrf_k + rank_path)``; a path of weight 0 does not run. Records come from the store,
else efetch. Then the temporal filter, the abstract filter and the source choice run, and, when asked
(``rerank_records``, off by default) where E1 runs offline, the record reranker trained here reorders the first kept
records (``cpqa.documents.record_rerank``); every decision is in the returned ``DocumentSearch``.

Sources: D1 PubMed abstract, D2 PMC review (full text fetched from PMC), D3 other PMC article (full text).
A candidate takes the most specific selected source it qualifies for (D2/D3 need a PMCID and the full text),
else D1 when D1 is selected, else it is dropped. Default D1+D2, the paper's best. When one path fails the other
still answers; ``lost_paths`` says which path was lost and why.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Protocol, Sequence

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import Field, SkipValidation

from cpqa.fusion import rrf_fuse
from cpqa.documents.nodes import document_node
from cpqa.documents.record_rerank import RecordReranker
from cpqa.documents.path import DocumentPath, DocumentQuery, PathHits, as_document_query, retrieved, year_window
from cpqa.documents.study_type import EXCLUDED, evidence_type
from cpqa.options import DocumentOptions
from cpqa.types import Article, Candidate, ComponentChoice, LadderLevel, PatientHit, RetrievedDocument, Source, StageLog

SOURCES: tuple[Source, ...] = ("D1", "D2", "D3")  # what HSRDR searches: PubMed and PMC
PATIENT_INFORMATION: Source = "D4"  # NIH patient pages, searched beside HSRDR (cpqa.documents.patient_search)


class RecordStore(Protocol):
    """The local records HSRDR reads (``cpqa.sources.store.Store``)."""

    def get_many(self, pmids: Sequence[str]) -> dict[str, Article]: ...

    def get_by_pmcid(self, pmcid: str) -> Article | None: ...


class RecordFetcher(Protocol):
    """Fetches what the store lacks (``cpqa.sources.ncbi.client.EutilsClient``)."""

    requests_made: int

    def fetch_pubmed(self, pmids: Sequence[str]) -> dict[str, Article]: ...

    def fetch_pmc(self, pmcids: Sequence[str]) -> dict[str, Article]: ...


class DocumentSearch(StageLog):
    """Everything stage 3 decided for one query: HSRDR's documents and the patient sections found beside them."""

    query: SkipValidation[DocumentQuery | None] = Field(default=None, exclude=True, repr=False)  # what was asked
    documents: list[RetrievedDocument] = Field(default_factory=list)  # kept, best first
    patient: list[PatientHit] = Field(default_factory=list)  # NIH patient sections (D4), when searched
    candidates: list[Candidate] = Field(default_factory=list)  # every fused candidate, kept or dropped
    ladder: list[LadderLevel] = Field(default_factory=list)
    lost_paths: dict[str, str] = Field(default_factory=dict)
    semantic_model: ComponentChoice | None = None
    record_reranker: str | None = None  # the model that reordered the first kept records, when one did
    term_backend: str = ""
    year_window: tuple[int | None, int | None] = (None, None)
    ncbi_requests: int = 0

    @property
    def pmids(self) -> list[str]:
        return [d.candidate.pmid for d in self.documents]


def natural_source(article: Article) -> Source:
    """D2 for a PMC review, D3 for another PMC article, D1 otherwise."""
    if article.pmcid:
        return "D2" if article.is_review else "D3"
    return "D1"


def category(ranks: dict[str, int]) -> str:
    """E1 semantic only, E2 lexical only (the Boolean ladder and/or BM25), E3 both."""
    semantic, lexical = "E1" in ranks, bool(ranks.keys() - {"E1"})
    return "E3" if semantic and lexical else "E1" if semantic else "E2"


class HSRDRRetriever(BaseRetriever):
    """HSRDR as a LlamaIndex retriever (query -> fused, filtered documents as nodes, score = RRF); ``search``
    gives the whole typed result. Thread-safe to share: per-query state lives in the result."""

    def __init__(
        self,
        paths: Sequence[DocumentPath],
        store: RecordStore,
        fetcher: RecordFetcher | None,
        *,
        options: DocumentOptions | None = None,
        redact: Callable[[str], str] = str,
        reranker: RecordReranker | None = None,
    ):
        """``paths`` by their names; ``redact`` keeps keys out of the warnings a failure writes; ``reranker``
        reorders the first kept records (``rerank_records``). A query carries its rewrite (``DocumentQuery.rewrite``:
        the rewrite stage's result; ``Pipeline.query_for`` makes one): the search never rewrites a question itself."""
        super().__init__()
        self.paths = {path.name: path for path in paths}
        self.store, self.fetcher, self.redact, self.reranker = store, fetcher, redact, reranker
        self.options = options or DocumentOptions()

    def search(self, query: str | QueryBundle, options: DocumentOptions | None = None) -> DocumentSearch:
        """The whole typed result for ``query``, asked through LlamaIndex's ``retrieve()``."""
        return retrieved(self, query, options)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = as_document_query(query_bundle)
        query.found = found = self._search(query, query.options or self.options)
        return [document_node(d.candidate, d.article) for d in found.documents]

    def _search(self, query: DocumentQuery, options: DocumentOptions) -> DocumentSearch:
        query.rewritten()  # E2 and the record need the rewrite stage's result
        bad = [s for s in options.sources if s not in (*SOURCES, PATIENT_INFORMATION)]
        if bad:
            raise ValueError(f"sources must be a non-empty subset of {(*SOURCES, PATIENT_INFORMATION)}, got {bad}")
        first, last = year_window(options.years)
        result = DocumentSearch(year_window=(first, last))
        if not any(s in SOURCES for s in options.sources):  # patient information alone: no PubMed search
            return result
        requests_before = getattr(self.fetcher, "requests_made", 0)
        rankings, scores = self._paths(query, options, result)
        with result.stage("fuse") as record:
            fused = rrf_fuse(rankings, k=options.rrf_k, weights=options.weights, depth=options.fusion_depth)
            record.info["candidates"] = len(fused)
        articles = self._records([pmid for pmid, _, _ in fused], result)
        with result.stage("filter") as record:
            for pmid, score, ranks in fused:
                candidate = Candidate(
                    pmid=pmid,
                    category=category(ranks),
                    rrf=round(score, 6),
                    semantic_rank=ranks.get("E1"),
                    boolean_rank=ranks.get("E2"),
                    bm25_rank=ranks.get("BM25"),
                    semantic_score=scores.get("E1", {}).get(pmid),
                )
                result.candidates.append(candidate)
                article = articles.get(pmid)
                reason = (
                    self._decide(candidate, article, first, last, options.sources)
                    if len(result.documents) < options.max_docs
                    else "beyond max_docs"
                )
                if reason:
                    candidate.kept, candidate.dropped_reason = False, reason
                    continue
                assert article is not None  # _decide drops a candidate without a record
                body = self._full_text(candidate, article, result) if candidate.source != "D1" else None
                result.documents.append(
                    RetrievedDocument(
                        candidate=candidate, article=body or article.model_copy(update={"body_sections": []})
                    )
                )
            record.info.update(kept=len(result.documents), dropped=len(fused) - len(result.documents))
        paper = result.semantic_model is not None and result.semantic_model.profile == "paper"
        if self.reranker is not None and not paper and options.rerank_records > 1 and len(result.documents) > 1:
            with result.stage("record_rerank") as record:
                result.documents = self.reranker.rerank(query.query_str, result.documents, options)
                record.info["records"] = min(options.rerank_records, len(result.documents))
            result.record_reranker = self.reranker.name
        withdrawn = [c.pmid for c in result.candidates if c.evidence_type in EXCLUDED]
        if withdrawn:
            result.warn(
                f"{len(withdrawn)} retracted publication(s) or retraction notice(s) excluded "
                f"(PMID {', '.join(withdrawn)})"
            )
        result.ncbi_requests = getattr(self.fetcher, "requests_made", 0) - requests_before
        return result

    # ------------------------------------------------------------ the two paths
    def _paths(
        self, query: DocumentQuery, options: DocumentOptions, result: DocumentSearch
    ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
        """The paths of non-zero weight concurrently: their rankings and scores by path name. A failed path is
        recorded in ``lost_paths`` and the others still answer."""
        unknown = sorted(set(options.weights) - set(self.paths))
        if any(options.weights[path] > 0 for path in unknown):
            raise ValueError(f"{', '.join(unknown)} weighted above 0 but this HSRDR has no such path")
        active = {name: path for name, path in self.paths.items() if options.weights.get(name, 0.0) > 0}
        if not active:
            raise ValueError("every path has weight 0")
        rankings: dict[str, list[str]] = {}
        scores: dict[str, dict[str, float]] = {}
        with result.stage("hsrdr_paths"), ThreadPoolExecutor(max_workers=len(active)) as pool:
            jobs: dict[str, Future[PathHits]] = {
                name: pool.submit(p.search, query, options) for name, p in active.items()
            }
            for name, job in jobs.items():
                try:
                    found = job.result()
                except Exception as exc:  # noqa: BLE001 - a lost path is recorded, the other still answers
                    self._lose(result, name, f"{type(exc).__name__}: {exc}")
                    continue
                result.absorb(found)
                result.ladder.extend(found.levels)
                result.semantic_model = found.model or result.semantic_model
                result.term_backend = found.backend or result.term_backend
                if found.error:
                    self._lose(result, name, found.error)
                    continue
                rankings[name], scores[name] = found.pmids, dict(found.hits)
        return rankings, scores

    def _lose(self, result: DocumentSearch, path: str, why: str) -> None:
        reason = self.redact(why)[:400]
        result.lost_paths[path] = reason
        result.warn(f"{path} path lost: {reason}")

    # ------------------------------------------------------------ records and filters
    def _records(self, pmids: list[str], result: DocumentSearch) -> dict[str, Article]:
        with result.stage("records") as record:
            found = self.store.get_many(pmids)
            missing = [p for p in pmids if p not in found]
            record.info.update(from_store=len(found), missing=len(missing))
            if missing and self.fetcher is not None:
                try:
                    found.update(self.fetcher.fetch_pubmed(missing))
                except Exception as exc:  # noqa: BLE001 - records we cannot fetch are dropped, with the reason
                    result.warn(self.redact(f"efetch failed for {len(missing)} records: {exc}")[:400])
        return found

    @staticmethod
    def _decide(
        candidate: Candidate, article: Article | None, first: int | None, last: int | None, sources: Sequence[str]
    ) -> str | None:
        """Fill the candidate from its record; the reason it is dropped, or None to keep it."""
        if article is None:
            return "record unavailable"
        candidate.title, candidate.year = article.title, article.year
        candidate.journal, candidate.pmcid = article.journal, article.pmcid
        candidate.evidence_type = evidence_type(article)
        if candidate.evidence_type in EXCLUDED:
            return f"{candidate.evidence_type} (not evidence)"
        if first or last:
            if article.year is None:
                return "no publication year (temporal filter)"
            if (first and article.year < first) or (last and article.year > last):
                return f"published {article.year}, outside {first or ''}-{last or ''}"
        if not article.has_abstract:
            return "no abstract"
        natural = natural_source(article)
        if natural in sources and natural != "D1":
            candidate.source = natural
        elif "D1" in sources:
            candidate.source = "D1"
        else:
            return f"source {natural} not selected"
        return None

    def _full_text(self, candidate: Candidate, article: Article, result: DocumentSearch) -> Article | None:
        """The PMC full text for a D2/D3 candidate; None (the abstract, as D1) when it cannot be had."""
        if article.has_full_text:
            return article
        full, failure = None, ""
        if article.pmcid:
            full = self.store.get_by_pmcid(article.pmcid)
            if (full is None or not full.has_full_text) and self.fetcher is not None:
                try:
                    full = self.fetcher.fetch_pmc([article.pmcid]).get(article.pmcid)
                except Exception as exc:  # noqa: BLE001 - recorded below
                    full, failure = None, f" (efetch failed: {type(exc).__name__}: {exc})"
        if full is not None and full.has_full_text:
            return article.model_copy(
                update={"body_sections": full.body_sections, "article_type": full.article_type or article.article_type}
            )
        candidate.source = "D1"
        result.warn(
            self.redact(
                f"full text of {article.pmcid} (PMID {candidate.pmid}) unavailable{failure}: its abstract is used (D1)"
            )[:400]
        )
        return None
