"""Evidence is data: which sentences of a retrieved record may be quoted to a reader, and which may not.

Published findings are third-person statements. A sentence that instead addresses its reader (second person,
an imperative such as "ignore ... instructions" or "tell the patient to ..."), or carries a link, markup or a
citation marker of its own, is not a finding: quoted, it would speak to the patient in a stranger's voice, and
its markers would pass as our citations. Such sentences are never quoted, and a passage holding one ranks below
the passages that do not. A patient-information page (D4: cancer.gov, MedlinePlus) is written to its reader ("Check
with your doctor if you have ..."): there the second person and a plain imperative are its voice, not a stranger's;
links, markup, citation markers and instructions about instructions are refused as anywhere else.

A shared layer (beside ``cpqa.words`` and ``cpqa.sentences``): stage 4 ranks a passage that addresses its reader
below the others, and stage 5 never quotes such a sentence nor one that directs a treatment change.
"""

from __future__ import annotations

import re

from cpqa.sentences import split_rough

URL = re.compile(
    r"(?i)\b(?:https?|ftp)://\S+|\bwww\.[^\s.]+\.\S+|\b[\w-]+\.(?:com|org|net|io|info|biz|xyz|ru|cn)"
    r"(?:/\S*)?\b|\bjavascript:"
)
_TAGS = (
    "a|abbr|b|blockquote|body|br|button|code|div|em|embed|form|h[1-6]|head|hr|html|i|iframe|img|input|li|link|"
    "meta|object|ol|p|pre|script|span|strong|style|sub|sup|svg|table|td|th|tr|u|ul"
)
MARKUP = re.compile(
    rf"\[[^\]]+\]\(\s*(?:https?:|ftp:|www\.|mailto:|javascript:|/|#)[^)]*\)"  # Markdown links, images
    rf"|<\s*/?\s*(?:{_TAGS})\b[^>]*>"  # HTML tags
    r'|<\s*[A-Za-z][\w:.-]*(?:\s+[\w:.-]+\s*=\s*"[^"]*")+\s*/?>'  # any element with attributes, and PubMed's
    r"|<\s*/?\s*(?:AbstractText|Abstract|CopyrightInformation)\b[^>]*>"  # abstract elements: XML a record kept from
    # before its cleaning (``<AbstractText Label="...">``, ``cpqa.sources.clean_text``)
    rf"|\*\*\S[^*]*\*\*|```|^#{{1,6}}\s"  # bold, code fences, headings
    rf"|\x1b[\[\]]"
)  # terminal escapes (colours, OSC 8 hyperlinks)
CITATION_MARKER = re.compile(
    r"(?i)\[\s*(?:PMID\s*[:#]?\s*)?\d{1,9}(?:\s*[,;–-]\s*(?:PMID\s*[:#]?\s*)?\d{1,9})*\s*\]"
    r"|\(\s*PMIDs?\s*[:#]?\s*\d{1,9}"
)
SECOND_PERSON = re.compile(r"(?i)\b(?:you|your|yours|yourself|yourselves)\b")
# Addressing whoever reads or relays the text: instructions about instructions, or telling someone what to do.
DIRECTIVE = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\b[^.]{0,60}\b(?:instruction|prompt|rule|guideline|"
    r"direction|message|above|previous|prior|earlier)s?\b"
    r"|\b(?:tell|instruct|advise|ask|urge|remind|order)\b\s+(?:the\s+|all\s+|every\s+)?(?:patients?|readers?|"
    r"users?|assistants?|models?|doctors?|clinicians?|them|him|her)\s+(?:to|that)\b"
    r"|\b(?:system|developer)\s+prompt\b|\bas an ai\b"
)
# An imperative opening: a bare verb of action followed by what it acts on ("Stop all treatment", "Call 555-0100",
# "Visit our site"); "Contact inhibition ..." or "STOP-BANG scores ..." are not.
IMPERATIVE_START = re.compile(
    r"^(?:please\s+|now\s*,?\s+|important\s*:\s*|note\s*:\s*)?(?:stop|start|call|visit|"
    r"contact|click|buy|download|email|ignore|disregard|tell|go|take|quit|discontinue|"
    r"do not|don't)\s+(?:(?:the|all|any|every|your|this|these|that|those|our|us|me|a|an|to|"
    r"now|immediately|today|here|it|them)\b|\d)",
    re.IGNORECASE,
)


# Advice, not a finding: a modal or an imperative aimed at the reader or at patients, followed by a change of
# treatment. "Patients who stopped tamoxifen had ..." reports; "patients should stop tamoxifen" advises.
_CHANGE = (
    r"(?:stop|stopping|discontinue|discontinuing|quit|quitting|cease|halt|pause|skip|start|starting|begin|"
    r"switch|switching|change|changing|increase|increasing|decrease|decreasing|reduce|reducing|double|"
    r"lower|raise|avoid|refuse|decline|come off|taper)"
)
_ADVICE = re.compile(
    rf"(?i)\b(?:should|must|ought to|need to|needs to|have to|has to|had better|is advised to|are advised to|"
    rf"it is (?:best|advisable|important|recommended) to|we recommend|i recommend|recommend(?:s|ed)? that|"
    rf"consider|may want to|can safely)\s+(?:\w+\s+){{0,2}}?{_CHANGE}\b"
    rf"|^\W*(?:please\s+|now\s+|so\s+)?{_CHANGE}\s+(?:taking|using|your|the|all|any|this|that|it|them)\b"
    rf"|\b(?:you|patients?|women|men|readers?)\s+(?:\w+\s+){{0,2}}?(?:should|must|need to)\b[^.]{{0,60}}\b{_CHANGE}\b"
)
# The same advice in the passive voice: "X should be discontinued in all patients", "must be stopped".
_PASSIVE_ADVICE = re.compile(
    r"(?i)\b(?:should|must|ought to|needs? to|has to|have to)\s+(?:not\s+)?be\s+(?:\w+\s+)?(?:stopped|discontinued|"
    r"withdrawn|ceased|halted|paused|started|initiated|switched|changed|increased|decreased|reduced|doubled|lowered|"
    r"raised|avoided|tapered|omitted|skipped)\b"
)


def directs_treatment_change(sentence: str) -> bool:
    """Whether a sentence tells the reader or patients, in any voice, to start, stop or change a treatment (advice,
    not a finding: "patients who stopped tamoxifen had ..." reports; "tamoxifen should be stopped" directs)."""
    return bool(_ADVICE.search(sentence) or _PASSIVE_ADVICE.search(sentence))


def unquotable(sentence: str, patient_page: bool = False) -> str | None:
    """Why ``sentence`` must not be quoted to a reader, or None when it may be (``patient_page``: from a page written
    for patients, whose own voice addresses its reader)."""
    text = sentence.strip()
    if URL.search(text):
        return "link"
    if MARKUP.search(text):
        return "markup"
    if CITATION_MARKER.search(text):
        return "citation marker"
    if DIRECTIVE.search(text):
        return "addresses the reader"
    if not patient_page and (SECOND_PERSON.search(text) or IMPERATIVE_START.match(_without_label(text))):
        return "addresses the reader"
    return None


def _without_label(text: str) -> str:
    """The sentence without a leading structured-abstract label ("CONCLUSIONS: ...")."""
    return re.sub(r"^[A-Z][A-Za-z /&-]{2,40}:\s+", "", text)


def addresses_reader(text: str, patient_page: bool = False) -> bool:
    """Whether any sentence of a passage must not be quoted (``unquotable``); split at full stops only, since this
    runs on every candidate passage of every question (the exact splitter is the answer's, on what it quotes)."""
    return any(unquotable(part, patient_page) for part in split_rough(text))
