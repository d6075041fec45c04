"""How a record is named to a reader: its title, or, for a record without one (many PubMedQA and Hallmarks
abstracts), its journal and year with its first words, so no reference or evidence card reads "(untitled)"."""

from __future__ import annotations

from cpqa.words import strip_labels

HEADING_WORDS = 14  # the first words that stand in for a missing title


def record_heading(title: str | None, text: str = "", journal: str | None = None, year: int | None = None) -> str:
    """``title``, else "Journal, year: the record's first words..." (whatever of those the record has)."""
    if title and title.strip():
        return title.strip()
    words = strip_labels(" ".join(text.split())).split(" ")  # a structured abstract's "BACKGROUND:" is no heading
    opening = " ".join(words[:HEADING_WORDS]) + ("..." if len(words) > HEADING_WORDS else "")
    source = ", ".join(str(x) for x in (journal, year) if x and x != "unknown")
    if source and opening:
        return f"{source}: {opening}"
    return source or opening or "A PubMed record"


def record_source(journal: str | None, year: int | None) -> str:
    """ "Journal, year" for a reference line; empty when neither is known."""
    return ", ".join(str(x) for x in (journal, year) if x and x != "unknown")
