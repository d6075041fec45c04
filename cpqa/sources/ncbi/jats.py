"""PMC JATS full text (efetch ``pmc-articleset`` wrapper or a bare ``<article>``): streaming parse into
``Article`` with body sections, plus each article's own XML for re-serving."""

from __future__ import annotations

from typing import Iterator

from lxml import etree

from cpqa.sources.clean_text import clean_text
from cpqa.sources.ncbi.xmlio import XmlSource, as_pmcid, iter_records, text, to_bytes
from cpqa.types import AbstractSection, Article, BodySection

ROOT_TAGS = ("pmc-articleset",)
DOCTYPE = (
    b'<!DOCTYPE pmc-articleset PUBLIC "-//NLM//DTD ARTICLE SET 2.0//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pmc/articleset/nlm-articleset-2.0.dtd">'
)

# JATS article-type -> the PubMed publication type it corresponds to, so [pt] finds PMC-only records.
_PUBLICATION_TYPE = {
    "review-article": "Review",
    "systematic-review": "Systematic Review",
    "meta-analysis": "Meta-Analysis",
    "research-article": "Journal Article",
    "case-report": "Case Reports",
    "editorial": "Editorial",
    "letter": "Letter",
    "correction": "Published Erratum",
    "retraction": "Retraction of Publication",
}
# Floating material whose text is not running prose.
_SKIP = {
    "fig",
    "table-wrap",
    "disp-formula",
    "inline-formula",
    "graphic",
    "media",
    "supplementary-material",
    "ref-list",
    "fn-group",
    "table",
    "alternatives",
}
_PROSE_CONTAINERS = {"list", "list-item", "boxed-text", "disp-quote", "statement", "def-list", "def-item", "def"}
_DATE_PREFERENCE = ("ppub", "epub", "collection", "epub-ppub", "pub", "")


def iter_pmc_records(source: XmlSource) -> Iterator[tuple[Article, bytes]]:
    """Stream ``(Article, article XML)`` pairs from a path (``.gz`` ok), bytes or a binary file."""
    for elem in iter_records(source, ("article",), ROOT_TAGS):
        yield parse_article(elem), to_bytes(elem)


def parse_pmc_xml(data: bytes) -> list[Article]:
    """Every article in a JATS document."""
    return [article for article, _ in iter_pmc_records(data)]


def parse_article(elem: etree._Element) -> Article:
    meta = elem.find("front/article-meta")
    article_type = elem.get("article-type") or None
    article = Article(
        article_type=article_type,
        publication_types=[_PUBLICATION_TYPE[article_type]] if article_type in _PUBLICATION_TYPE else [],
    )
    if meta is not None:
        for aid in meta.iterfind("article-id"):
            kind, value = aid.get("pub-id-type"), text(aid)
            if not value:
                continue
            if kind == "pmid":
                article.pmid = value
            elif kind in ("pmc", "pmcid"):
                article.pmcid = as_pmcid(value)
            elif kind == "doi":
                article.doi = value
        article.title = _prose(meta.find("title-group/article-title"))
        article.abstract_sections = _abstract(meta)
        article.keywords = [text(k) for k in meta.iterfind("kwd-group/kwd") if text(k)]
        article.pub_date = _pub_date(meta)
        article.year = int(article.pub_date[:4]) if article.pub_date else None
    journal = elem.find("front/journal-meta")
    if journal is not None:
        article.journal = (
            text(journal.find("journal-title-group/journal-title"))
            or text(journal.find("journal-title"))
            or text(journal.find("journal-id[@journal-id-type='nlm-ta']"))
            or None
        )
    body = elem.find("body")
    if body is not None:
        article.body_sections = _body_sections(body)
    return article


def _abstract(meta: etree._Element) -> list[AbstractSection]:
    abstracts = [a for a in meta.iterfind("abstract") if a.get("abstract-type") in (None, "", "structured", "summary")]
    if not abstracts:
        return []
    node = abstracts[0]
    sections = []
    for sec in node.iterfind("sec"):
        body = " ".join(filter(None, (_prose(p) for p in sec.iter("p"))))
        if body:
            sections.append(AbstractSection(label=text(sec.find("title")).rstrip(":").strip() or None, text=body))
    loose = " ".join(filter(None, (_prose(p) for p in node.iterfind("p"))))
    if loose:
        sections.insert(0, AbstractSection(text=loose))
    return sections


def _body_sections(body: etree._Element) -> list[BodySection]:
    """Every ``sec`` (nested ones too, in document order) with its own title and paragraphs;
    paragraphs directly under ``body`` form an untitled first section."""
    sections: list[BodySection] = []
    lead = _paragraphs(body)
    if lead:
        sections.append(BodySection(title=None, paragraphs=lead))
    for sec in body.iter("sec"):
        if any(a.tag in _SKIP for a in sec.iterancestors()):
            continue
        paragraphs = _paragraphs(sec)
        title = text(sec.find("title")) or None
        if paragraphs or title:
            sections.append(BodySection(title=title, paragraphs=paragraphs))
    return sections


def _paragraphs(container: etree._Element) -> list[str]:
    """Paragraphs of ``container`` itself, not of its sub-sections or floating figures and tables."""
    found: list[str] = []
    for child in container:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "p":
            para = _prose(child)
            if para:
                found.append(para)
        elif child.tag in _PROSE_CONTAINERS:
            found.extend(_paragraphs(child))
    return found


def _prose(elem: etree._Element | None) -> str:
    """Text of ``elem`` without embedded figures, tables and formulas."""
    if elem is None:
        return ""
    pieces: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.text:
            pieces.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and child.tag not in _SKIP:
                walk(child)
            if child.tail:
                pieces.append(child.tail)

    walk(elem)
    return clean_text("".join(pieces))


def _pub_date(meta: etree._Element) -> str | None:
    dates: dict[str, tuple[str, str, str]] = {}
    for node in meta.iterfind("pub-date"):
        kind = node.get("pub-type") or node.get("date-type") or ""
        year = text(node.find("year"))
        if year.isdigit() and len(year) == 4:
            dates.setdefault(kind, (year, text(node.find("month")), text(node.find("day"))))
    for kind in _DATE_PREFERENCE:
        if kind in dates:
            year, month, day = dates[kind]
            if not (month.isdigit() and 1 <= int(month) <= 12):
                return year
            if day.isdigit() and 1 <= int(day) <= 31:
                return f"{year}-{int(month):02d}-{int(day):02d}"
            return f"{year}-{int(month):02d}"
    return None


def render_pmc_article_set(records: list[bytes]) -> bytes:
    """Stored articles as one efetch ``db=pmc`` answer."""
    parts = [b'<?xml version="1.0" ?>\n', DOCTYPE, b"\n<pmc-articleset>"]
    parts += records
    parts.append(b"</pmc-articleset>\n")
    return b"".join(parts)
