"""PubMed XML and PMC JATS parsing against real NCBI responses in ../shared/data."""

from __future__ import annotations

import gzip
import io

import pytest
from Bio import Entrez

from cpqa.sources.ncbi.jats import iter_pmc_records, parse_pmc_xml, render_pmc_article_set
from cpqa.sources.ncbi.pubmed_xml import (
    article_to_pubmed_xml,
    iter_pubmed_records,
    parse_pubmed_xml,
    render_pubmed_article_set,
)
from cpqa.sources.ncbi.xmlio import XmlFormatError
from tests.conftest import shared

EFETCH_FILES = ["pubmed1.xml", "pubmed2.xml", "pubmed4.xml", "pubmed5.xml", "pubmed6.xml", "pubmed7.xml"]


def _eutils(*parts: str):
    return shared("eutils", *parts)


def _one(path) -> dict:
    return {a.pmid: a for a in parse_pubmed_xml(path.read_bytes())}


@pytest.mark.parametrize("name", EFETCH_FILES)
def test_every_biopython_efetch_file_parses(name):
    records = list(iter_pubmed_records(_eutils("biopython_Tests_Entrez", name)))
    assert records
    for article, raw in records:
        assert article.pmid and article.pmid.isdigit()
        assert article.title and article.journal
        assert raw.startswith(b"<PubmedArticle>") and article.pmid.encode() in raw


def test_review_with_mesh_major_flags():
    articles = _one(_eutils("biopython_Tests_Entrez", "pubmed1.xml"))
    assert set(articles) == {"12091962", "9997"}
    a = articles["12091962"]
    assert a.title == "The treatment of AIDS behind the walls of correctional facilities."
    assert a.publication_types == ["Journal Article", "Review"] and a.is_review
    assert a.journal == "Social justice (San Francisco, Calif.)" and a.pub_date == "1990" and a.year == 1990
    mesh = {h.descriptor: h for h in a.mesh}
    assert (
        mesh["Acquired Immunodeficiency Syndrome"].major and mesh["Acquired Immunodeficiency Syndrome"].ui == "D000163"
    )
    assert not mesh["AIDS Serodiagnosis"].major
    b = articles["9997"]
    assert b.pub_date == "1976-09-28" and b.doi == "10.1016/0005-2795(76)90109-4"


def test_structured_abstract_qualifiers_and_pmc_id():
    a = _one(_eutils("biopython_Tests_Entrez", "pubmed4.xml"))["27797938"]
    assert [s.label for s in a.abstract_sections] == ["OBJECTIVE", "DESIGN", "RESULTS", "CONCLUSIONS"]
    assert a.pmcid == "PMC5442267" and a.doi == "10.1136/gutjnl-2016-312510"
    assert a.journal == "Gut" and a.pub_date == "2017-06"
    assert "Observational Study" in a.publication_types


def test_nejm_record_sections_and_qualifier_major():
    a = _one(_eutils("pubmed-29768149.xml"))["29768149"]
    assert a.title == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    assert [s.label for s in a.abstract_sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert a.doi == "10.1056/NEJMoa1715274" and a.pub_date == "2018-05-17"
    asthma = next(h for h in a.mesh if h.descriptor == "Asthma")
    assert not asthma.major and asthma.is_major
    assert [(q.name, q.major) for q in asthma.qualifiers] == [("drug therapy", True)]
    assert "Clinical Trial, Phase III" in a.publication_types


def test_one_pmid_xml_and_keywords():
    a = _one(_eutils("one_pmid_all_formats", "20000000.xml"))["20000000"]
    assert a.title.startswith("Long-term impact of municipal sewage irrigation")
    assert a.year == 2009 and any(h.descriptor == "Sewage" and h.major for h in a.mesh)
    b = _one(_eutils("biopython_Tests_Entrez", "pubmed6.xml"))["30108519"]
    assert b.pmcid == "PMC6079548" and "aerobic capacity" in b.keywords


def test_medline_date_bare_citation_and_gzip_bytes():
    xml = (
        b"<MedlineCitation Status='MEDLINE' Owner='NLM'><PMID Version='1'>42</PMID><Article>"
        b"<Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>"
        b"</JournalIssue><Title>J Test</Title></Journal><ArticleTitle>T <i>italic</i> end</ArticleTitle>"
        b"</Article><OtherID Source='NLM'>PMC777 [Available on 2000-01-01]</OtherID></MedlineCitation>"
    )
    ((article, raw),) = list(iter_pubmed_records(gzip.compress(xml)))
    assert (article.pmid, article.pub_date, article.year, article.pmcid) == ("42", "1998-12", 1998, "PMC777")
    assert article.title == "T italic end" and raw.startswith(b"<MedlineCitation")
    rendered = render_pubmed_article_set([raw])
    assert Entrez.read(io.BytesIO(rendered), validate=True)["PubmedArticle"][0]["MedlineCitation"]["PMID"] == "42"


def test_streams_from_binary_file_and_rejects_other_formats():
    path = _eutils("biopython_Tests_Entrez", "pubmed2.xml")
    with path.open("rb") as fh:
        assert [a.pmid for a, _ in iter_pubmed_records(fh)] == ["11748933", "11700088"]
    with pytest.raises(XmlFormatError, match="eSearchResult"):
        list(iter_pubmed_records(_eutils("biopython_Tests_Entrez", "esearch1.xml")))
    with pytest.raises(XmlFormatError, match="malformed"):
        list(iter_pubmed_records(_eutils("biopython_Tests_Entrez", "einfo4.xml")))


def test_truncated_gzip_is_a_format_error_after_the_good_records():
    data = shared("corpus", "pubmed_sample.xml.gz").read_bytes()[:200_000]
    seen = []
    with pytest.raises(XmlFormatError, match="damaged gzip"):
        for article, _ in iter_pubmed_records(data):
            seen.append(article.pmid)
    assert len(seen) > 100


def test_sample_streams_all_records():
    path = shared("corpus", "pubmed_sample.xml.gz")
    pmids = [a.pmid for a, _ in iter_pubmed_records(path)]
    assert len(pmids) == 4170 and len(set(pmids)) == 4170


def test_rendered_set_validates_with_biopython():
    raws = []
    for name in EFETCH_FILES:
        raws += [raw for _, raw in iter_pubmed_records(_eutils("biopython_Tests_Entrez", name))]
    raws += [raw for _, raw in iter_pubmed_records(_eutils("one_pmid_all_formats", "20000000.xml"))]
    raws += [raw for _, raw in iter_pubmed_records(_eutils("pubmed-29768149.xml"))]
    parsed = Entrez.read(io.BytesIO(render_pubmed_article_set(raws)), validate=True)
    assert len(parsed["PubmedArticle"]) == len(raws) == 10
    assert [a.pmid for a in parse_pubmed_xml(render_pubmed_article_set(raws))][-1] == "29768149"


def test_article_to_pubmed_xml_round_trips():
    articles = parse_pubmed_xml(_eutils("pubmed-29768149.xml").read_bytes())
    articles += parse_pubmed_xml(_eutils("biopython_Tests_Entrez", "pubmed6.xml").read_bytes())
    rendered = render_pubmed_article_set([article_to_pubmed_xml(a) for a in articles])
    assert len(Entrez.read(io.BytesIO(rendered), validate=True)["PubmedArticle"]) == len(articles)
    assert parse_pubmed_xml(rendered) == articles


# ------------------------------------------------------------------ JATS
def _pmc(name: str):
    ((article, raw),) = list(iter_pmc_records(shared("corpus", "pmc", name)))
    return article, raw


def test_pmc_review_article():
    a, raw = _pmc("PMC2775679.xml")
    assert (a.pmid, a.pmcid, a.doi) == ("19920987", "PMC2775679", "10.1155/2008/257864")
    assert a.article_type == "review-article" and a.is_review and a.publication_types == ["Review"]
    assert a.title == "A Tutorial of the Poisson Random Field Model in Population Genetics"
    titles = [s.title for s in a.body_sections]
    assert titles[:3] == ["1. Introduction", "2. The Wright-Fisher Model", "3. Diffusion Theory"]
    assert "4.1. Probability of Extinction" in titles
    assert a.body_sections[0].paragraphs[0].startswith("Selectionists and neutralists have fiercely debated")
    assert a.has_abstract and a.journal == "Advances in Bioinformatics" and raw.startswith(b"<article")


def test_pmc_structured_abstracts_and_ids():
    a, _ = _pmc("mds526.nxml")
    assert (a.pmid, a.pmcid, a.article_type) == ("23149571", "PMC3574550", "research-article")
    assert [s.label for s in a.abstract_sections] == ["Background", "Patients and methods", "Results", "Conclusions"]
    assert a.title.startswith("Socio-demographic inequalities in stage of cancer diagnosis")
    assert "introduction" in [s.title for s in a.body_sections] and "cancer" in a.keywords
    b, _ = _pmc("6605965a.nxml")
    assert (b.pmid, b.pmcid) == ("21045829", "PMC2994229")
    assert [s.label for s in b.abstract_sections] == ["Background", "Methods", "Results", "Conclusion"]
    c, _ = _pmc("PMC2491404.xml")
    assert c.body_sections[0].title is None  # paragraphs directly under <body>
    assert c.body_sections[0].paragraphs[0].startswith("The prognosis of patients with rectal cancer")
    assert {"Materials and methods", "Patients"} <= {s.title for s in c.body_sections}


@pytest.mark.parametrize(
    "name",
    [
        "6605965a.nxml",
        "PMC2491404.xml",
        "PMC2775679.xml",
        "PMC2852030.xml",
        "PMC2900587.xml",
        "mds526.nxml",
        "pone.0046493.nxml",
    ],
)
def test_every_pmc_file_parses_and_re_renders(name):
    a, raw = _pmc(name)
    assert a.pmid and a.pmcid.startswith("PMC") and a.title and a.has_full_text and a.year
    assert "<" not in a.title  # inline markup dropped
    assert parse_pmc_xml(render_pmc_article_set([raw])) == [a]


def test_pmc_efetch_wrapper():
    ((a, raw),) = list(iter_pmc_records(_eutils("biopython_Tests_Entrez", "efetch_pmc.xml")))
    assert (a.pmid, a.pmcid, a.article_type) == ("34527728", "PMC8435807", "correction")
    assert a.pub_date == "2021-09-13" and a.journal == "ERJ Open Research"
    assert a.body_sections[0].paragraphs[0].startswith("This article was originally published with an error")
    assert b"xmlns:xlink" in raw  # namespaces travel with the element


def test_book_article_and_medline_citation_set():
    book = (
        b"<PubmedArticleSet><PubmedBookArticle><BookDocument><PMID Version='1'>20301295</PMID>"
        b"<ArticleIdList><ArticleId IdType='bookaccession'>NBK1116</ArticleId></ArticleIdList>"
        b"<Book><Publisher><PublisherName>University of Washington, Seattle</PublisherName></Publisher>"
        b"<BookTitle>GeneReviews</BookTitle><PubDate><Year>1993</Year></PubDate></Book>"
        b"<ArticleTitle>BRCA1- and BRCA2-Associated Hereditary Breast and Ovarian Cancer</ArticleTitle>"
        b"<Abstract><AbstractText Label='CLINICAL CHARACTERISTICS'>Risk of cancer.</AbstractText></Abstract>"
        b"<PublicationType UI='D016454'>Review</PublicationType></BookDocument>"
        b"<PubmedBookData><ArticleIdList><ArticleId IdType='pubmed'>20301295</ArticleId></ArticleIdList>"
        b"</PubmedBookData></PubmedBookArticle></PubmedArticleSet>"
    )
    ((a, raw),) = list(iter_pubmed_records(book))
    assert (a.pmid, a.year, a.journal) == ("20301295", 1993, "University of Washington, Seattle")
    assert a.title.startswith("BRCA1- and BRCA2-Associated") and a.is_review
    assert a.abstract_sections[0].label == "CLINICAL CHARACTERISTICS" and raw.startswith(b"<PubmedBookArticle>")
    citations = (
        b"<MedlineCitationSet><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>One</ArticleTitle>"
        b"</Article></MedlineCitation><MedlineCitation><PMID>2</PMID><Article><ArticleTitle>Two"
        b"</ArticleTitle></Article></MedlineCitation></MedlineCitationSet>"
    )
    assert [(a.pmid, a.title) for a in parse_pubmed_xml(citations)] == [("1", "One"), ("2", "Two")]
