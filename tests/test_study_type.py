"""Evidence types from real records' publication types and MeSH, the retraction exclusion, and the patient-mode
prior that reads human clinical evidence first."""

from __future__ import annotations

import pytest

from cpqa.documents.study_type import BADGES, PRECLINICAL, badge, evidence_type
from cpqa.sources.ncbi.pubmed_xml import article_to_pubmed_xml, parse_pubmed_xml, render_pubmed_article_set
from cpqa.types import Article, MeshHeading, Passage

# Real sample records (../shared/data/corpus/pubmed_sample.xml.gz), one per type the sample holds.
REAL = {
    "23415808": "clinical trial",  # SWOG phase II trial of pemetrexed
    "19368899": "randomized controlled trial",
    "25636559": "case report",
    "20939768": "review",
    "7482275": "observational study",  # Retrospective Studies, age groups
    "2224269": "human study",
    "7547656": "animal study",  # Animals, no age group
    "25378401": "in vitro study",  # Cell Line, Tumor; tagged Humans (a human cell line) but no age group
}


@pytest.fixture(scope="module")
def store(sample_settings):
    from cpqa.sources.store import Store

    with Store(sample_settings.store_path) as opened:
        yield opened


@pytest.mark.parametrize("pmid,kind", REAL.items())
def test_real_records_get_their_evidence_type_and_badge(store, pmid, kind):
    article = store.get(pmid)
    assert evidence_type(article) == kind
    assert badge(kind) == BADGES[kind] and badge(kind)


# Types the sample does not hold: a real record with the publication type NCBI gives such papers.
@pytest.mark.parametrize(
    "publication_type,kind",
    [
        ("Meta-Analysis", "meta-analysis"),
        ("Systematic Review", "systematic review"),
        ("Practice Guideline", "guideline"),
        ("Retracted Publication", "retracted"),
        ("Retraction of Publication", "retraction notice"),
        ("Clinical Trial, Phase III", "clinical trial"),
    ],
)
def test_publication_types_decide_before_mesh(store, publication_type, kind):
    article = store.get("7547656")  # an animal study by its MeSH
    relabelled = article.model_copy(update={"publication_types": ["Journal Article", publication_type]})
    assert evidence_type(relabelled) == kind


def test_a_record_without_mesh_is_not_indexed_and_a_human_xenograft_is_an_animal_study():
    assert evidence_type(Article(pmid="1", title="t")) == "not indexed"
    xenograft = Article(pmid="2", mesh=[MeshHeading(descriptor=d) for d in ("Animals", "Humans", "Mice, Nude")])
    assert evidence_type(xenograft) == "animal study"
    patients = Article(pmid="3", mesh=[MeshHeading(descriptor=d) for d in ("Animals", "Humans", "Aged")])
    assert evidence_type(patients) == "human study"


def test_retraction_in_is_parsed_and_written_back(store):
    article = store.get("19368899").model_copy(update={"retracted_by": ["31000001"]})
    parsed = parse_pubmed_xml(render_pubmed_article_set([article_to_pubmed_xml(article)]))[0]
    assert parsed.retracted_by == ["31000001"]
    assert evidence_type(parsed) == "retracted"


def test_a_retracted_record_is_excluded_from_the_evidence_with_a_warning(sample_settings, tmp_path):
    """A real record re-ingested as NCBI marks it once retracted: HSRDR drops it and says why."""
    import shutil

    from cpqa.config import get_settings
    from cpqa.documents.path import DocumentQuery
    from cpqa.documents.hsrdr import HSRDRRetriever
    from cpqa.documents.boolean_search import BooleanLadderRetriever
    from cpqa.documents.bm25 import Bm25Retriever

    from cpqa.options import DocumentOptions
    from cpqa.rewrite.rewriter import Rewriter
    from cpqa.sources.store import Store

    for part in sample_settings.store_path.parent.glob("store.sqlite*"):
        shutil.copy(part, tmp_path / part.name)
    settings = get_settings(cpqa_home=tmp_path, cpqa_profile="offline")
    with Store(settings.store_path) as copy:
        retracted = copy.get("23415808").model_copy(
            update={"retracted_by": ["39999999"], "publication_types": ["Journal Article", "Retracted Publication"]}
        )
        copy.upsert([(retracted, article_to_pubmed_xml(retracted))])
        options = DocumentOptions(e1_weight=0.0)  # E2 and BM25 only: no vector index needed
        rewriter = Rewriter(settings)
        paths = [BooleanLadderRetriever(copy, options), Bm25Retriever(copy, settings.index_dir / "bm25", options)]
        hsrdr = HSRDRRetriever(paths, copy, None, options=options)
        question = "pemetrexed bronchioloalveolar carcinoma phase II trial"
        found = hsrdr.search(DocumentQuery(query_str=question, rewrite=rewriter.rewrite(question)))
    dropped = {c.pmid: c for c in found.candidates}
    assert dropped["23415808"].kept is False and dropped["23415808"].dropped_reason.startswith("retracted")
    assert "23415808" not in {d.candidate.pmid for d in found.documents}
    assert any("retracted" in w and "23415808" in w for w in found.warnings)


def _passage(i: int, kind: str) -> Passage:
    return Passage(
        node_id=f"n{i}", pmid=str(i), text=f"Finding number {i} was observed in the cohort.", evidence_type=kind
    )


def test_patient_mode_prior_moves_animal_and_cell_studies_behind_human_evidence():
    from cpqa.passages.dense import PassageRetriever
    from cpqa.types import StageLog

    reranked = [
        _passage(0, "animal study"),
        _passage(1, "in vitro study"),
        _passage(2, "observational study"),
        _passage(3, "not indexed"),
        _passage(4, "randomized controlled trial"),
    ]
    log = StageLog()
    ordered = PassageRetriever._ordered(reranked, log, demotion=5)
    assert [p.evidence_type in PRECLINICAL for p in ordered] == [False, False, False, True, True]
    assert [p.pmid for p in ordered][:3] == ["2", "3", "4"]  # the rest keep their reranked order
    assert log.stages["rerank"].info["preclinical_demoted"] == 2
    assert PassageRetriever._ordered(reranked, StageLog(), demotion=0) == reranked  # clinician mode, or off
    # A prior, not a filter: with nothing else, the animal study is still evidence.
    assert PassageRetriever._ordered(reranked[:1], StageLog(), demotion=5) == reranked[:1]
