"""Passages of NIH patient pages (D4): the sections ``cpqa.documents.patient_search`` found, cut into chunks of whole
sentences a reader (and the answerer) can take in, each a ``Passage`` that cites the section by its key.

A section runs from a paragraph to several pages (a PDQ treatment section). Its first chunk usually says what the
section is about ("Signs of adult ALL include fever, ..."), so it is always kept; the chunk that covers most of the
question's words is kept beside it. Choosing by words keeps this free of any model call at question time."""

from __future__ import annotations

import re
from typing import Sequence

from cpqa.passages.seos import split_sentences
from cpqa.types import Passage, PatientHit
from cpqa.words import content_terms

_ITEM = re.compile(r"^\s*-\s+")
_RESOURCE_LIST = "These resources address"


_HEADING_LINE = re.compile(r"^(?:key points|points to remember)$", re.IGNORECASE)
_WHOLE_SENTENCE = re.compile(r"^[A-Z0-9(].*[.!?]$")
_OPEN_END = re.compile(r"[A-Za-z,]$")  # a line ending mid-sentence: what follows continues it


def _lists_joined(lines: list[str]) -> list[str]:
    """A line that introduces a list ("Signs include:", or one ending mid-sentence: "It is more common in men who")
    joined with its items into one sentence ("Signs include: fever; feeling tired; easy bruising."), so a quote of it
    is whole; an item that is a whole sentence on its own (a "Key Points" summary's) stands as one, and a heading
    line of its own is dropped."""
    out: list[str] = []
    for line in lines:
        if _HEADING_LINE.match(line):
            continue
        bare = _ITEM.sub("", line)
        if _ITEM.match(line) and _WHOLE_SENTENCE.match(bare) and not (out and out[-1].endswith((":", ";"))):
            out.append(bare)
            continue
        item = bare.rstrip(" .;") if _ITEM.match(line) else None
        if item and out and _OPEN_END.search(out[-1]) and not _ITEM.match(out[-1]):
            out[-1] += ":"  # "It is more common in men who" introduces its list as "... who:" would
        if item and out and (out[-1].endswith(":") or out[-1].endswith(";")):
            joined = out[-1][:-1] if out[-1].endswith((" or;", " and;")) else out[-1]  # "...; or" joins the next
            out[-1] = f"{joined} {item}" if item.endswith(":") else f"{joined} {item};"  # a nested list's own lead
        else:
            if out and out[-1].endswith(";") and ":" in out[-1]:
                out[-1] = out[-1][:-1] + "."
            out.append(line)
    if out and out[-1].endswith(";") and ":" in out[-1]:
        out[-1] = out[-1][:-1] + "."
    return out


def section_chunks(text: str, max_words: int) -> list[str]:
    """The section's lines (paragraphs and list items) and sentences packed into chunks of at most ``max_words``
    words (a longer sentence stands alone); a list introduced by a line ending in a colon becomes one sentence, any
    other list item stays on its own line."""
    chunks: list[list[str]] = [[]]
    words = 0
    for line in _lists_joined([line.strip() for line in text.splitlines() if line.strip()]):
        pieces = [line] if _ITEM.match(line) else [line[s.start : s.end] for s in split_sentences(line)] or [line]
        for piece in pieces:
            size = len(piece.split())
            if chunks[-1] and words + size > max_words:
                chunks.append([])
                words = 0
            chunks[-1].append(piece)
            words += size
    return [_joined(chunk) for chunk in chunks if chunk]


def section_sentences(text: str, max_words: int) -> list[str]:
    """The sentences of each of the section's chunks (``section_chunks``), in order, as the answer cuts a chunk."""
    return [chunk[s.start : s.end] for chunk in section_chunks(text, max_words) for s in split_sentences(chunk)]


def _joined(pieces: list[str]) -> str:
    """Sentences joined by spaces, list items on lines of their own."""
    text = ""
    for piece in pieces:
        glue = "\n" if _ITEM.match(piece) or (text and _ITEM.match(text.rsplit("\n", 1)[-1])) else " "
        text = f"{text}{glue}{piece}" if text else piece
    return text


def _coverage(chunk: str, wanted: set[str]) -> int:
    return len(wanted & set(content_terms(chunk)))


def patient_passages(hits: Sequence[PatientHit], question: str, max_words: int) -> list[Passage]:
    """Each section's first chunk and, when another covers more of ``question``'s words, that chunk too, best
    section first (the search's order)."""
    wanted = set(content_terms(question))
    passages: list[Passage] = []
    for hit in hits:
        section = hit.section
        if section.text.startswith(_RESOURCE_LIST):  # Genetics Home Reference's list of other sites, no answer
            continue
        chunks = section_chunks(section.text, max_words)
        if not chunks:
            continue
        chosen = [0]
        best = max(range(len(chunks)), key=lambda i: (_coverage(chunks[i], wanted), -i))
        if best != 0 and _coverage(chunks[best], wanted) > _coverage(chunks[0], wanted):
            chosen.append(best)
        for place in chosen:
            passages.append(
                Passage(
                    node_id=f"patient:{section.key}:{place}",
                    pmid=section.key,
                    text=chunks[place],
                    score=hit.score,
                    source="D4",
                    title=section.title,
                    section=section.heading,
                    site=section.site,
                    url=section.url,
                    kind=section.kind,
                )
            )
    return passages


__all__ = ["patient_passages", "section_chunks", "section_sentences"]
