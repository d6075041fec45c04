"""What the reader is told beside the evidence: disclaimers per mode, the labels of answers no language model wrote,
and the notices and referrals an answer may carry."""

from __future__ import annotations

DISCLAIMERS: dict[str, str] = {
    "patient": (
        "This is general information from published research, not medical advice. "
        "Talk to your care team before making any decision about your treatment."
    ),
    "clinician": (
        "Evidence summary generated from retrieved literature; verify against the cited sources "
        "and current guidelines before clinical use."
    ),
}
EXTRACTIVE_LABEL = (
    "Evidence extracts, not written by a language model: the sentences from the evidence found that best "
    "answer your question, quoted as published."
)
NOT_DIRECT = "The evidence found does not answer this directly."
RESEARCH_ADDS = "What research adds (PubMed):"  # after a patient page's quotes
NOT_DIRECT_EXTRACTS = (
    f"{NOT_DIRECT} The closest evidence it holds is below: sentences from the evidence found, quoted as "
    "published (not written by a language model), that are about your topic but do not answer your question."
)
# The closest evidence drawn from records that do not name what was asked (``Addressing.topic_unnamed``): another
# wording of it, or another condition; "about your topic" would be a claim the product cannot make.
NOT_ABOUT_EXTRACTS = (
    f"{NOT_DIRECT} None of the studies it found names {{names}} by any name the search knows: the nearest sentences "
    "they hold are below, quoted as published (not written by a language model), and may be about something else."
)
NOT_DIRECT_WRITTEN = f"{NOT_DIRECT} What it does say follows."
NO_EVIDENCE = (
    "No evidence was found for this question, so no answer can be given. Try rephrasing it, or ask your care team."
)
THIN_EVIDENCE = (
    "The evidence found does not answer this question closely enough to quote an answer. "
    "Try rephrasing it, or ask your care team."
)
SEARCH_FAILED = "The evidence search failed, so no answer can be given now. Please try again later."
UNSUPPORTED = "The evidence found does not support an answer to this question."
STREAM_CUT = (
    "The connection to the language model broke while the answer was being written: this is the part that "
    "arrived, checked against the evidence like any answer. Ask again for the whole answer."
)
NEEDS_LLM = "{option} needs a language model ({unconfigured}): {instead}"
