"""Urgent-care triage and personal-dosing detection for incoming questions.

Red flags are matched on the question text whether the writer describes their own symptoms or asks in general:
a false alarm costs one message at the top of the answer, a missed one can cost far more. The message says
"if this is happening now", so it reads correctly either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_I = re.IGNORECASE


@dataclass(frozen=True)
class RedFlag:
    name: str  # shown in the message: "fever during chemotherapy"
    pattern: re.Pattern
    requires: re.Pattern | None = None  # a second pattern that must also occur anywhere in the question


_CHEMO = re.compile(
    r"chemo|chemotherapy|neutropeni|immunotherapy|on\s+(?:my\s+)?(?:cycle|treatment)|cancer\s+treatment|"
    r"after\s+(?:my\s+)?(?:treatment|infusion)|low\s+(?:white|blood)\s+(?:cell\s+)?counts?|"
    r"folfox|folfiri|capox|carboplatin|cisplatin|paclitaxel|docetaxel|doxorubicin|cyclophosphamide",
    _I,
)
_FEVER = re.compile(
    r"\bfever|febrile|\bchills\b|\brigors?\b|\btemp(?:erature)?\s+(?:of\s+|is\s+|was\s+)?"
    r"(?:3[89](?:[.,]\d)?|4[01](?:[.,]\d)?|10[0-5](?:\.\d)?)\b|\bhigh\s+temp",
    _I,
)
_BACK_PAIN = re.compile(
    r"\b(?:back|spine|spinal|neck)\s+(?:pain|ache|hurts?)|\bbackache|pain\s+in\s+(?:my\s+)?(?:back|spine)", _I
)
_CORD_SIGNS = re.compile(
    r"(?:legs?|feet|foot)\s+(?:(?:are|is|feel|feels|feeling|going|have\s+gone|went)\s+)?"
    r"(?:weak|weakness|numb|numbness|tingl|giving\s+(?:out|way))|"
    r"(?:weak|weakness|numb|numbness|tingling)\s+(?:in\s+)?(?:(?:my|both|the)\s+)?(?:legs?|feet|foot)|"
    r"can'?not\s+walk|can'?t\s+walk|trouble\s+walking|difficulty\s+walking",
    _I,
)
_CONTINENCE = re.compile(
    r"(?:los[st]|losing|no|lack\s+of|can'?t\s+control|cannot\s+control|control\s+of)\s+(?:\w+\s+){0,3}"
    r"(?:bladder|bowels?)|(?:bladder|bowel)\s+(?:control|incontinence|accidents?)|\bincontinen|"
    r"saddle\s+(?:numbness|anaesthesia|anesthesia)"
    r"|(?:can'?t|cannot|unable\s+to)\s+(?:pee|urinate|pass\s+urine)",
    _I,
)

RED_FLAGS: tuple[RedFlag, ...] = (
    RedFlag("fever during cancer treatment", _FEVER, _CHEMO),
    RedFlag(
        "chest pain",
        re.compile(
            r"chest\s+(?:pain|tightness|pressure)|pain\s+in\s+(?:my\s+|the\s+)?chest|(?:tight|crushing)\s+chest", _I
        ),
    ),
    RedFlag(
        "trouble breathing",
        re.compile(
            r"(?:trouble|difficulty|difficult|hard|struggling|struggle|can'?t|cannot|unable\s+to)\s+(?:to\s+)?"
            r"(?:breath|breathe|breathing|catch\s+(?:my|her|his)\s+breath)|short(?:ness)?\s+of\s+breath|"
            r"\bbreathless|\bgasping|\bchoking|(?:can'?t|cannot)\s+get\s+(?:enough\s+)?air",
            _I,
        ),
    ),
    RedFlag("possible spinal cord compression", _BACK_PAIN,
            re.compile(f"{_CORD_SIGNS.pattern}|{_CONTINENCE.pattern}", _I)),
    RedFlag("loss of bladder or bowel control", _CONTINENCE, _CORD_SIGNS),
    RedFlag(
        "heavy bleeding",
        re.compile(
            r"heavy\s+bleeding|"
            r"bleeding\s+(?:heavily|a\s+lot|profusely|that\s+won'?t\s+stop|won'?t\s+stop|doesn'?t\s+stop)|"
            r"(?:can'?t|cannot)\s+stop\s+(?:the\s+)?bleeding|(?:vomiting|throwing\s+up|coughing\s+(?:up\s+)?)\s*blood|"
            r"\bhaemorrhag|\bhemorrhag|black,?\s+tarry\s+stools?|blood\s+clots?\s+in\s+(?:my\s+)?(?:urine|vomit)",
            _I,
        ),
    ),
)

SELF_HARM = re.compile(
    r"suicid|kill\s+(?:myself|me)\b|end\s+(?:my|it)\s+(?:own\s+)?(?:life|all)|take\s+my\s+(?:own\s+)?life|"
    r"self[-\s]?harm|hurt(?:ing)?\s+myself|harm(?:ing)?\s+myself|cut(?:ting)?\s+myself|"
    r"(?:don'?t|do\s+not)\s+want\s+to\s+(?:live|be\s+alive|go\s+on)|want\s+to\s+die|better\s+off\s+dead|"
    r"no\s+(?:reason|point)\s+(?:to|in)\s+(?:live|living|going\s+on)",
    _I,
)

URGENT_CARE = (
    "URGENT: your question mentions {signs}. If this is happening now, call your emergency number (911 in the US) "
    "or your oncology team's 24-hour line now. Do not wait for an answer here; this service cannot assess symptoms."
)
CRISIS = (
    "If you are thinking about suicide or harming yourself, please reach out now: call or text 988 "
    "(Suicide & Crisis Lifeline, US), call your local emergency number, or go to the nearest emergency department. "
    "You do not have to face this alone."
)


def red_flags(text: str) -> list[str]:
    """Names of the red flags the text mentions, in a fixed order."""
    found = [flag.name for flag in RED_FLAGS
             if flag.pattern.search(text) and (flag.requires is None or flag.requires.search(text))]
    if "possible spinal cord compression" in found and "loss of bladder or bowel control" in found:
        found.remove("loss of bladder or bowel control")
    if SELF_HARM.search(text):
        found.append("thoughts of suicide or self-harm")
    return found


def urgent_message(text: str) -> str | None:
    """The urgent-care message to show first, or None when the question raises no red flag."""
    flags = red_flags(text)
    if not flags:
        return None
    parts = []
    medical = [f for f in flags if f != "thoughts of suicide or self-harm"]
    if medical:
        parts.append(URGENT_CARE.format(signs=", ".join(medical)))
    if len(medical) != len(flags):
        parts.append(CRISIS)
    return " ".join(parts)


_DRUGLIKE = r"(?:[\w-]+\s+){0,4}?"
_WHO = r"(?:i|we|he|she|they|my\s+\w+)"
_DOSING_FORMS = (
    rf"how\s+(?:much|many)\s+{_DRUGLIKE}(?:should|can|do|must|may)\s+{_WHO}\s+(?:take|use|have|give|be\s+taking)",
    rf"what\s+(?:dose|dosage|amount)\s+{_DRUGLIKE}(?:should|can|do|must|may)\s+{_WHO}",
    rf"(?:should|can|could|may|must)\s+{_WHO}\s+(?:just\s+)?(?:stop|skip|quit|pause|halt|discontinue|come\s+off|"
    r"go\s+off|double|increase|decrease|reduce|lower|halve|change|adjust|cut\s+down)\b",
    r"is\s+it\s+(?:ok|okay|safe|fine|alright|all\s+right)\s+(?:for\s+(?:me|him|her)\s+)?to\s+(?:stop|skip|quit|double|"
    r"take\s+(?:more|less|extra|another|double)|increase|reduce|lower)",
    rf"(?:should|can)\s+{_WHO}\s+take\s+(?:more|less|extra|another|a\s+higher|a\s+lower|double)",
    r"\bmy\s+(?:dose|dosage)\b.*\?",
    r"(?:want|wanting|plan|planning|going|thinking\s+(?:about|of))\s+(?:to\s+)?(?:stop|quit|skip)(?:ping)?\s+"
    r"(?:taking\s+)?(?:my|the)\b",
    r"(?:stop|quit|skip)\s+(?:taking\s+)?my\s+"
    r"(?:chemo|chemotherapy|treatment|medication|medicine|pills|tablets|meds|infusions?)",
)
PERSONAL_DOSING = re.compile("|".join(_DOSING_FORMS), _I)

def is_personal_dosing(text: str) -> bool:
    """True when the question asks for a personal dose or whether to stop/change the writer's own treatment."""
    return bool(PERSONAL_DOSING.search(text))
