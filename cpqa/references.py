"""How a record is named to a reader: its title, or, for a record without one (many PubMedQA and Hallmarks
abstracts), its journal and year with its first words, so no reference or evidence card reads "(untitled)"."""

from __future__ import annotations

from cpqa.types import Passage
from cpqa.words import strip_labels

PUBMED_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
PMC_URL = "https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"

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


def passage_heading(passage: Passage) -> str:
    """How a reference names a passage's record: a patient page by its site, page and section ("cancer.gov (NCI):
    Adult Acute Lymphoblastic Leukemia Treatment (PDQ), Signs and symptoms"), a study by its title or first words."""
    if passage.is_patient_information:
        section = f", {passage.section}" if passage.section else ""
        return f"{passage.site or 'NIH'}: {passage.title}{section}"
    return record_heading(passage.title, passage.text, passage.journal, passage.year)


def passage_link(passage: Passage) -> str:
    """Where a reader finds the record: the patient page, the PMC full text the evidence came from, or PubMed."""
    if passage.is_patient_information and passage.url:
        return passage.url
    if passage.source in ("D2", "D3") and passage.pmcid:
        return PMC_URL.format(pmcid=passage.pmcid)
    return PUBMED_URL.format(pmid=passage.pmid)
