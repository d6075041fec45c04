"""Evidence is data: which sentences of a retrieved record may be quoted to a reader, and which may not.

Published findings are third-person statements. A sentence that instead addresses its reader (second person,
an imperative such as "ignore ... instructions" or "tell the patient to ..."), or carries a link, markup or a
citation marker of its own, is not a finding: quoted, it would speak to the patient in a stranger's voice, and
its markers would pass as our citations. Such sentences are never quoted, and a passage holding one ranks below
the passages that do not.
"""

from __future__ import annotations

import re

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


def unquotable(sentence: str) -> str | None:
    """Why ``sentence`` must not be quoted to a reader, or None when it may be."""
    text = sentence.strip()
    if URL.search(text):
        return "link"
    if MARKUP.search(text):
        return "markup"
    if CITATION_MARKER.search(text):
        return "citation marker"
    if SECOND_PERSON.search(text) or DIRECTIVE.search(text) or IMPERATIVE_START.match(_without_label(text)):
        return "addresses the reader"
    return None


def _without_label(text: str) -> str:
    """The sentence without a leading structured-abstract label ("CONCLUSIONS: ...")."""
    return re.sub(r"^[A-Z][A-Za-z /&-]{2,40}:\s+", "", text)


_ROUGH_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def addresses_reader(text: str) -> bool:
    """Whether any sentence of a passage must not be quoted (``unquotable``); split at full stops only, since this
    runs on every candidate passage of every question (the exact splitter is the answer's, on what it quotes)."""
    return any(unquotable(part) for part in _ROUGH_SENTENCE_END.split(text))
