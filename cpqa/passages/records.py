"""A record as SEOS sees it: the text its offsets refer to (the abstract, then each full-text section), the nodes of
a record laid out by SEOS with the record's own metadata, and the record's conclusions for a passage that lacks them.
"""

from __future__ import annotations

import numpy as np
from llama_index.core.schema import TextNode

from cpqa.passages.layout import RecordLayout
from cpqa.passages.seos import SEOSNodeParser, layout_nodes
from cpqa.types import Article


def source_text(article: Article) -> tuple[str, list[tuple[str | None, int, int]]]:
    """The text SEOS offsets refer to, and its sections as ``(title, start, end)``.

    The abstract comes first, exactly as ``Article.abstract``; each body section follows after a blank
    line, its title on a line of its own (outside the section's range, kept as metadata).
    """
    parts: list[str] = []
    sections: list[tuple[str | None, int, int]] = []
    cursor = 0

    def add(piece: str, title: str | None) -> None:
        nonlocal cursor
        if parts:
            parts.append("\n\n")
            cursor += 2
        if title and article.body_sections:
            parts.append(title + "\n")
            cursor += len(title) + 1
        parts.append(piece)
        sections.append((title, cursor, cursor + len(piece)))
        cursor += len(piece)

    if article.abstract:  # without a body, each chunk is named after the abstract labels it covers
        add(article.abstract, "Abstract" if article.body_sections else None)
    for number, body in enumerate(article.body_sections, 1):
        paragraphs = "\n\n".join(p.strip() for p in body.paragraphs if p.strip())
        if paragraphs:
            add(paragraphs, body.title or f"Section {number}")
    return "".join(parts), sections


def _abstract_labels(article: Article, start: int, end: int) -> str | None:
    """The labels of the abstract sections that ``[start, end)`` overlaps, e.g. "RESULTS; CONCLUSIONS"."""
    labels, cursor = [], 0
    for section in article.abstract_sections:
        length = len(f"{section.label}: {section.text}" if section.label else section.text)
        if section.label and cursor < end and start < cursor + length:
            labels.append(section.label)
        cursor += length + 1
    return "; ".join(labels) or "Abstract"


def article_nodes(
    article: Article,
    layout: RecordLayout,
    *,
    source: str = "D1",
    category: str | None = None,
    embeddings: np.ndarray | None = None,
) -> list[TextNode]:
    """The nodes of ``article`` laid out as ``layout`` (of ``source_text(article)``); a chunk of an abstract without
    body sections is named after the abstract labels it covers."""
    text, _ = source_text(article)
    metadata = {
        "pmid": article.pmid,
        "pmcid": article.pmcid,
        "source": source,
        "category": category,
        "title": article.title,
        "year": article.year,
        "journal": article.journal,
    }
    nodes = layout_nodes(f"article:{article.key}", metadata, text, layout, embeddings)
    conclusion = record_conclusion(article)
    for node in nodes:
        if node.metadata["section"] is None:
            node.metadata["section"] = _abstract_labels(article, node.metadata["start"], node.metadata["end"])
        if conclusion and conclusion not in node.text:  # the record's answer, beside a passage that lacks it
            node.metadata["conclusion"] = conclusion
    return nodes


def record_conclusion(article: Article) -> str | None:
    """The record's conclusions (its abstract's CONCLUSIONS sections), for an answerer reading another passage."""
    parts = [
        s.text
        for s in article.abstract_sections
        if (s.nlm_category or "").upper() == "CONCLUSIONS" or "CONCLUSION" in (s.label or "").upper()
    ]
    return " ".join(parts) or None


def segment_article(
    article: Article, *, source: str = "D1", category: str | None = None, parser: SEOSNodeParser | None = None
) -> list[TextNode]:
    """SEOS nodes of one article: the abstract, then each full-text section segmented on its own."""
    parser = parser or SEOSNodeParser.from_settings()
    text, sections = source_text(article)
    if not text:
        return []
    return article_nodes(article, parser.layout(text, sections), source=source, category=category)
