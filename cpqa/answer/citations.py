"""Checking the citations of a generated answer against the evidence it was given.

Citation markers (``[PMID:123]``, ``[PMID 123, 456]``, ``[123; 456]``, ``(PMID: 123)``, and for a section of an NIH
patient page ``[NIH:cancergov-0000001_1-2]``) are parsed sentence by sentence. Records that are not in the evidence
are removed and flagged; a sentence whose every citation was unknown is removed (its claim has no support), and
sentences that cite nothing are counted, so a reader of the flags can see how well grounded the answer is. Valid
markers are rewritten to one form, ``[PMID:123]`` or ``[NIH:key]``. A record's key is its PMID, or a patient section's
key (``PatientSection.key``), which is never shaped like a PMID.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cpqa.sentences import split_rough

PATIENT_KEY = r"[a-z][a-z0-9]*-\d[\w-]*"  # a patient page section's key: collection slug, MedQuAD's qid
_ID = rf"(?:(?:PMID\s*[:#]?\s*)?\d{{1,9}}|NIH\s*:\s*{PATIENT_KEY})"
MARKER = re.compile(
    rf"\[\s*{_ID}(?:\s*[,;]\s*{_ID})*\s*\]"
    rf"|\(\s*PMIDs?\s*[:#]?\s*\d{{1,9}}(?:\s*[,;]\s*{_ID})*\s*\)",
    re.IGNORECASE,
)
_KEYS = re.compile(rf"NIH\s*:\s*({PATIENT_KEY})|(\d{{1,9}})")


@dataclass
class CitationCheck:
    text: str
    citations: list[str] = field(default_factory=list)  # valid PMIDs, in order of first citation
    unknown: list[str] = field(default_factory=list)  # cited PMIDs not in the evidence (removed)
    removed_sentences: int = 0  # sentences whose only support was unknown PMIDs
    uncited_sentences: int = 0  # sentences with claims but no citation at all

    @property
    def flags(self) -> list[str]:
        flags = [f"removed_unknown_citation:{pmid}" for pmid in self.unknown]
        if self.removed_sentences:
            flags.append(f"removed_unsupported_sentences:{self.removed_sentences}")
        if self.uncited_sentences:
            flags.append(f"uncited_sentences:{self.uncited_sentences}")
        return flags


def marker_pmids(marker: str) -> list[str]:
    """The record keys a citation marker (a ``MARKER`` match) names, in order, without repeats: PMIDs, and patient
    sections' keys (never read as PMIDs: the digits inside a key are part of it)."""
    return list(dict.fromkeys(patient or pmid for patient, pmid in _KEYS.findall(marker)))


def citation_label(key: str) -> str:
    """How a record is cited in an answer's text: ``PMID:123``, or ``NIH:key`` for a patient page's section."""
    return f"PMID:{key}" if key.isdigit() else f"NIH:{key}"


def format_citation(pmids: list[str]) -> str:
    return "[" + ", ".join(citation_label(p) for p in pmids) + "]"


def sentences_of(line: str) -> list[str]:
    """Split a line into sentences, keeping a citation marker that follows a full stop with its sentence."""
    parts = split_rough(line)
    merged: list[str] = []
    for part in parts:
        if merged and not MARKER.sub("", part).strip(" .;,"):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


# A quoted extract, after an optional lead naming its study: '- Randomised trial, 2008: "Tamoxifen reduced ..."'.
_QUOTED_EXTRACT = re.compile(r'^[\s\-*•]*(?:[^"\n]{1,160}:\s*)?"(?P<quote>[^"]{10,})"\s*$')


def _unmarked(text: str) -> str:
    """``text`` without its citation markers, and without the spaces they leave before punctuation."""
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", text)).strip()


def claim_text(sentence: str) -> str:
    """The claim a sentence makes, without citation markers, bullets or quotation marks; of a quoted extract, the
    quote alone (the lead that names its study is the answerer's, not the evidence's)."""
    bare = _unmarked(sentence)
    quoted = _QUOTED_EXTRACT.match(bare)
    if quoted:
        return quoted.group("quote").strip()
    return bare.strip('-*• "“”').strip()


def claims_of(line: str) -> list[str]:
    """A line's claims: its sentences (``sentences_of``), or the whole line when it is a quoted extract, which is one
    claim whatever its full stops ("Corp.", "et al.")."""
    if _QUOTED_EXTRACT.match(_unmarked(line)):
        return [line]
    return sentences_of(line)


def cited_claims(text: str) -> list[tuple[str, list[str]]]:
    """The claims of an answer that quote or cite evidence (``claim_text``), each with the PMIDs it cites."""
    found = []
    for line in text.splitlines():
        for sentence in claims_of(line):
            pmids = [p for m in MARKER.finditer(sentence) for p in marker_pmids(m.group(0))]
            claim = claim_text(sentence) if pmids else ""
            if claim:
                found.append((claim, pmids))
    return found


def whole_sentences(text: str) -> str:
    """``text`` without a last sentence that was cut off (a streamed answer that broke mid-sentence)."""
    lines = text.rstrip().splitlines()
    if not lines:
        return ""
    *done, last = lines
    parts = sentences_of(last)
    if parts and not re.search(r"[.!?][\"')\]]*$", MARKER.sub("", parts[-1]).rstrip()):
        parts = parts[:-1]
    return "\n".join([*done, " ".join(parts)]).strip()


def is_claim(sentence: str) -> bool:
    """Headings, list labels and one-word lines make no claim that needs a citation."""
    bare = sentence.strip(" -*#•\t")
    return len(bare.split()) >= 4 and not bare.endswith(":")


def check_citations(text: str, known: set[str]) -> CitationCheck:
    """Keep only citations of ``known`` PMIDs; drop sentences supported only by unknown ones."""
    result = CitationCheck(text="")
    lines_out: list[str] = []
    for line in text.splitlines():
        kept: list[str] = []
        for sentence in claims_of(line):
            valid_here: list[str] = []
            invalid_here: list[str] = []

            def rewrite(marker: re.Match) -> str:
                pmids = marker_pmids(marker.group(0))
                good = [p for p in pmids if p in known]
                valid_here.extend(good)
                invalid_here.extend(p for p in pmids if p not in known)
                return format_citation(good) if good else ""

            new = MARKER.sub(rewrite, sentence)
            new = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", new)).rstrip()
            for pmid in invalid_here:
                if pmid not in result.unknown:
                    result.unknown.append(pmid)
            for pmid in valid_here:
                if pmid not in result.citations:
                    result.citations.append(pmid)
            if invalid_here and not valid_here:
                result.removed_sentences += 1
                continue
            if not valid_here and is_claim(new):
                result.uncited_sentences += 1
            kept.append(new)
        lines_out.append(" ".join(s for s in kept if s.strip()))
    result.text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines_out)).strip()
    return result


def citation_numbers(text: str, citations: list[str]) -> dict[str, int]:
    """Each cited record's number, as every front end shows it: in order of first appearance in ``text``, then any
    of ``citations`` the text does not mark."""
    order: list[str] = []
    for match in MARKER.finditer(text):
        for pmid in marker_pmids(match.group(0)):
            if pmid not in order:
                order.append(pmid)
    for pmid in citations:
        if pmid not in order:
            order.append(pmid)
    return {pmid: i + 1 for i, pmid in enumerate(order)}
