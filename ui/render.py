"""Pure rendering helpers for the app: numbered citation links, badges, cited-sentence highlighting, evidence cards
(one a record, capped, the whole abstract a click away) and the style that pins the urgent message.

Kept free of Streamlit so the logic is tested directly; ``app.py`` only lays the pieces out."""

from __future__ import annotations

import html
import re

from cpqa.answer.citations import MARKER, marker_pmids
from cpqa.documents.study_type import PRECLINICAL, badge as study_badge
from cpqa.references import PMC_URL, PUBMED_URL, passage_heading, passage_link, record_heading
from cpqa.types import Passage
from cpqa.words import content_terms, strip_labels

SOURCE_BADGES = {"D1": "Abstract", "D2": "Full text (review)", "D3": "Full text", "D4": "Patient information"}
RETRIEVAL_BADGES = {"E1": "found by semantic search", "E2": "found by Boolean search", "E3": "semantic + Boolean"}

# A sentence ends at . ! or ? before a capital, a bracket or a number, but not inside one ("between 1. 9 and 8. 6").
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])|(?<=\D[.!?])\s+(?=[0-9])")

# The urgent message stays in view while its answer is read: the app puts it in a container keyed URGENT_KEY + n,
# which sticks below the app's header within its own answer (the chat scrolls to the answer's end when it
# completes). At phone width it stays compact: at most a quarter of the screen, any more of it scrolled inside it.
URGENT_KEY = "urgent-"
URGENT_STYLE = f"""<style>
[data-testid="stLayoutWrapper"]:has(> [class*="st-key-{URGENT_KEY}"]) {{
  position: sticky; top: 3.75rem; z-index: 99;
  background-color: var(--cpqa-page, #ffffff); border-radius: 0.5rem;
}}
@media (prefers-color-scheme: dark) {{
  [data-testid="stLayoutWrapper"]:has(> [class*="st-key-{URGENT_KEY}"]) {{ --cpqa-page: #0e1117; }}
}}
@media (max-width: 640px) {{
  [class*="st-key-{URGENT_KEY}"] [data-testid="stAlertContainer"] {{ max-height: 25vh; overflow-y: auto; }}
  [class*="st-key-{URGENT_KEY}"] [data-testid="stAlertContainer"] p {{ font-size: 0.9rem; line-height: 1.4; }}
}}
</style>"""


_MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKDOWN_CHARS = str.maketrans({c: f"&#{ord(c)};" for c in "[]()*_`#~|\\"})


def plain_html(text: str) -> str:
    """Evidence text as inert HTML: tags escaped and Markdown's characters as entities, so nothing in an abstract
    renders as a link, an image or formatting."""
    return (
        html.escape(text, quote=False).translate(_MARKDOWN_CHARS).replace("://", "&#58;//").replace("www.", "www&#46;")
    )


def link_for(passage_or_pmid: Passage | str, pmcid: str | None = None) -> str:
    """The patient page, the PMC full text the evidence came from, or PubMed."""
    if isinstance(passage_or_pmid, Passage):
        return passage_link(passage_or_pmid)
    return PMC_URL.format(pmcid=pmcid) if pmcid else PUBMED_URL.format(pmid=passage_or_pmid)


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
    return set(content_terms(text))


def claims_citing(text: str, pmid: str) -> list[str]:
    """The answer's sentences that cite ``pmid``."""
    return [s for s in _SENTENCE.split(text) if any(pmid in marker_pmids(m.group(0)) for m in MARKER.finditer(s))]


_QUOTED = re.compile(r'"([^"]{20,})"')


def marked_sentences(
    sentences: list[str], pmid: str, answer_text: str, min_overlap: float = 0.5, min_shared: int = 3
) -> set[int]:
    """Which of a record's ``sentences`` support the answer's claims citing ``pmid``.

    A claim that quotes (the extractive answer) marks the sentences it quotes (spacing aside) and nothing else. A
    written claim marks a sentence that shares at least ``min_shared`` content words, and at least ``min_overlap``
    of its content words, with it."""
    claims = claims_citing(answer_text, pmid)
    quotes = ["".join(q.split()) for claim in claims for q in _QUOTED.findall(claim)]
    written = [_words(c) for c in claims if not _QUOTED.search(c)]
    marked = set()
    for i, sentence in enumerate(sentences):
        flat = "".join(sentence.split())  # spacing aside: a quote's "P=.21" is the record's "P= .21"
        if flat and any(flat in quote or quote in flat for quote in quotes):
            marked.add(i)
            continue
        words = _words(sentence)
        for claim in written:
            shared = len(words & claim)
            if shared >= min_shared and shared / max(len(words), 1) >= min_overlap:
                marked.add(i)
    return marked


def _marked_html(sentences: list[str], marked: set[int]) -> str:
    return " ".join(f"<mark>{plain_html(s)}</mark>" if i in marked else plain_html(s) for i, s in enumerate(sentences))


def highlighted_passage(passage: Passage, answer_text: str, min_overlap: float = 0.5, min_shared: int = 3) -> str:
    """The passage as HTML with the sentences that support the answer's claims citing it in <mark>."""
    sentences = _SENTENCE.split(passage.text.strip())
    return _marked_html(sentences, marked_sentences(sentences, passage.pmid, answer_text, min_overlap, min_shared))


def highlighted_record(text: str, pmid: str, answer_text: str) -> str:
    """A whole record (an abstract, one "LABEL: text" section a line) as HTML, a paragraph a line, with the
    sentences the answer cites from it in <mark>."""
    lines = [_SENTENCE.split(line.strip()) for line in text.splitlines() if line.strip()]
    marked = marked_sentences([s for line in lines for s in line], pmid, answer_text)
    paragraphs, first = [], 0
    for line in lines:
        paragraphs.append(_marked_html(line, {i - first for i in marked if first <= i < first + len(line)}))
        first += len(line)
    return "".join(f"<p style='margin:0.3em 0'>{p}</p>" for p in paragraphs)


# ---------------------------------------------------------------- evidence cards, one a record
CARD_CHARACTERS = 600  # what a card shows of the evidence before "Show the whole abstract"


def record_groups(passages: list[Passage]) -> list[list[Passage]]:
    """The evidence one record at a time, records in the order of their best passage; a record's passages in the
    order they stand in it (by offset, when known)."""
    groups: dict[str, list[Passage]] = {}
    for passage in passages:
        groups.setdefault(passage.pmid, []).append(passage)
    return [sorted(group, key=lambda p: p.start if p.start is not None else float("inf")) for group in groups.values()]


def split_preclinical(groups: list[list[Passage]]) -> tuple[list[list[Passage]], list[list[Passage]]]:
    """Studies of people, and studies in animals or cells (``PRECLINICAL``), each in the order given."""
    human = [g for g in groups if g[0].evidence_type not in PRECLINICAL]
    return human, [g for g in groups if g[0].evidence_type in PRECLINICAL]


def _record_sentences(passages: list[Passage]) -> list[str]:
    """A record's passages' sentences in record order, without a sentence twice where passages overlap."""
    sentences: list[str] = []
    for passage in passages:
        for sentence in _SENTENCE.split(passage.text.strip()):
            if sentence.strip() and sentence not in sentences:
                sentences.append(sentence)
    return sentences


def _flat(pieces: list[str]) -> list[str]:
    """The words of a record's lines or sentences, without their section labels (to tell whether a card already
    shows the whole record)."""
    return content_terms(" ".join(strip_labels(piece) for piece in pieces))


def excerpt(sentences: list[str], marked: set[int], lead: int = 0, limit: int = CARD_CHARACTERS) -> list[int]:
    """The sentences a card shows, in order: every cited one that fits in ``limit`` characters (else sentence
    ``lead``; always one whole sentence), then the ones after the first of them, then the ones before, while they
    fit."""
    if not sentences:
        return []
    chosen: list[int] = []
    used = 0
    for i in sorted(marked) or [min(lead, len(sentences) - 1)]:
        if chosen and used + len(sentences[i]) > limit:
            break
        chosen.append(i)
        used += len(sentences[i]) + 1
    first = chosen[0]
    for i in [*range(first + 1, len(sentences)), *range(first - 1, -1, -1)]:
        if i not in chosen:
            if used + len(sentences[i]) > limit:
                break
            chosen.append(i)
            used += len(sentences[i]) + 1
    return sorted(chosen)


def _with_gaps(sentences: list[str], shown: list[int], marked: set[int]) -> str:
    """The shown sentences as HTML, cited ones in <mark>, "…" wherever the record goes on between or around them."""
    parts = ["…"] if shown[0] > 0 else []
    for n, i in enumerate(shown):
        if n and i != shown[n - 1] + 1:
            parts.append("…")
        sentence = plain_html(sentences[i])
        parts.append(f"<mark>{sentence}</mark>" if i in marked else sentence)
    if shown[-1] < len(sentences) - 1:
        parts.append("…")
    return " ".join(parts)


def card_evidence(passages: list[Passage], answer_text: str, record_text: str | None = None) -> str:
    """What a card shows of a record: the passages used (joined in record order, what the answer cites in <mark>),
    at most ``CARD_CHARACTERS`` of them, then the whole abstract (or the whole passages) behind a click."""
    sentences = _record_sentences(passages)
    marked = marked_sentences(sentences, passages[0].pmid, answer_text)
    best = max(passages, key=lambda p: p.score)
    best_first = _SENTENCE.split(best.text.strip())[0]
    lead = sentences.index(best_first) if best_first in sentences else 0  # no mark: the best passage leads
    chosen = excerpt(sentences, marked, lead)
    shown = _with_gaps(sentences, chosen, marked)
    whole_abstract = bool(record_text and record_text.strip()) and passages[0].source in ("D1", "D4")
    everything = len(chosen) == len(sentences)
    if everything and (not whole_abstract or _flat((record_text or "").splitlines()) == _flat(sentences)):
        return f"<div class='card-passage'>{shown}</div>"
    if whole_abstract:
        whole = "Show the whole section" if passages[0].is_patient_information else "Show the whole abstract"
        label, rest = whole, highlighted_record(record_text or "", passages[0].pmid, answer_text)
    else:
        label, rest = "Show the whole passage", f"<p style='margin:0.3em 0'>{_marked_html(sentences, marked)}</p>"
    return (
        f"<div class='card-passage'>{shown}</div>"
        f"<details class='card-record' style='margin-top:0.4em'><summary style='cursor:pointer;color:#2f6f9f'>"
        f"{label}</summary>{rest}</details>"
    )


def badge(text: str, colour: str) -> str:
    return (
        f'<span style="background:{colour};color:#fff;border-radius:0.6em;padding:0.1em 0.6em;'
        f'font-size:0.8em;margin-right:0.3em">{html.escape(text)}</span>'
    )


def evidence_card(
    number: int | None,
    passages: Passage | list[Passage],
    answer_text: str,
    mode: str = "patient",
    record_text: str | None = None,
) -> str:
    """One evidence card a record, as HTML: a readable heading (the title, or journal, year and first words of an
    untitled record), plain badges (study type, year, abstract or full text), the passages used with what the
    answer cites from them marked, capped, and the whole abstract (``record_text``) behind a click. A clinician also
    sees how the record was found, its best rerank score and the sections used."""
    group = [passages] if isinstance(passages, Passage) else record_groups(passages)[0]
    first, best = group[0], max(group, key=lambda p: p.score)
    opening = record_text if record_text and record_text.strip() else first.text
    heading = plain_html(
        passage_heading(first)
        if first.is_patient_information
        else record_heading(first.title, opening, first.journal, first.year)
    )
    label = f"[{number}] " if number else ""
    badges = ""
    if first.evidence_type and (mode == "clinician" or first.evidence_type != "not indexed"):
        colour = "#b5651d" if first.evidence_type in PRECLINICAL else "#1f7a7a"
        badges += badge(study_badge(first.evidence_type), colour)
    if first.year:
        badges += badge(str(first.year), "#555555")
    badges += badge(SOURCE_BADGES.get(first.source, first.source), "#2f6f9f")
    if mode == "clinician":
        if best.category:
            badges += badge(RETRIEVAL_BADGES.get(best.category, best.category), "#6b4f9f")
        badges += badge(f"rerank {best.score:.3f}", "#4f7f4f")
    journal = html.escape(first.journal) if first.journal and first.title else ""
    source = "written for patients and reviewed by experts" if first.is_patient_information else ""
    meta = " · ".join(x for x in (journal, source or f"PMID {html.escape(first.pmid)}") if x)
    sections = ", ".join(dict.fromkeys(p.section for p in group if p.section))
    section = (
        f"<div style='color:#666;font-size:0.85em'>Section: {html.escape(sections)}</div>"
        if sections and mode == "clinician"
        else ""
    )
    return (
        f"<div class='evidence-card' style='border:1px solid #ddd;border-radius:0.5em;padding:0.7em;margin:0.5em 0'>"
        f"<div class='card-heading'><b>{label}<a href='{link_for(first)}' target='_blank'>{heading}</a></b></div>"
        f"<div style='color:#555;font-size:0.85em'>{meta}</div>"
        f"<div style='margin:0.3em 0'>{badges}</div>{section}"
        f"<div style='font-size:0.92em'>{card_evidence(group, answer_text, record_text)}</div></div>"
    )
