"""Text cleaned once, when a record is read from NCBI's XML: what every later stage (search, segmentation, the
evidence screen, the answer) sees.

- Mojibake repaired where ftfy can tell ("cafÃ©" -> "café") and HTML entities decoded; Unicode NFKC.
- Format characters removed (zero-width spaces and joiners, soft hyphens, byte-order marks: Unicode category Cf),
  so "I\u200bg\u200bn\u200bo\u200br\u200be" reads, and is screened, as "Ignore".
- Markup stripped to its text: HTML tags (a line break becomes a space), Markdown links (their words kept), bold
  markers and terminal escapes; Markdown images removed whole (an image is no part of the record's prose, and its
  caption left behind would cut the sentence before it). A record's result stated beside a stray "<br>" stays
  quotable; links themselves stay in the text, where the evidence screen keeps them from being quoted.
- PubMed's own abstract markup left as text inside some records' abstracts (``<AbstractText Label="CASE REPORT"
  ...>``, an escaped element of the record's XML) becomes its label and a full stop before the section's text
  ("... sinusitis. CASE REPORT: We report ..."), as the record's other labelled sections read.
- A character lost before the record reached us (U+FFFD) stays as it is: nothing can tell what it was.

``CLEANING`` names this version; the store keeps records parsed under another version as changed, so re-ingesting
a file applies it (``cpqa.sources.store``).
"""

from __future__ import annotations

import re
import unicodedata

CLEANING = "clean3"

_TAGS = (
    "a|abbr|b|blockquote|body|br|button|code|div|em|embed|font|form|h[1-6]|head|hr|html|i|iframe|img|input|li|"
    "link|meta|object|ol|p|pre|script|span|strong|style|sub|sup|svg|table|td|th|tr|u|ul"
)
_BLOCK_TAG = re.compile(r"<\s*/?\s*(?:br|p|div|li|tr|td|th|h[1-6]|hr|blockquote|table|ul|ol)\b[^>]*>", re.I)
_TAG = re.compile(rf"<\s*/?\s*(?:{_TAGS})\b[^>]*>", re.I)
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\(\s*(?:https?:|ftp:|www\.|mailto:|javascript:|/|#)[^)]*\)")
_BOLD = re.compile(r"\*\*(\S[^*]*?)\*\*")
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\))")
_MARKUP_HINT = re.compile(r"[<\[*\x1b]")
# PubMed's abstract elements escaped into an abstract's text: a labelled one opens a section, the rest are dropped.
_ABSTRACT_LABEL = re.compile(r"\s*<\s*AbstractText\b[^>]*?\bLabel\s*=\s*\"([^\"]*)\"[^>]*>\s*", re.I)
_ABSTRACT_TAG = re.compile(r"<\s*/?\s*(?:AbstractText|Abstract|CopyrightInformation)\b[^>]*>", re.I)


def clean_text(value: str) -> str:
    """``value`` repaired, normalised, without format characters or markup, whitespace collapsed."""
    if not value:
        return value
    if not value.isascii():
        import ftfy

        value = ftfy.fix_text(value, normalization="NFKC", uncurl_quotes=False)
        value = "".join(ch for ch in value if unicodedata.category(ch) != "Cf")
    if _MARKUP_HINT.search(value) or "&" in value:
        value = strip_markup(value)
    return " ".join(value.split())


def strip_markup(value: str) -> str:
    """HTML tags, Markdown links, bold markers and terminal escapes reduced to their text; Markdown images removed."""
    if "&" in value:
        import html

        value = html.unescape(value)
    value = _ESCAPE.sub("", value)
    value = _MD_IMAGE.sub(" ", value)
    value = _MD_LINK.sub(lambda m: m.group(1), value)
    value = _BOLD.sub(lambda m: m.group(1), value)
    value = _BLOCK_TAG.sub(" ", value)
    value = _ABSTRACT_LABEL.sub(_label, value)
    value = _ABSTRACT_TAG.sub(" ", value)
    return _TAG.sub("", value)


def _label(match: re.Match) -> str:
    """An escaped labelled section as the record's other sections read: a full stop after what came before (unless
    it ends a sentence already), then "LABEL: "."""
    before = _ABSTRACT_TAG.sub("", match.string[: match.start()]).rstrip()
    stop = "" if not before or before[-1] in ".!?:" else "."
    return f"{stop} {match.group(1).strip()}: "


__all__ = ["CLEANING", "clean_text", "strip_markup"]
