"""The E-utilities mirror's request logic, independent of HTTP (served by ``cpqa.sources.mirror_server``).

It answers ``esearch`` (db=pubmed: term, retmax, retstart, sort, mindate/maxdate) with NCBI's eSearchResult and
``efetch`` with a PubmedArticleSet (db=pubmed) or a pmc-articleset (db=pmc), so the E-utilities client, Bio.Entrez
and the ladder run unchanged against it. Its answers follow NCBI's, as recorded in ``../shared/data/eutils`` and
in the field: a parameter error is an ``<ERROR>`` document under the DTD's DOCTYPE with HTTP 200 (so
``Bio.Entrez.read`` raises RuntimeError, as on NCBI), zero hits list each phrase that matches nothing under
``PhraseNotFound``, and PubMed's 9,999-record esearch window is kept: a page reaching past it is cut with NCBI's
"Restrictions achieved" message, a ``retstart`` past 9,998 is NCBI's error.
"""

from __future__ import annotations

import re
from typing import Sequence
from xml.sax.saxutils import escape

from cpqa.sources.boolean import BooleanQueryError, parse, to_query
from cpqa.sources.ncbi.client import normalize_pmcids, normalize_pmids
from cpqa.sources.ncbi.jats import render_pmc_article_set
from cpqa.sources.ncbi.pubmed_xml import render_pubmed_article_set
from cpqa.sources.store import Store
from cpqa.sources.store_search import positive_terms
from cpqa.types import SearchResult

DOCTYPES = {
    "eSearchResult": '<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">',
    "eFetchResult": '<!DOCTYPE eFetchResult PUBLIC "-//NLM//DTD efetch 20131226//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20131226/efetch.dtd">',
}
XML_HEAD = '<?xml version="1.0" encoding="UTF-8" ?>\n'
WINDOW = 9999  # PubMed esearch serves the first 9,999 records of a result (offsets 0-9,998), whatever retmax says
RETSTART_ERROR = (
    "Search Backend failed: Exception:\n'retstart' cannot be larger than 9998. For PubMed, ESearch can "
    "only retrieve the first 9,999 records matching the query. To obtain more than 9,999 PubMed "
    "records, consider using EDirect that contains additional logic to batch PubMed search results "
    "automatically so that an arbitrary number can be retrieved. For details see "
    "https://www.ncbi.nlm.nih.gov/books/NBK25499/"
)
_DATE = re.compile(r"^\d{4}(?:[/-](?:0?[1-9]|1[0-2])(?:[/-](?:0?[1-9]|[12]\d|3[01]))?)?$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class EutilsError(ValueError):
    """A request NCBI answers with an ``<ERROR>`` document (HTTP 200) rather than a result."""

    def __init__(self, message: str, root: str = "eSearchResult"):
        super().__init__(message)
        self.root = root


def esearch_xml(
    result: SearchResult,
    retstart: int,
    translation: str,
    errors: Sequence[tuple[str, str]] = (),
    warnings: Sequence[tuple[str, str]] = (),
) -> bytes:
    """An eSearchResult document in NCBI's element order (see the esearch DTD)."""
    ids = "".join(f"<Id>{escape(p)}</Id>\n" for p in result.pmids)
    parts = [
        XML_HEAD,
        DOCTYPES["eSearchResult"],
        "\n",
        f"<eSearchResult><Count>{result.count}</Count><RetMax>{len(result.pmids)}</RetMax>"
        f"<RetStart>{retstart}</RetStart>",
        f"<IdList>\n{ids}</IdList>" if ids else "<IdList/>",
        f"<TranslationSet/><QueryTranslation>{escape(translation)}</QueryTranslation>",
    ]
    if errors:
        parts.append("<ErrorList>" + "".join(f"<{t}>{escape(v)}</{t}>" for t, v in errors) + "</ErrorList>")
    if warnings:
        parts.append("<WarningList>" + "".join(f"<{t}>{escape(v)}</{t}>" for t, v in warnings) + "</WarningList>")
    parts.append("</eSearchResult>\n")
    return "".join(parts).encode("utf-8")


def error_xml(message: str, root: str) -> bytes:
    """NCBI's error document: the root of the answer the request asked for, holding one ``<ERROR>``."""
    return f"{XML_HEAD}{DOCTYPES[root]}\n<{root}>\n\t<ERROR>{escape(message)}</ERROR>\n</{root}>\n".encode("utf-8")


def _int(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name, "").strip()
    if value == "":
        return default
    if not (value.isascii() and value.isdigit()):  # "²".isdigit() is True, int("²") fails
        raise EutilsError(f"{name} must be a non-negative integer")
    return int(value)


def _date(params: dict[str, str], name: str) -> str | None:
    value = params.get(name, "").strip()
    if value and not _DATE.match(value):
        raise EutilsError(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD")
    return value or None


class Mirror:
    """Flattened request parameters -> an XML body, or ``EutilsError``."""

    def __init__(self, store: Store):
        self.store = store

    def esearch(self, params: dict[str, str]) -> bytes:
        _check_characters(params, "eSearchResult")
        if params.get("db", "pubmed") != "pubmed":
            raise EutilsError(f"Invalid db name specified: {params.get('db')}")
        term = params.get("term", "").strip()
        if not term:
            raise EutilsError("Empty term and query_key - nothing todo")
        retmax, retstart = _int(params, "retmax", 20), _int(params, "retstart", 0)
        if retstart > WINDOW - 1:
            raise EutilsError(RETSTART_ERROR)
        warnings: list[tuple[str, str]] = []
        if retstart + retmax > WINDOW:
            retmax = WINDOW - retstart
            warnings.append(
                ("OutputMessage", f"Restrictions achieved. start and count adjusted to {retstart}, {retmax}")
            )
        sort = params.get("sort", "relevance")
        if sort not in ("relevance", ""):
            warnings.append(("OutputMessage", f"sort={sort} is not supported by the mirror; relevance order used"))
        if params.get("datetype", "pdat") not in ("pdat", ""):
            warnings.append(("OutputMessage", f"datetype={params['datetype']} is not supported; pdat used"))
        mindate, maxdate = _date(params, "mindate"), _date(params, "maxdate")
        try:
            node = parse(term)
        except BooleanQueryError as exc:  # NCBI answers an unusable term with zero hits and an error list
            return esearch_xml(
                SearchResult(count=0, pmids=[]),
                retstart,
                term,
                errors=[("PhraseNotFound", term)],
                warnings=[*warnings, ("OutputMessage", f"Invalid query: {exc}"), ("OutputMessage", "No items found.")],
            )
        result = self.store.search(term, retmax=retmax, retstart=retstart, mindate=mindate, maxdate=maxdate)
        errors = []
        if result.count == 0:
            errors = [
                ("PhraseNotFound", t.text)
                for t in dict.fromkeys(positive_terms(node, negated_too=True))
                if self.store.search(to_query(t), retmax=0).count == 0
            ]
            warnings.append(("OutputMessage", "No items found."))
        return esearch_xml(result, retstart, result.query_translation or term, errors=errors, warnings=warnings)

    def efetch(self, params: dict[str, str]) -> bytes:
        _check_characters(params, "eFetchResult")
        db = params.get("db", "pubmed")
        raw_ids = [i for i in params.get("id", "").replace(" ", ",").split(",") if i]
        if db not in ("pubmed", "pmc"):
            raise EutilsError(f"Invalid db name specified: {db}", root="eFetchResult")
        if not raw_ids:
            raise EutilsError("Empty id list - nothing todo", root="eFetchResult")
        try:
            if db == "pubmed":
                pmids = normalize_pmids(raw_ids)
                raw = self.store.raw_xml(pmids)  # records that arrived without XML come back rendered
                return render_pubmed_article_set([raw[p] for p in pmids if p in raw])
            pmcids = normalize_pmcids(raw_ids)
            raw = self.store.raw_pmc_xml(pmcids)
            return render_pmc_article_set([raw[p] for p in pmcids if p in raw])
        except ValueError as exc:
            raise EutilsError(str(exc), root="eFetchResult") from None


def _check_characters(params: dict[str, str], root: str) -> None:
    for name, value in params.items():
        if _CONTROL.search(name) or _CONTROL.search(value):
            raise EutilsError(f"Invalid character in parameter {_CONTROL.sub('?', name)[:40]!r}", root=root)
