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


# Someone's own symptoms (a person or a moment is named), not a general question: "my chest hurts", "coughing up
# blood right now", but not "Does lung cancer cause chest pain?".
_SOMEONE = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|me|my|mine|myself|we|our|us|he|she|his|her|him|they|their|husband|wife|son|daughter|"
    r"mother|father|mom|mum|dad|partner|friend|baby|child)\b|\bright\s+now\b|\bnow\b|\btoday\b|\btonight\b|"
    r"\bthis\s+(?:morning|evening|afternoon)\b|\bsince\b|\bago\b|\bcurrently\b",
    _I,
)


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

_W = r"(?:[\w'-]+\s+){0,4}"  # up to four words between two parts of a phrase
RED_FLAGS: tuple[RedFlag, ...] = (
    RedFlag("fever during cancer treatment", _FEVER, _CHEMO),
    RedFlag(
        "chest pain",
        re.compile(
            r"chest\s+(?:pain|tightness|pressure|hurts?|hurting|aches?|aching|is\s+(?:tight|hurting|painful|sore))|"
            rf"(?:pain|tight(?:ness)?|pressure|heaviness|crushing)\s+{_W}(?:in|on|across)\s+(?:my\s+|his\s+|her\s+|the\s+)?"
            r"chest|(?:tight|crushing|heavy)\s+chest",
            _I,
        ),
    ),
    RedFlag(
        "signs of a stroke or bleeding in the brain",
        re.compile(
            r"(?:face|mouth|smile)\s+(?:is\s+)?(?:droop|drooping|dropped|lopsided)|drooping\s+(?:face|mouth)|"
            r"slurr(?:ed|ing)\s+(?:speech|words)|speech\s+(?:is\s+)?slurred|can'?t\s+(?:find|get)\s+(?:my|his|her)\s+words|"
            r"(?:can'?t|cannot|unable\s+to)\s+move\s+(?:my|his|her)\s+(?:\w+\s+)?(?:arm|leg|hand|side)|"
            r"(?:numb|weak|weakness|paralys\w*)\s+(?:\w+\s+){0,2}(?:on\s+)?one\s+side|one\s+side\s+of\s+(?:my|his|her)\s+"
            r"(?:face|body)|worst\s+headache|thunderclap|sudden(?:ly)?\s+(?:\w+\s+){0,2}headache|"
            r"(?:sudden(?:ly)?|new(?:ly)?|very|become|became|getting)\s+(?:\w+\s+)?confus|"
            r"(?:sudden(?:ly)?|lost)\s+(?:\w+\s+){0,3}(?:vision|sight)|vision\s+(?:\w+\s+){0,2}(?:suddenly|went)|"
            r"blind\s+in\s+one\s+eye",
            _I,
        ),
    ),
    RedFlag("a seizure", re.compile(r"\bseizures?\b|\bconvuls|\bhad\s+a\s+fit\b|\bfitting\b", _I)),
    RedFlag(
        "fainting or unresponsiveness",
        re.compile(
            r"\bfaint(?:ed|ing)?\b|pass(?:ed)?\s+out|black(?:ed)?\s+out|lost\s+consciousness|unconscious|"
            r"not\s+respond(?:ing)?|unresponsive",
            _I,
        ),
    ),
    RedFlag(
        "a swollen or painful leg (a possible blood clot)",
        re.compile(
            r"(?:legs?|calf|calves|thigh)\s+(?:\w+\s+){0,4}(?:swollen|swelling|swell|puffy|bigger|red|hot)|"
            r"(?:swollen|swelling|painful|red,?\s+(?:and\s+)?hot)\s+(?:\w+\s+){0,2}(?:legs?|calf|calves|thigh)",
            _I,
        ),
    ),
    RedFlag(
        "a severe allergic reaction",
        re.compile(
            r"(?:throat|tongue|lips?|face|eyes)\s+(?:\w+\s+){0,3}swell|swell(?:ing)?\s+(?:of\s+)?(?:my\s+)?"
            r"(?:throat|tongue|lips?)|\bhives\b|anaphyla|allergic\s+reaction",
            _I,
        ),
    ),
    RedFlag(
        "severe vomiting or diarrhoea (dehydration)",
        re.compile(
            r"(?:can'?t|cannot|unable\s+to|not\s+(?:been\s+)?able\s+to)\s+(?:keep\s+(?:any(?:thing)?\s+)?(?:\w+\s+)?down|"
            r"stop\s+(?:vomiting|throwing\s+up))|(?:haven'?t|have\s+not|not)\s+(?:\w+\s+)?(?:peed|urinated|passed\s+urine)|"
            r"diarrh(?:o)?ea\s+(?:\w+\s+){0,3}(?:\d+|many|several|ten|eight|six|seven)\s+times|severe\s+diarrh",
            _I,
        ),
    ),
    RedFlag(
        "sudden severe abdominal pain",
        re.compile(
            r"(?:sudden|severe|extreme|unbearable|excruciating)\s+(?:\w+\s+){0,2}(?:abdominal|stomach|belly|tummy)"
            r"\s+pain|(?:belly|abdomen|stomach)\s+is\s+(?:hard|rigid)",
            _I,
        ),
    ),
    RedFlag(
        "trouble breathing",
        re.compile(
            r"(?:trouble|difficulty|difficult|hard|struggling|struggle|can'?t|cannot|unable\s+to)\s+(?:to\s+)?"
            r"(?:breath|breathe|breathing|catch\s+(?:my|her|his)\s+breath)|short(?:ness)?\s+of\s+breath|"
            r"\bbreathless|\bgasping|\bchoking|(?:can'?t|cannot)\s+get\s+(?:enough\s+)?air|"
            r"(?:lips?|face|fingers?)\s+(?:\w+\s+){0,2}(?:blue|grey|gray)",
            _I,
        ),
    ),
    RedFlag(
        "possible spinal cord compression", _BACK_PAIN, re.compile(f"{_CORD_SIGNS.pattern}|{_CONTINENCE.pattern}", _I)
    ),
    RedFlag("loss of bladder or bowel control", _CONTINENCE, _CORD_SIGNS),
    RedFlag(
        "heavy bleeding",
        re.compile(
            r"heavy\s+bleeding|"
            r"bleeding\s+(?:heavily|a\s+lot|profusely|that\s+won'?t\s+stop|won'?t\s+stop|doesn'?t\s+stop)|"
            r"(?:can'?t|cannot)\s+stop\s+(?:the\s+)?bleeding|(?:vomiting|throwing\s+up|coughing\s+(?:up\s+)?)\s*blood|"
            r"\bhaemorrhag|\bhemorrhag|black,?\s+tarry\s+stools?|blood\s+clots?\s+in\s+(?:my\s+)?(?:urine|vomit)|"
            r"(?:stools?|poo|poop)\s+(?:is|are|has\s+been|have\s+been)\s+(?:\w+\s+){0,2}(?:black|tarry|bloody)|"
            r"bleeding\s+(?:\w+\s+){0,5}(?:won'?t|doesn'?t|will\s+not|does\s+not)\s+stop",
            _I,
        ),
    ),
)

SELF_HARM = re.compile(
    r"suicid|kill\s+(?:myself|me)\b|end(?:ing)?\s+(?:my|it)\s+(?:own\s+)?(?:life|all)|take\s+my\s+(?:own\s+)?life|"
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


SELF_HARM_SIGN = "thoughts of suicide or self-harm"


def red_flags(text: str) -> list[str]:
    """Names of the red flags the text mentions, in a fixed order."""
    someone = names_someone(text)
    found = [
        flag.name
        for flag in RED_FLAGS
        if someone and flag.pattern.search(text) and (flag.requires is None or flag.requires.search(text))
    ]
    if "possible spinal cord compression" in found and "loss of bladder or bowel control" in found:
        found.remove("loss of bladder or bowel control")
    if SELF_HARM.search(text):
        found.append(SELF_HARM_SIGN)
    return found


def names_someone(text: str) -> bool:
    """Whether the text is about someone's own situation (a person or a moment is named), not a general question."""
    return _SOMEONE.search(text) is not None


def urgent_message(text: str, extra: list[str] | None = None) -> str | None:
    """The urgent-care message to show first, or None when the question raises no red flag. ``extra``: signs found
    another way (by meaning, ``cpqa.safety.meaning``)."""
    flags = list(dict.fromkeys([*red_flags(text), *(extra or [])]))
    if not flags:
        return None
    parts = []
    medical = [f for f in flags if f != SELF_HARM_SIGN]
    if medical:
        parts.append(URGENT_CARE.format(signs=", ".join(medical)))
    if len(medical) != len(flags):
        parts.append(CRISIS)
    return " ".join(parts)


_DRUGLIKE = r"(?:[\w-]+\s+){0,4}?"
_WHO = r"(?:i|we|he|she|they|my\s+\w+)"
_UNIT = r"(?:mg|milligrams?|mcg|micrograms?|g|grams?|ml|units?|tablets?|pills?|capsules?|doses?|patch(?:es)?)"
_DOSING_FORMS = (
    rf"how\s+(?:much|many)\s+(?:{_UNIT}\s+(?:of\s+)?)?{_DRUGLIKE}(?:should|can|do|must|may|would)\s+{_WHO}\s+"
    r"(?:take|use|have|give|need|be\s+taking)",
    rf"what\s+(?:dose|dosage|amount)\s+{_DRUGLIKE}(?:should|can|do|must|may)\s+{_WHO}",
    r"(?:dose|dosage|amount)\s+(?:[\w-]+\s+){0,5}(?:right|best|safe|correct|enough|too\s+(?:much|little|high|low))\s+"
    r"(?:\w+\s+){0,2}for\s+(?:me|him|her|my\b)",
    r"(?:right|best|correct|safe|proper)\s+(?:dose|dosage|amount)\s+(?:[\w-]+\s+){0,5}for\s+(?:me|him|her|my\b)",
    rf"\d+\s*{_UNIT}\b.*\b(?:too\s+(?:much|little|high|low)|enough|safe)\s+for\s+(?:me|him|her)",
    rf"(?:should|can|could|may|must)\s+{_WHO}\s+(?:just\s+)?(?:stop|skip|quit|pause|halt|discontinue|come\s+off|"
    r"go\s+off|double|increase|decrease|reduce|lower|halve|change|adjust|cut\s+down)\b",
    r"is\s+it\s+(?:ok|okay|safe|fine|alright|all\s+right)\s+(?:for\s+(?:me|him|her)\s+)?to\s+(?:stop|skip|quit|double|"
    r"take\s+(?:more|less|extra|another|double)|increase|reduce|lower)",
    rf"(?:should|can|could|may)\s+{_WHO}\s+take\s+(?:more|less|extra|another|a\s+higher|a\s+lower|double|two|2|both|"
    rf"\d+\s*{_UNIT})",
    rf"(?:should|can|could|may)\s+{_WHO}\s+take\s+(?:my|it|them|the)\b.*\b(?:every\s+other|instead|less\s+often|"
    r"twice|more\s+often)",
    r"\b(?:cut|halve|split|change|adjust|lower|raise|increase|reduce|double)\s+(?:[\w-]+\s+){0,3}(?:dose|dosage)",
    r"\bmy\s+(?:[\w-]+\s+){0,2}(?:dose|dosage)\b.*\?",
    r"(?:want|wanting|plan|planning|going|thinking\s+(?:about|of))\s+(?:to\s+)?(?:stop|quit|skip)(?:ping)?\s+"
    r"(?:taking\s+)?(?:my|the)\b",
    r"(?:stop|quit|skip)\s+(?:taking\s+)?my\s+"
    r"(?:chemo|chemotherapy|treatment|medication|medicine|pills|tablets|meds|infusions?)",
)
PERSONAL_DOSING = re.compile("|".join(_DOSING_FORMS), _I)


def is_personal_dosing(text: str) -> bool:
    """True when the question asks for a personal dose or whether to stop/change the writer's own treatment."""
    return bool(PERSONAL_DOSING.search(text))


_DECIDE = (
    r"take|have|get|start|do|go\s+for|choose|pick|join|try|refuse|decline|switch|undergo|continue|accept|"
    r"consider|opt|be\s+treated|enrol+|enter|skip|agree"
)
_DECISION_FORMS = (
    # "Should I take olaparib?", "Must I have chemo first?", "Should my mother have surgery?"
    rf"\b(?:should|must|shall|ought)\s+{_WHO}\s+(?:\w+\s+)?(?:{_DECIDE})\b",
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
