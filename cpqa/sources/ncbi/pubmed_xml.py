"""PubMed XML as efetch and the annual baseline return it (``PubmedArticleSet``; a bare
``MedlineCitation`` too): streaming parse into ``Article`` plus each record's own XML, and rendering
stored records back into an efetch-identical ``PubmedArticleSet``."""

from __future__ import annotations

import re
from typing import Iterator

from lxml import etree

from cpqa.sources.ncbi.xmlio import XmlSource, as_pmcid, iter_records, text, to_bytes
from cpqa.types import AbstractSection, Article, MeshHeading, MeshQualifier

RECORD_TAGS = ("PubmedArticle", "PubmedBookArticle", "MedlineCitation")
ROOT_TAGS = ("PubmedArticleSet", "MedlineCitationSet")

# A DOCTYPE that Bio.Entrez ships the DTD for (Bio/Entrez/DTDs/pubmed_250101.dtd).
DOCTYPE = (
    b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">'
)

_MONTHS = {
    m: i
    for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)
}
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_DATE_CREATED = re.compile(rb"<DateCreated>.*?</DateCreated>", re.S)
_MEDLINE_DATE = re.compile(r"\b(1[5-9]\d\d|20\d\d)(?:\s+([A-Za-z]{3})[a-z]*(?:\s+(\d{1,2})\b)?)?")


def iter_pubmed_records(source: XmlSource, deleted: list[str] | None = None) -> Iterator[tuple[Article, bytes]]:
    """Stream ``(Article, record XML)`` pairs from a path (``.gz`` ok), bytes or a binary file.
    PMIDs that an update file's ``DeleteCitation`` withdraws are appended to ``deleted`` when given."""
    for elem in iter_records(source, (*RECORD_TAGS, "DeleteCitation"), ROOT_TAGS):
        if elem.tag == "DeleteCitation":
            if deleted is not None:
                deleted.extend(text(p) for p in elem.iterfind("PMID") if text(p))
            continue
        yield parse_record(elem), to_bytes(elem)


def parse_pubmed_xml(data: bytes) -> list[Article]:
    """Every record in a PubMed XML document."""
    return [article for article, _ in iter_pubmed_records(data)]


def parse_record(elem: etree._Element) -> Article:
    """One ``PubmedArticle``, ``PubmedBookArticle`` or bare ``MedlineCitation`` element."""
    if elem.tag == "PubmedBookArticle":
        return _parse_book(elem)
    citation = elem if elem.tag == "MedlineCitation" else elem.find("MedlineCitation")
    if citation is None:
        return Article()
    art = citation.find("Article")
    article = Article(pmid=text(citation.find("PMID")) or None)
    if art is not None:
        article.title = text(art.find("ArticleTitle")) or text(art.find("VernacularTitle"))
        article.abstract_sections = _abstract(art.find("Abstract"))
        article.publication_types = [text(p) for p in art.iterfind("PublicationTypeList/PublicationType")]
        journal = art.find("Journal")
        if journal is not None:
            article.journal = text(journal.find("Title")) or text(journal.find("ISOAbbreviation")) or None
            article.pub_date = _pub_date(journal.find("JournalIssue/PubDate"))
        if article.pub_date is None:
            article.pub_date = _pub_date(art.find("ArticleDate"))
        for eloc in art.iterfind("ELocationID"):
            if eloc.get("EIdType") == "doi" and not article.doi:
                article.doi = text(eloc) or None
    article.mesh = [_mesh_heading(h) for h in citation.iterfind("MeshHeadingList/MeshHeading")]
    article.keywords = [text(k) for k in citation.iterfind("KeywordList/Keyword") if text(k)]
    article.retracted_by = [
        text(c.find("PMID"))
        for c in citation.iterfind("CommentsCorrectionsList/CommentsCorrections")
        if c.get("RefType") == "RetractionIn" and text(c.find("PMID"))
    ]
    for other in citation.iterfind("OtherID"):
        value = text(other)
        if value.startswith("PMC") and not article.pmcid:
            article.pmcid = value.split()[0]
    _article_ids(article, elem.find("PubmedData/ArticleIdList"))
    article.year = int(article.pub_date[:4]) if article.pub_date else None
    return article


def _parse_book(elem: etree._Element) -> Article:
    doc = elem.find("BookDocument")
    if doc is None:
        return Article()
    book = doc.find("Book")
    title = text(doc.find("ArticleTitle")) or text(book.find("BookTitle") if book is not None else None)
    article = Article(
        pmid=text(doc.find("PMID")) or None,
        title=title,
        abstract_sections=_abstract(doc.find("Abstract")),
        publication_types=[text(p) for p in doc.iterfind("PublicationType")],
        keywords=[text(k) for k in doc.iterfind("KeywordList/Keyword") if text(k)],
    )
    if book is not None:
        article.journal = text(book.find("Publisher/PublisherName")) or None
        article.pub_date = _pub_date(book.find("PubDate"))
    _article_ids(article, elem.find("PubmedBookData/ArticleIdList"))
    article.year = int(article.pub_date[:4]) if article.pub_date else None
    return article


def _abstract(abstract: etree._Element | None) -> list[AbstractSection]:
    if abstract is None:
        return []
    sections = []
    for node in abstract.iterfind("AbstractText"):
        body = text(node)
        if body:
            sections.append(
                AbstractSection(
                    label=node.get("Label") or None, nlm_category=node.get("NlmCategory") or None, text=body
                )
            )
    return sections


def _mesh_heading(heading: etree._Element) -> MeshHeading:
    desc = heading.find("DescriptorName")
    return MeshHeading(
        descriptor=text(desc),
        ui=desc.get("UI") if desc is not None else None,
        major=desc is not None and desc.get("MajorTopicYN") == "Y",
        qualifiers=[
            MeshQualifier(name=text(q), ui=q.get("UI"), major=q.get("MajorTopicYN") == "Y")
            for q in heading.iterfind("QualifierName")
        ],
    )


def _article_ids(article: Article, id_list: etree._Element | None) -> None:
    if id_list is None:
        return
    for aid in id_list.iterfind("ArticleId"):
        kind, value = aid.get("IdType"), text(aid)
        if not value:
            continue
        if kind == "doi":
            article.doi = value
        elif kind == "pmc":
            article.pmcid = as_pmcid(value)
        elif kind == "pubmed" and not article.pmid:
            article.pmid = value


def _pub_date(node: etree._Element | None) -> str | None:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` from a PubDate/ArticleDate (MedlineDate included)."""
    if node is None:
        return None
    medline = node.find("MedlineDate")
    if medline is not None:
        match = _MEDLINE_DATE.search(text(medline))
        if not match:
            return None
        year, month, day = match.group(1), _month(match.group(2)), match.group(3)
    else:
        year = text(node.find("Year"))
        if not _YEAR.fullmatch(year):
            return None
        month, day = _month(text(node.find("Month"))), text(node.find("Day"))
    if not month:
        return year
    if day and day.isdigit() and 1 <= int(day) <= 31:
        return f"{year}-{month:02d}-{int(day):02d}"
    return f"{year}-{month:02d}"


def _month(value: str | None) -> int | None:
    if not value:
        return None
    if value.isdigit():
        number = int(value)
        return number if 1 <= number <= 12 else None
    return _MONTHS.get(value[:3].lower())


def render_pubmed_article_set(records: list[bytes]) -> bytes:
    """Stored records as one efetch answer; a bare ``MedlineCitation`` gets its ``PubmedArticle`` wrapper.
    ``DateCreated`` (dropped from the DTD in 2018, as NCBI's current answers drop it) is removed so the
    whole set validates against the one DOCTYPE."""
    parts = [b'<?xml version="1.0" ?>\n', DOCTYPE, b"\n<PubmedArticleSet>\n"]
    for record in records:
        if b"<DateCreated>" in record:
            record = _DATE_CREATED.sub(b"", record)
        if record.lstrip().startswith(b"<MedlineCitation"):
            record = b"<PubmedArticle>" + record + b"</PubmedArticle>"
        parts += [record, b"\n"]
    parts.append(b"</PubmedArticleSet>\n")
    return b"".join(parts)


def article_to_pubmed_xml(article: Article) -> bytes:
    """A ``PubmedArticle`` element for a record that arrived without XML (e.g. a MedCPT chunk)."""
    root = etree.Element("PubmedArticle")
    cit = etree.SubElement(root, "MedlineCitation", Status="MEDLINE", Owner="NLM")
    etree.SubElement(cit, "PMID", Version="1").text = article.pmid or ""
    art = etree.SubElement(cit, "Article", PubModel="Print")
    journal = etree.SubElement(art, "Journal")
    pub = etree.SubElement(etree.SubElement(journal, "JournalIssue", CitedMedium="Print"), "PubDate")
    if article.pub_date:
        year, _, rest = article.pub_date.partition("-")
        etree.SubElement(pub, "Year").text = year
        month, _, day = rest.partition("-")
        if month:
            etree.SubElement(pub, "Month").text = list(_MONTHS)[int(month) - 1].title()
        if day:
            etree.SubElement(pub, "Day").text = day
    elif article.year:
        etree.SubElement(pub, "Year").text = str(article.year)
    etree.SubElement(journal, "Title").text = article.journal or ""
    etree.SubElement(art, "ArticleTitle").text = article.title
    if article.doi:
        etree.SubElement(art, "ELocationID", EIdType="doi", ValidYN="Y").text = article.doi
    if article.abstract_sections:
        abstract = etree.SubElement(art, "Abstract")
        for section in article.abstract_sections:
            attrs = {k: v for k, v in (("Label", section.label), ("NlmCategory", section.nlm_category)) if v}
            etree.SubElement(abstract, "AbstractText", **attrs).text = section.text
    etree.SubElement(art, "Language").text = "eng"
    types = etree.SubElement(art, "PublicationTypeList")
    for name in article.publication_types or ["Journal Article"]:
        etree.SubElement(types, "PublicationType").text = name
    info = etree.SubElement(cit, "MedlineJournalInfo")
    etree.SubElement(info, "MedlineTA").text = article.journal or ""
    if article.retracted_by:
        comments = etree.SubElement(cit, "CommentsCorrectionsList")
        for pmid in article.retracted_by:
            notice = etree.SubElement(comments, "CommentsCorrections", RefType="RetractionIn")
            etree.SubElement(notice, "RefSource").text = f"Retraction notice PMID {pmid}"
            etree.SubElement(notice, "PMID", Version="1").text = pmid
    if article.mesh:
        mesh_list = etree.SubElement(cit, "MeshHeadingList")
        for heading in article.mesh:
            node = etree.SubElement(mesh_list, "MeshHeading")
            _named(node, "DescriptorName", heading.descriptor, heading.ui, heading.major)
            for q in heading.qualifiers:
                _named(node, "QualifierName", q.name, q.ui, q.major)
    if article.keywords:
        keywords = etree.SubElement(cit, "KeywordList", Owner="NOTNLM")
        for word in article.keywords:
            etree.SubElement(keywords, "Keyword", MajorTopicYN="N").text = word
    ids = etree.SubElement(etree.SubElement(root, "PubmedData"), "ArticleIdList")
    for kind, value in (("pubmed", article.pmid), ("doi", article.doi), ("pmc", article.pmcid)):
        if value:
            etree.SubElement(ids, "ArticleId", IdType=kind).text = value
    return to_bytes(root)


def _named(parent: etree._Element, tag: str, name: str, ui: str | None, major: bool) -> None:
    attrs = {"UI": ui} if ui else {}
    etree.SubElement(parent, tag, **attrs, MajorTopicYN="Y" if major else "N").text = name
