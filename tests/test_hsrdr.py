"""HSRDR: fusion, E1/E2/E3 tagging, temporal filter, review detection and D1/D2/D3 selection, one path down,
the LlamaIndex retrievers, and Table II. A small crafted store (plus two real PMC articles) embedded with MiniLM;
the retrievers are the ones ``Pipeline`` builds."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from cpqa.fusion import rrf_fuse
from cpqa.documents.hsrdr import natural_source
from cpqa.documents.path import DocumentQuery, year_window
from cpqa.options import DocumentOptions
from cpqa.rewrite.rewriter import RewriteResult
from cpqa.types import AbstractSection, Article
from tests.conftest import shared

REVIEW_PMID, RESEARCH_PMID = "19920987", "18175167"  # PMC2775679 (review-article), PMC2491404 (research)

RECORDS = {  # pmid: (year, title, abstract)
    "201": (
        2021,
        "Metformin use and survival in breast cancer",
        "In women with breast cancer, metformin use was associated with longer overall survival.",
    ),
    "202": (
        2020,
        "Antidiabetic biguanide therapy and outcomes of women with mammary carcinoma",
        "Women with breast carcinoma who took biguanide drugs for diabetes lived longer after diagnosis.",
    ),
    "203": (
        2019,
        "Metformin pharmacokinetics in renal impairment",
        "Plasma metformin clearance fell with creatinine clearance in healthy volunteers and kidney patients.",
    ),
    "204": (2022, "Tomato yield under drip irrigation", "Drip irrigation raised greenhouse tomato yield."),
    "205": (2021, "Metformin dosing letter", ""),
    "206": (
        1995,
        "Metformin and breast cancer cells in culture",
        "Metformin slowed the growth of breast cancer cell lines in vitro.",
    ),
}


def _query(ladder: list[str], intent: str) -> DocumentQuery:
    rewrite = RewriteResult(question=intent, normalized=intent, search_intent=intent, ladder=ladder)
    return DocumentQuery(query_str=intent, rewrite=rewrite)


def _pipeline(settings):
    from cpqa.pipeline import Pipeline

    return Pipeline(settings)


@pytest.fixture(scope="module")
def crafted_home(tmp_path_factory):
    from cpqa.config import get_settings
    from cpqa.sources.store import Store
    from ingestion.index_build import build_index
    from ingestion.pmc import ingest_pmc_files

    home = tmp_path_factory.mktemp("hsrdr_home")
    s = get_settings(cpqa_home=home, cpqa_profile="offline")
    with Store(s.store_path) as store:
        store.upsert(
            [
                (
                    Article(
                        pmid=p,
                        title=t,
                        year=y,
                        pub_date=str(y),
                        abstract_sections=[AbstractSection(text=a)] if a else [],
                    ),
                    None,
                )
                for p, (y, t, a) in RECORDS.items()
            ]
        )
        ingest_pmc_files(store, [shared("corpus", "pmc", "PMC2775679.xml"), shared("corpus", "pmc", "PMC2491404.xml")])
        build_index(s, store)
    return home


@pytest.fixture
def crafted(crafted_home, monkeypatch):
    from cpqa.config import get_settings

    monkeypatch.setenv("CPQA_PROFILE", "offline")
    return get_settings(cpqa_home=crafted_home, cpqa_profile="offline")


def test_rrf_fuse_ranks_and_categories():
    fused = rrf_fuse({"E1": ["a", "b", "c"], "E2": ["c", "d"]}, k=60)
    assert [p for p, _, _ in fused] == ["c", "a", "b", "d"]
    assert fused[0][1] == pytest.approx(1 / 63 + 1 / 61) and fused[0][2] == {"E1": 3, "E2": 1}
    weighted = rrf_fuse({"E1": ["a"], "E2": ["d"]}, k=60, weights={"E1": 1.0, "E2": 2.0})
    assert weighted[0][0] == "d"
    assert [p for p, _, _ in rrf_fuse({"E1": ["a", "b"], "E2": ["b"]}, k=60, depth=1)] == ["a", "b"]


def test_year_window():
    assert year_window(5, today=dt.date(2026, 3, 1)) == (2022, 2026)
    assert year_window() == (None, None)
    with pytest.raises(ValueError):
        year_window(0)


def test_review_detection():
    assert natural_source(Article(pmid="1", pmcid="PMC1", publication_types=["Review"])) == "D2"
    assert natural_source(Article(pmid="1", pmcid="PMC1", article_type="review-article")) == "D2"
    assert natural_source(Article(pmid="1", pmcid="PMC1", publication_types=["Journal Article"])) == "D3"
    assert natural_source(Article(pmid="1", publication_types=["Review"])) == "D1"


def test_categories_filters_and_trace(crafted):
    with _pipeline(crafted) as pipeline:
        trace = pipeline.documents.search(
            _query(["metformin[tiab]"], "breast cancer survival with metformin or biguanide drugs"),
            DocumentOptions(e1_k=3, bm25_weight=0.0),
        )  # the paper's two paths; the BM25 path has its own test
    docs = [(d.candidate, d.article) for d in trace.documents]
    by_pmid = {c.pmid: c for c in trace.candidates}
    e1 = {c.pmid for c in trace.candidates if c.semantic_rank}
    e2 = {c.pmid for c in trace.candidates if c.boolean_rank}
    lexical = e2 | {c.pmid for c in trace.candidates if c.bm25_rank}  # the Boolean ladder and plain BM25
    assert e2 == {"201", "203", "205", "206"}  # every record that says metformin
    assert len(e1) == 3 and "201" in e1 and "202" in e1
    for pmid, cand in by_pmid.items():
        assert cand.category == ("E3" if pmid in e1 & lexical else "E1" if pmid in e1 else "E2")
    assert by_pmid["201"].category == "E3" and by_pmid["202"].category == "E1"
    assert by_pmid["203"].category == "E2"
    assert by_pmid["205"].dropped_reason == "no abstract" and not by_pmid["205"].kept
    assert [c.rrf for c in trace.candidates] == sorted((c.rrf for c in trace.candidates), reverse=True)
    assert docs[0][0].category == "E3" and all(c.kept for c, _ in docs)  # found by both paths ranks first
    assert by_pmid["201"].semantic_score is not None and by_pmid["203"].semantic_score is None
    assert {"E1", "E2", "fuse", "records", "filter"} <= set(trace.stages)
    assert trace.semantic_model.profile == "offline" and trace.lost_paths == {}
    assert trace.ladder[0].expression == "metformin[tiab]" and trace.term_backend == "Store"


def test_the_record_reranker_reorders_the_first_kept_records_offline_when_asked(crafted):
    question = "breast cancer survival with metformin or biguanide drugs"
    with _pipeline(crafted) as pipeline:
        plain = pipeline.documents.search(_query(["metformin[tiab]"], question), DocumentOptions(rerank_records=0))
        asked = DocumentOptions(rerank_records=25, rerank_weight=50)
        reranked = pipeline.documents.search(_query(["metformin[tiab]"], question), asked)
    assert plain.record_reranker is None and "record_rerank" not in plain.stages
    assert all(c.reranker_score is None for c in plain.candidates)
    assert reranked.record_reranker and reranked.stages["record_rerank"].info["records"] == len(reranked.documents) > 1
    scores = [d.candidate.reranker_score for d in reranked.documents]
    assert None not in scores and scores == sorted(scores, reverse=True)  # weighed 50 to 1: the model's order
    assert sorted(reranked.pmids) == sorted(plain.pmids)


def test_temporal_filter(crafted):
    years = dt.date.today().year - 2020 + 1  # 2020 to this year: keeps 201 (2021), 202 (2020), drops 203, 206
    with _pipeline(crafted) as pipeline:
        trace = pipeline.documents.search(
            _query(["metformin[tiab]"], "breast cancer survival with metformin or biguanide drugs"),
            DocumentOptions(e1_k=3, years=years),
        )
    assert {d.candidate.pmid for d in trace.documents} == {"201", "202"}
    reasons = {c.pmid: c.dropped_reason for c in trace.candidates if not c.kept}
    this = dt.date.today().year
    assert reasons["206"] == f"published 1995, outside 2020-{this}"  # found by E1, dropped by the filter
    # E2 asks the store for 2020 on, so it never finds 203 (2019); plain BM25 has no date limit, finds it, and the
    # filter drops it.
    assert reasons["203"] == f"published 2019, outside 2020-{this}"
    assert next(c for c in trace.candidates if c.pmid == "203").boolean_rank is None
    assert trace.year_window == (2020, this)


@pytest.mark.parametrize(
    "sources, review, research",
    [(("D1", "D2"), "D2", "D1"), (("D1", "D2", "D3"), "D2", "D3"), (("D1",), "D1", "D1"), (("D2",), "D2", None)],
)
def test_source_selection(crafted, sources, review, research):
    with _pipeline(crafted) as pipeline:
        trace = pipeline.documents.search(
            _query(['"Poisson random field"[ti] OR "multi-detector row CT"[ti]'], "Poisson random field tutorial"),
            DocumentOptions(e1_k=1, sources=sources),
        )
    docs = [(d.candidate, d.article) for d in trace.documents]
    got = {c.pmid: c.source for c, _ in docs}
    assert got.get(REVIEW_PMID) == review and got.get(RESEARCH_PMID) == research
    article = dict((c.pmid, a) for c, a in docs)[REVIEW_PMID]
    assert article.has_full_text == (review == "D2")
    if research is None:
        dropped = next(c for c in trace.candidates if c.pmid == RESEARCH_PMID)
        assert dropped.dropped_reason == "source D3 not selected"


def test_one_path_down_index_missing(crafted, tmp_path):
    from cpqa.config import get_settings

    home = tmp_path / "no_index"
    home.mkdir()
    shutil.copy(crafted.store_path, home / "store.sqlite")
    s = get_settings(cpqa_home=home, cpqa_profile="offline")
    with _pipeline(s) as pipeline:
        trace = pipeline.documents.search(_query(["metformin[tiab]"], "metformin"))
    assert "IndexMissing" in trace.lost_paths["E1"] and "E2" not in trace.lost_paths
    assert trace.documents and all(d.candidate.category == "E2" for d in trace.documents)
    assert any("E1 path lost" in w for w in trace.warnings)


def test_one_path_down_ncbi_unreachable(crafted):
    import socket

    from cpqa.config import get_settings

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = get_settings(
        cpqa_home=crafted.home,
        cpqa_profile="offline",
        cpqa_eutils_url=f"http://127.0.0.1:{port}/",
        cpqa_http_retries=0,
        cpqa_http_timeout=2,
    )
    with _pipeline(s) as pipeline:
        assert type(pipeline.boolean.backend).__name__ == "EutilsClient"
        trace = pipeline.documents.search(_query(["metformin[tiab]"], "metformin breast cancer"))
    assert "every ladder level failed" in trace.lost_paths["E2"] and "E1" not in trace.lost_paths
    assert trace.ladder and all(level.error for level in trace.ladder)  # the failed levels stay in the record
    assert trace.documents and all(d.candidate.boolean_rank is None for d in trace.documents)
    assert any(d.candidate.semantic_rank for d in trace.documents)  # semantic search (and local BM25) answer


def test_the_three_paths_are_llamaindex_retrievers(crafted):
    """E1, E2 and HSRDR answer ``retrieve`` with provenance in node metadata; HSRDR's ranking is built from the
    same E1 and E2 objects (same PMIDs, same ranks)."""
    question = "Does metformin improve survival in breast cancer?"
    with _pipeline(crafted) as pipeline:
        query = pipeline.query_for(question)  # the rewrite stage's result, which E2 and HSRDR read
        e1, e2 = pipeline.semantic.retrieve(question), pipeline.boolean.retrieve(query)
        nodes = pipeline.documents.retrieve(query)
        result = pipeline.documents.search(query)
        with pytest.raises(ValueError, match="rewritten question"):
            pipeline.documents.search(question)  # the search never rewrites a question itself
    assert [n.node.metadata["path"] for n in e1 + e2] == ["E1"] * len(e1) + ["E2"] * len(e2)
    assert nodes and nodes[0].node.metadata["pmid"] in RECORDS and nodes[0].node.get_content()
    assert {n.node.metadata["category"] for n in nodes} <= {"E1", "E2", "E3"}
    assert [n.node.metadata["pmid"] for n in nodes] == result.pmids and nodes[0].score == result.candidates[0].rrf
    ranks = {c.pmid: (c.semantic_rank, c.boolean_rank) for c in result.candidates}
    for n in e1:
        assert ranks[n.node.metadata["pmid"]][0] == n.node.metadata["rank"]
    for n in e2:
        assert ranks[n.node.metadata["pmid"]][1] == n.node.metadata["rank"]


def test_table2_shares_and_entropy():
    from cpqa.evaluation.evaluations.retrieval import table2

    out = table2([[("E3", 0.03), ("E1", 0.016)], [("E3", 0.032), ("E2", 0.016)]])
    assert out["E3"]["top5_share"] == 0.5 and out["E3"]["rrf"] == pytest.approx(0.031)
    assert out["E1"]["entropy"] == pytest.approx(0.5) and out["entropy_total"] == pytest.approx(1.5)
    assert out["questions"] == 2


def test_bm25_third_path_and_the_naive_hybrid(crafted):
    """A path of weight 0 does not run; BM25 finds by the question's own words and counts as lexical (E2/E3)."""
    query = _query(["metformin[tiab]"], "breast cancer survival with metformin or biguanide drugs")
    with _pipeline(crafted) as pipeline:
        three = pipeline.documents.search(query, DocumentOptions(e1_k=3, bm25_weight=1.0))
        naive = pipeline.documents.search(
            query, DocumentOptions(e1_k=3, e1_weight=1.0, e2_weight=0.0, bm25_weight=1.0, rrf_k=60)
        )
    assert {"E1", "E2", "BM25"} <= set(three.stages) and any(c.bm25_rank for c in three.candidates)
    for c in three.candidates:
        semantic, lexical = c.semantic_rank is not None, c.boolean_rank is not None or c.bm25_rank is not None
        assert c.category == ("E3" if semantic and lexical else "E1" if semantic else "E2")
    assert "E2" not in naive.stages and not naive.ladder and all(c.boolean_rank is None for c in naive.candidates)
    assert naive.candidates[0].rrf == pytest.approx(
        sum(1 / (60 + r) for r in (naive.candidates[0].semantic_rank, naive.candidates[0].bm25_rank) if r), abs=1e-6
    )


def test_every_retriever_is_asked_through_llama_index_retrieve_so_its_instrumentation_runs(crafted):
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.retrieval import RetrievalStartEvent

    class Retrievals(BaseEventHandler):
        seen: list[str] = []

        @classmethod
        def class_name(cls) -> str:
            return "Retrievals"

        def handle(self, event, **kwargs) -> None:
            if isinstance(event, RetrievalStartEvent):
                self.seen.append(event.span_id or "")

    handler = Retrievals()
    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(handler)
    try:
        with _pipeline(crafted) as pipeline:
            result = pipeline.ask("Does metformin improve survival in breast cancer?")
    finally:
        dispatcher.event_handlers.remove(handler)
    assert result.trace.candidates and result.trace.passages  # the typed results came back through retrieve()
    spans = " ".join(handler.seen)
    assert "HSRDRRetriever" in spans and "SemanticRetriever" in spans and "BooleanLadderRetriever" in spans
    assert "PassageRetriever" in spans and "TwoStageRetriever" in spans
