"""What a screened question is told first, and which questions get a care-team or pharmacist referral.

Urgent signs are found by the triage tool of :mod:`cpqa.safety.categories` (rules, by meaning, or by a language
model); this module turns what was found into the message shown before anything else: a crisis message for thoughts
of suicide or self-harm, the emergency number, the oncology team's 24-hour line, or the care team today. A false
alarm costs one message at the top of the answer, a missed one can cost far more; the message says "if this is
happening now", so it reads correctly either way.

Referrals (the evidence is still given, beside them): personal dosing in any phrasing (an extra tablet, two instead of
one, doubling up, skipping, crushing or splitting, a dose by weight), interactions between the asker's own medicines
(or with food, alcohol, supplements), and personal treatment decisions.
"""

from __future__ import annotations

import re
from typing import Iterable

from cpqa.safety.categories import RED, Finding, names_someone

_I = re.IGNORECASE

CRISIS = (
    "If you are thinking about suicide or harming yourself, please reach out now: call or text 988 (Suicide & Crisis "
    "Lifeline, US), call your local emergency number (911 in the US, 999 in the UK, 112 in the EU) or go to the "
    "nearest emergency department, and tell your care team. You do not have to face this alone."
)
EMERGENCY = (
    "URGENT: your message describes {signs}. If this is happening now, call your emergency number now (911 in the US, "
    "999 in the UK, 112 in the EU), then your oncology team's 24-hour line. Do not wait for an answer here; this "
    "service cannot assess symptoms."
)
CALL_NOW = (
    "URGENT: your message describes {signs}. If this is happening now, call your oncology team's 24-hour line now, or "
    "your emergency number (911 in the US, 999 in the UK, 112 in the EU) if you cannot reach them. Do not wait for an "
    "answer here; this service cannot assess symptoms."
)
SOON = (
    "Your message describes {signs}. Please tell your care team today; if it gets worse, or you feel very unwell, call "
    "your oncology team's 24-hour line."
)


def _signs(findings: list[Finding]) -> str:
    return ", ".join(dict.fromkeys(f.sign for f in findings))


def urgent_message(findings: Iterable[Finding]) -> str | None:
    """The message to show before anything else for the red signs found (crisis first), or None."""
    findings = list(findings)
    parts = []
    if any(f.action == "crisis" for f in findings):
        parts.append(CRISIS)
    medical = [f for f in findings if f.action in RED - {"crisis"}]
    if medical:
        emergency = any(f.action == "emergency" for f in medical)
        parts.append((EMERGENCY if emergency else CALL_NOW).format(signs=_signs(medical)))
    return " ".join(parts) or None


def soon_message(findings: Iterable[Finding]) -> str | None:
    """For amber signs only (no red one): see the care team today."""
    findings = list(findings)
    if any(f.action in RED for f in findings):
        return None
    amber = [f for f in findings if f.action == "soon"]
    return SOON.format(signs=_signs(amber)) if amber else None


# ---------------------------------------------------------------- referrals
_DRUGLIKE = r"(?:[\w-]+\s+){0,4}?"
_WHO = r"(?:i|we|he|she|they|my\s+\w+)"
_UNIT = r"(?:mg|milligrams?|mcg|micrograms?|g|grams?|ml|units?|tablets?|pills?|capsules?|doses?|patch(?:es)?)"
_FORM = r"(?:tablets?|pills?|capsules?|doses?|patch(?:es)?|puffs?|injections?|sachets?|spoonfuls?|drops?)"
_DOSING_FORMS = (
    rf"how\s+(?:much|many)\s+(?:{_UNIT}\s+(?:of\s+)?)?{_DRUGLIKE}(?:should|can|do|must|may|would)\s+{_WHO}\s+"
    r"(?:take|use|have|give|need|be\s+taking)",
    rf"what\s+(?:dose|dosage|amount)\s+{_DRUGLIKE}(?:should|can|do|must|may)\s+{_WHO}",
    r"(?:dose|dosage|amount)\s+(?:[\w-]+\s+){0,5}(?:right|best|safe|correct|enough|too\s+(?:much|little|high|low))\s+"
    r"(?:\w+\s+){0,2}for\s+(?:me|him|her|my\b)",
    r"(?:right|best|correct|safe|proper)\s+(?:dose|dosage|amount)\s+(?:[\w-]+\s+){0,5}for\s+(?:me|him|her|my\b)",
    rf"\d+\s*{_UNIT}\b.*\b(?:too\s+(?:much|little|high|low)|enough|safe|(?:work\s+)?better|more\s+effective|"
    r"stronger)\s+for\s+(?:me|him|her)",
    rf"(?:should|can|could|may|must)\s+{_WHO}\s+(?:just\s+)?(?:stop|skip|quit|pause|halt|discontinue|come\s+off|"
    r"go\s+off|double|increase|decrease|reduce|lower|halve|change|adjust|cut\s+down)\b",
    r"is\s+it\s+(?:ok|okay|safe|fine|alright|all\s+right)\s+(?:for\s+(?:me|him|her)\s+)?to\s+(?:stop|skip|quit|double|"
    r"take\s+(?:more|less|extra|another|double|two|2|a\s+second)|increase|reduce|lower|miss|crush|split|halve)",
    rf"(?:should|can|could|may)\s+{_WHO}\s+take\s+(?:more|less|extra|another|a\s+higher|a\s+lower|double|two|2|both|"
    rf"a\s+second|\d+\s*{_UNIT})",
    rf"(?:should|can|could|may)\s+{_WHO}\s+take\s+(?:my|it|them|the)\b.*\b(?:every\s+other|instead|less\s+often|"
    r"twice|more\s+often)",
    r"\b(?:cut|halve|split|change|adjust|lower|raise|increase|reduce|double)\s+(?:[\w-]+\s+){0,3}(?:dose|dosage)",
    r"\bmy\s+(?:[\w-]+\s+){0,2}(?:dose|dosage)\b.*\?",
    r"(?:want|wanting|plan|planning|going|thinking\s+(?:about|of))\s+(?:to\s+)?(?:stop|quit|skip)(?:ping)?\s+"
    r"(?:taking\s+)?(?:my|the)\b",
    r"(?:stop|quit|skip)\s+(?:taking\s+)?my\s+"
    r"(?:chemo|chemotherapy|treatment|medication|medicine|pills|tablets|meds|infusions?)",
    # an extra one, two instead of one, doubling up, a missed dose
    rf"\b(?:an?|one|another)\s+extra\s+(?:[\w-]+\s+){{0,2}}{_FORM}",
    rf"\b(?:two|2|three|3|four|4|double)\s+(?:[\w-]+\s+){{0,2}}(?:{_FORM}\s+)?instead\s+of\s+(?:one|1|two|2|a\s+single|my\s+usual)",
    r"\bdoubl(?:e|ing)\s+up\b",
    rf"\b(?:missed|forgot|forgotten|skipped)\s+(?:to\s+take\s+)?(?:a\s+|my\s+|his\s+|her\s+|the\s+|one\s+|this\s+"
    rf"morning'?s?\s+|last\s+night'?s?\s+)?(?:[\w-]+\s+){{0,2}}{_FORM}",
    rf"\b(?:skip|miss)\s+(?:a\s+|my\s+|the\s+|this\s+|next\s+|one\s+)?(?:[\w-]+\s+){{0,2}}(?:{_FORM}|cycle|treatment|"
    r"infusion|round|day)",
    # crushing, splitting, opening, by weight, how often
    rf"\b(?:crush|crushing|split|splitting|halve|halving|break|breaking|chew|chewing|dissolve|dissolving|open|opening)"
    rf"\s+(?:up\s+)?(?:(?:my|his|her|the|a|these|those)\s+(?:[\w-]+\s+){{0,2}}{_FORM}|them\b|it\b)",
    r"\b(?:dose|dosage|how\s+much)\s+(?:[\w-]+\s+){0,5}(?:for|by|based\s+on|per)\s+(?:my\s+|his\s+|her\s+)?"
    r"(?:weight|kg|kilos?|body\s+weight|size|stone)",
    r"\btake\s+(?:it|them|my\s+[\w-]+|the\s+[\w-]+)\s+(?:every\s+other\s+day|twice|less\s+often|more\s+often|"
    r"at\s+night\s+instead)",
)
PERSONAL_DOSING = re.compile("|".join(_DOSING_FORMS), _I)
# Only a question about one's own dosing, when a form is generic ("crush", "split"): a general question names no one.
_GENERIC_DOSING = re.compile(r"\b(?:crush|split|halve|break|chew|dissolve|open)", _I)


def is_personal_dosing(text: str) -> bool:
    """True when the question asks for a personal dose, or to take more, less, none, or in another form."""
    match = PERSONAL_DOSING.search(text)
    if match is None:
        return False
    return not _GENERIC_DOSING.match(match.group(0)) or names_someone(text)


_AGENT = (
    r"(?:[\w'-]+\s+){0,4}?(?:with|alongside|while\s+(?:i'?m\s+|he'?s\s+|she'?s\s+|on\s+|taking\s+|having\s+)|"
    r"during|on\s+top\s+of|and)\s+(?:my|his|her|our)\s+"
)
_INTERACTION_FORMS = (
    rf"\b(?:can|could|should|may|do|is\s+it\s+(?:ok|okay|safe|fine|alright)\s+(?:for\s+)?)\s*(?:i|we|he|she|me|him|her)"
    rf"\s+(?:to\s+)?(?:still\s+)?(?:take|have|drink|eat|use|mix|combine|keep\s+taking|carry\s+on\s+(?:taking|with))\s+"
    rf"{_AGENT}",
    r"\b(?:interact|interfere|clash|react|mix|affect|counteract|cancel\s+out)\w*\s+(?:badly\s+)?(?:[\w'-]+\s+){0,2}"
    r"(?:with\s+)?(?:my|his|her|our)\s+",
    r"\b(?:my|his|her)\s+[\w-]+\s+(?:[\w-]+\s+){0,3}(?:interact|interfere|clash)\w*\s+with\b",
    r"\b(?:alcohol|a\s+drink|wine|beer|grapefruit|supplements?|vitamins?|herbal|herbs|cbd|cannabis|st\.?\s*john'?s"
    r"\s+wort|turmeric|painkillers?|ibuprofen|paracetamol|antibiotics?)\s+(?:[\w'-]+\s+){0,4}(?:with|while\s+on|"
    r"while\s+taking|on)\s+(?:my|his|her)\s+",
    r"\bsafe\s+to\s+(?:take|have|drink|mix|combine)\s+(?:[\w'-]+\s+){1,4}(?:together|with\s+(?:my|his|her))",
)
PERSONAL_INTERACTION = re.compile("|".join(_INTERACTION_FORMS), _I)


def is_personal_interaction(text: str) -> bool:
    """True when the question asks whether the asker's own medicines (or food, alcohol, supplements) can be taken
    together: a pharmacist's or the care team's question, who know everything the person takes."""
    return bool(PERSONAL_INTERACTION.search(text))


_DECIDE = (
    r"take|have|get|start|do|go\s+for|go\s+ahead\s+with|choose|pick|join|try|refuse|decline|switch|undergo|continue|"
    r"accept|consider|opt|be\s+treated|enrol+|enter|skip|agree|stop\s+treatment|stop\s+chemo"
)
_DECISION_FORMS = (
    # "Should I take olaparib?", "Must I have chemo first?", "Should my mother have surgery?"; not "what should I do"
    rf"(?<!what\s)(?<!what\scan\s)\b(?:should|must|shall|ought)\s+{_WHO}\s+(?:\w+\s+)?(?:{_DECIDE})\b",
    # "Would you recommend I start ...", "Do you think I should have ..."
    rf"\b(?:do|would|can)\s+you\s+(?:think|recommend|advise|suggest)\s+(?:that\s+)?{_WHO}\b",
    # "Is immunotherapy the right choice for me?", "Would it be better for me to ...", "Is it worth it for me ..."
    r"\b(?:is|are|would|will)\s+(?:[\w-]+\s+){0,5}(?:right|best|better|worth\s+it|a\s+good\s+(?:idea|choice|option))"
    r"\s+(?:\w+\s+){0,2}for\s+(?:me|him|her|us|my\s+\w+)\b",
    # "Do I need radiation after my lumpectomy?"
    rf"\bdo(?:es)?\s+{_WHO}\s+(?:really\s+)?need\s+(?:to\s+(?:have|get|start|take)\s+)?(?:a\s+|an\s+|the\s+|more\s+)?"
    r"(?:chemo\w*|radiation|radiotherapy|surgery|treatment|therapy|immunotherapy|transplant|\w+ectomy|\w+therapy)",
)
PERSONAL_DECISION = re.compile("|".join(_DECISION_FORMS), _I)


def is_personal_decision(text: str) -> bool:
    """True when the question asks what the writer (or someone close) should decide about their own care: whether
    to have, start, choose or refuse a treatment. The evidence is still given, beside a care-team referral."""
    return bool(PERSONAL_DECISION.search(text))


__all__ = [
    "CRISIS",
    "is_personal_decision",
    "is_personal_dosing",
    "is_personal_interaction",
    "names_someone",
    "soon_message",
    "urgent_message",
]
