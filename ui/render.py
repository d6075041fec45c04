"""Pure rendering helpers for the app: numbered citation links, badges, and cited-sentence highlighting.

Kept free of Streamlit so the logic is tested directly; ``app.py`` only lays the pieces out."""

from __future__ import annotations

import html
import re

from cpqa.answer.citations import MARKER, marker_pmids
from cpqa.documents.study_type import PRECLINICAL, badge as study_badge
from cpqa.references import record_heading
from cpqa.types import Passage

PUBMED_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
PMC_URL = "https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"

SOURCE_BADGES = {"D1": "Abstract", "D2": "Full text (review)", "D3": "Full text"}
RETRIEVAL_BADGES = {"E1": "found by semantic search", "E2": "found by Boolean search", "E3": "semantic + Boolean"}

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the a an and or of in on for to with is are was were be by at as from that this these those it its "
    "than then which who what when how not no may can".split()
)


_MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKDOWN_CHARS = str.maketrans({c: f"&#{ord(c)};" for c in "[]()*_`#~|\\"})


def plain_html(text: str) -> str:
    """Evidence text as inert HTML: tags escaped and Markdown's characters as entities, so nothing in an abstract
    renders as a link, an image or formatting."""
    return (
        html.escape(text, quote=False).translate(_MARKDOWN_CHARS).replace("://", "&#58;//").replace("www.", "www&#46;")
    )


def citation_numbers(text: str, citations: list[str]) -> dict[str, int]:
    """Number citations in order of first appearance in the text, then any remaining ones."""
    order: list[str] = []
    for match in MARKER.finditer(text):
        for pmid in marker_pmids(match.group(0)):
            if pmid not in order:
                order.append(pmid)
    for pmid in citations:
        if pmid not in order:
            order.append(pmid)
    return {pmid: i + 1 for i, pmid in enumerate(order)}


def link_for(passage_or_pmid: Passage | str, pmcid: str | None = None) -> str:
    """PubMed link, or the PMC full text when that is what the evidence came from."""
    if isinstance(passage_or_pmid, Passage):
        pmcid = passage_or_pmid.pmcid if passage_or_pmid.source in {"D2", "D3"} else None
        pmid = passage_or_pmid.pmid
    else:
        pmid = passage_or_pmid
    return PMC_URL.format(pmcid=pmcid) if pmcid else PUBMED_URL.format(pmid=pmid)


def linked_answer(text: str, numbers: dict[str, int], passages: list[Passage]) -> str:
    """Replace ``[PMID]`` groups with numbered Markdown links: ``[[1]](url)[[2]](url)``; any other Markdown link in
    the text (an echo of evidence) is reduced to its label, so the only links an answer carries are its citations."""
    by_pmid = {p.pmid: p for p in passages}
    text = _MARKDOWN_LINK.sub(lambda m: m.group(1), text)

    def replace(match: re.Match) -> str:
        links = []
        for pmid in marker_pmids(match.group(0)):
            target = link_for(by_pmid[pmid]) if pmid in by_pmid else link_for(pmid)
            links.append(f"[[{numbers.get(pmid, '?')}]]({target})")
        return "".join(links)

    return MARKER.sub(replace, text)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def claims_citing(text: str, pmid: str) -> list[str]:
    """The answer's sentences that cite ``pmid``."""
    return [s for s in _SENTENCE.split(text) if any(pmid in marker_pmids(m.group(0)) for m in MARKER.finditer(s))]


_QUOTED = re.compile(r'"([^"]{20,})"')


def highlighted_passage(passage: Passage, answer_text: str, min_overlap: float = 0.5, min_shared: int = 3) -> str:
    """The passage as HTML with the sentences that support the answer's claims citing it in <mark>.

    A claim that quotes (the extractive answer) marks the sentences it quotes and nothing else. A written claim
    marks a passage sentence that shares at least ``min_shared`` content words, and at least ``min_overlap`` of
    its content words, with it."""
    sentences = _SENTENCE.split(passage.text.strip())
    claims = claims_citing(answer_text, passage.pmid)
    quotes = [" ".join(q.split()) for claim in claims for q in _QUOTED.findall(claim)]
    written = [_words(c) for c in claims if not _QUOTED.search(c)]
    marked = set()
    for i, sentence in enumerate(sentences):
        flat = " ".join(sentence.split())
        if any(flat in quote or quote in flat for quote in quotes):
            marked.add(i)
            continue
        words = _words(sentence)
        for claim in written:
            shared = len(words & claim)
            if shared >= min_shared and shared / max(len(words), 1) >= min_overlap:
                marked.add(i)
    parts = [f"<mark>{plain_html(s)}</mark>" if i in marked else plain_html(s) for i, s in enumerate(sentences)]
    return " ".join(parts)


def badge(text: str, colour: str) -> str:
    return (
        f'<span style="background:{colour};color:#fff;border-radius:0.6em;padding:0.1em 0.6em;'
        f'font-size:0.8em;margin-right:0.3em">{html.escape(text)}</span>'
    )


def evidence_card(number: int | None, passage: Passage, answer_text: str, mode: str = "patient") -> str:
    """One evidence card as HTML: a readable heading (the title, or journal, year and first words of an untitled
    record), plain badges (study type, year, abstract or full text), the passage with what the answer cites from it
    marked. A clinician also sees how the record was found and its rerank score."""
    heading = plain_html(record_heading(passage.title, passage.text, passage.journal, passage.year))
    label = f"[{number}] " if number else ""
    badges = ""
    if passage.evidence_type and (mode == "clinician" or passage.evidence_type != "not indexed"):
        colour = "#b5651d" if passage.evidence_type in PRECLINICAL else "#1f7a7a"
        badges += badge(study_badge(passage.evidence_type), colour)
    if passage.year:
        badges += badge(str(passage.year), "#555555")
    badges += badge(SOURCE_BADGES.get(passage.source, passage.source), "#2f6f9f")
    if mode == "clinician":
        if passage.category:
            badges += badge(RETRIEVAL_BADGES.get(passage.category, passage.category), "#6b4f9f")
        badges += badge(f"rerank {passage.score:.3f}", "#4f7f4f")
    journal = html.escape(passage.journal) if passage.journal and passage.title else ""
    meta = " · ".join(x for x in (journal, f"PMID {html.escape(passage.pmid)}") if x)
    section = (
        f"<div style='color:#666;font-size:0.85em'>Section: {html.escape(passage.section)}</div>"
        if passage.section and mode == "clinician"
        else ""
    )
    return (
        f"<div class='evidence-card' style='border:1px solid #ddd;border-radius:0.5em;padding:0.7em;margin:0.5em 0'>"
        f"<div class='card-heading'><b>{label}<a href='{link_for(passage)}' target='_blank'>{heading}</a></b></div>"
        f"<div style='color:#555;font-size:0.85em'>{meta}</div>"
        f"<div style='margin:0.3em 0'>{badges}</div>{section}"
        f"<div style='font-size:0.92em'>{highlighted_passage(passage, answer_text)}</div></div>"
    )
