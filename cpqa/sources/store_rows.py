"""How one store row is represented: a PubMed side and a PMC side, each kept as zlib-packed JSON plus
the record's own XML and a content hash; the merged article; and the text the FTS5 index holds."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Literal

from cpqa.sources.store_search import SEPARATOR
from cpqa.types import Article

Kind = Literal["pubmed", "pmc"]


@dataclass
class UpsertSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (key or position, reason)
    deleted: int = 0  # withdrawn by an update file's DeleteCitation

    def merge(self, other: "UpsertSummary") -> None:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.skipped.extend(other.skipped)
        self.deleted += other.deleted


class Row:
    """An article row while a batch is applied; a side's JSON is unpacked only when needed."""

    def __init__(
        self,
        id: int,
        pmid: str | None = None,
        pmcid: str | None = None,
        blobs: tuple = (None,) * 6,
        new: bool = False,
        updated: float | None = None,
    ):
        self.id, self.pmid, self.pmcid, self.new, self.updated = id, pmid, pmcid, new, updated
        self.packed: dict[str, bytes | None] = {"pubmed": blobs[0], "pmc": blobs[3]}
        self.raw: dict[str, bytes | None] = {"pubmed": blobs[1], "pmc": blobs[4]}
        self.hash: dict[str, str | None] = {"pubmed": blobs[2], "pmc": blobs[5]}
        self._parts: dict[str, Article | None] = {}

    def part(self, kind: Kind) -> Article | None:
        if kind not in self._parts:
            self._parts[kind] = unpack(self.packed[kind])
        return self._parts[kind]

    def set_part(self, kind: Kind, article: Article, raw: bytes | None, digest: str) -> None:
        self._parts[kind] = article
        self.packed[kind] = pack(article)
        self.raw[kind] = zlib.compress(raw, 1) if raw is not None else None
        self.hash[kind] = digest

    @property
    def article(self) -> Article:
        return merge_parts(self.part("pubmed"), self.part("pmc"))


def merge_parts(pm: Article | None, pmc: Article | None) -> Article:
    """PubMed metadata first; the PMC side adds full text, article type and whatever PubMed lacks."""
    if pm is None or pmc is None:
        return pm or pmc or Article()
    update = {
        name: getattr(pm, name) or getattr(pmc, name)
        for name in ("pmcid", "doi", "title", "abstract_sections", "keywords", "journal", "publication_types")
    }
    if not pm.pub_date and not pm.year:
        update.update(pub_date=pmc.pub_date, year=pmc.year)
    update.update(article_type=pmc.article_type, body_sections=pmc.body_sections)
    return pm.model_copy(update=update)


def fts_values(article: Article) -> tuple[str, ...]:
    """The indexed text of an article, in ``FTS_COLUMNS`` order."""
    sep = f" {SEPARATOR} "
    return (
        article.title,
        article.abstract,
        sep.join(article.keywords),
        sep.join(h.descriptor for h in article.mesh),
        sep.join(h.descriptor for h in article.mesh if h.is_major),
        sep.join(article.publication_types),
    )


def pack(article: Article) -> bytes:
    return zlib.compress(article.model_dump_json(exclude_defaults=True).encode(), 1)


def unpack(blob: bytes | None) -> Article | None:
    return Article.model_validate_json(zlib.decompress(blob)) if blob else None


def record_kind(article: Article, raw: bytes | None) -> Kind:
    if raw is not None:
        return "pmc" if raw.lstrip()[:8] == b"<article" else "pubmed"
    return "pmc" if article.body_sections or article.article_type else "pubmed"
