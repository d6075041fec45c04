"""Removing personal details (names, dates of birth, record numbers, contact details, addresses, very old ages)
from a question before it reaches NCBI, Anthropic, a trace or a log.

Pattern based, so it is cheap and predictable: it favours removing too much around identifiers that announce
themselves ("my name is", "MRN", "born on") over guessing at bare names, and it leaves medical content alone
(drug names, cancer types, stages, doses, gene names, years). Only the *kinds* removed are reported, never the values.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from cpqa.safety.names import full_names

# Kinds, as shown to the user ("We removed: name, phone number").
NAME = "name"
DATE_OF_BIRTH = "date of birth"
DATE = "date"
RECORD_NUMBER = "medical record number"
ID_NUMBER = "identification number"
PHONE = "phone number"
EMAIL = "email address"
ADDRESS = "street address"
AGE = "age over 89"


class PHIRedaction(NamedTuple):
    text: str
    removed: list[str]  # kinds, in the order first found; never the values


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
# A day-precise date: 3/14/1950, 3/14/50, 14.03.1950, 1950-03-14, March 14, 1950, 14 March 1950
# (not 1-8-15: chemotherapy days).
_FULL_DATE = (
    r"(?:\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}(?P<sep>[.-])\d{1,2}(?P=sep)\d{4}|\d{4}-\d{1,2}-\d{1,2}"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}})"
)
_ANY_DATE = rf"(?:{_FULL_DATE}|{_MONTH}\s+\d{{4}}|\d{{4}})"

# Capitalised words that follow "I am" / "my wife" but are not names.
_NOT_NAMES = frozenset(
    """
    a an the not so very just still now here there currently also really being getting going
    african american asian black white hispanic latina latino latinx jewish catholic christian muslim hindu
    buddhist native european british english irish scottish welsh canadian mexican chinese japanese korean
    indian vietnamese filipino german french italian spanish polish russian arab caucasian
    male female trans transgender pregnant diabetic vegan vegetarian allergic brca her2 er pr
    stage grade type on in at from with taking having scared worried afraid confused concerned
    sorry sure unsure aware interested wondering curious okay ok fine well sick tired
    mom mum dad doctor nurse patient caregiver oncologist surgeon
    monday tuesday wednesday thursday friday saturday sunday
    """.split()
)

_RELATIVE = (
    r"(?:wife|husband|partner|spouse|mother|father|mom|mum|dad|son|daughter|sister|brother|"
    r"aunt|uncle|grandmother|grandfather|grandma|grandpa|friend|boyfriend|girlfriend|fianc[ée]e?|child|baby|"
    r"doctor|oncologist|surgeon|nurse|physician|GP|radiologist|pharmacist)"
)
# Latin letters with accents (José, Müller); Latin Extended-A is taken as both cases.
_UPPER = "A-ZÀ-ÖØ-ÞĀ-ž"
_LOWER = "a-zß-öø-ÿĀ-ž"
_CAP_NAME = rf"[{_UPPER}][{_LOWER}]+(?:[-'][{_UPPER}]?[{_LOWER}]+)?"


_GLUE = frozenset("and i im i'm my with have has had was am is are who from but or of to".split())
_WORD = re.compile(r"[^\W\d_][\w'-]*")


def _replace_name(match: re.Match) -> str:
    """Replace the leading words of the captured name that plausibly are a name (up to three)."""
    end = None
    for count, word in enumerate(_WORD.finditer(match.group("name"))):
        if count == 3 or word.group(0).lower() in _NOT_NAMES or word.group(0).lower() in _GLUE:
            break
        end = word.end()
    if end is None:
        return match.group(0)
    offset = match.start("name") - match.start(0)
    whole = match.group(0)
    return whole[:offset] + "[name]" + whole[offset + end :]


_Rule = tuple[str, re.Pattern, str | Callable[[re.Match], str]]

_RULES: list[_Rule] = [
    (EMAIL, re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "[email]"),
    # Record numbers: a label, then an identifier that contains a digit.
    (
        RECORD_NUMBER,
        re.compile(
            r"\b(?:MRN|medical\s+record(?:\s+(?:number|no\.?|num|#))?|record\s+(?:number|no\.?|#)|"
            r"patient\s+(?:id|number|no\.?)|hospital\s+(?:number|no\.?)|NHS\s+(?:number|no\.?))"
            r"\s*(?:is|was|:|#|=)?\s*#?\s*(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{3,}\b",
            re.IGNORECASE,
        ),
        "[record number]",
    ),
    (ID_NUMBER, re.compile(r"\b\d{3}-\d{2}-\d{4}\b"), "[id number]"),
    (
        ID_NUMBER,
        re.compile(r"\b(?:SSN|social\s+security(?:\s+(?:number|no\.?|#))?)\s*(?:is|:|#)?\s*\d[\d -]{7,10}\d\b", re.I),
        "[id number]",
    ),
    (
        PHONE,
        re.compile(
            r"(?<![\w.+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)|\d{3})[\s.-]?\d{3}[\s.-]?\d{4}(?!\w|[.,]\d)"
            r"|(?<![\w.])\+\d{1,3}(?:[\s.-]?\d){7,12}(?!\w|[.,]\d)"
        ),
        "[phone]",
    ),
    (
        DATE_OF_BIRTH,
        re.compile(
            r"\b(?:date\s+of\s+birth|birth\s*date|birthday|d\.?o\.?b\.?|born(?:\s+on|\s+in)?)"
            rf"\s*(?:is|was|:|-)?\s*{_ANY_DATE}",
            re.IGNORECASE,
        ),
        "[date of birth]",
    ),
    (DATE, re.compile(rf"\b{_FULL_DATE}\b", re.IGNORECASE), "[date]"),
    (
        ADDRESS,
        re.compile(
            r"\b\d{1,6}\s+(?:(?:[A-Z][A-Za-z]*|\d+(?:st|nd|rd|th))\s+){1,4}(?i:Street|St|Avenue|Ave|Road|Rd|Boulevard|"
            r"Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Close|Crescent)\b\.?"
            r"(?:,?\s+(?:Apt|Apartment|Suite|Unit|Flat)\.?\s*#?\w+)?"
        ),
        "[address]",
    ),
    (
        ADDRESS,
        re.compile(r"\b(?:P\.?\s?O\.?\s+Box|zip(?:\s+code)?|postcode)\s*:?\s*[A-Z0-9-]{3,10}\b", re.I),
        "[address]",
    ),
    (ADDRESS, re.compile(r"(?<=, )[A-Z]{2}\s+\d{5}(?:-\d{4})?\b"), "[address]"),
    # Names announced by the writer ("my name is", "I'm Maria", "call me Jo", "my wife Anna", "Mrs. Jones").
    (
        NAME,
        re.compile(
            r"\b(?:my\s+name\s+is|my\s+name's|name:|call\s+me|signed,?)\s+"
            r"(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*){0,3})",
            re.IGNORECASE,
        ),
        _replace_name,
    ),
    (NAME, re.compile(rf"\b(?:I'm|I\s+am|Im)\s+(?P<name>{_CAP_NAME}(?:\s+{_CAP_NAME}){{0,2}})"), _replace_name),
    (
        NAME,
        re.compile(rf"\b(?i:my|our)\s+(?i:{_RELATIVE}),?\s+(?P<name>{_CAP_NAME}(?:\s+{_CAP_NAME}){{0,2}})"),
        _replace_name,
    ),
    (NAME, re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Doctor)\.?\s+{_CAP_NAME}(?:\s+{_CAP_NAME})?"), "[name]"),
    # Ages over 89 are identifying (HIPAA safe harbour): keep the clinical meaning, drop the exact number.
    (
        AGE,
        re.compile(
            r"\b(?:9\d|1[0-2]\d)(?:\s*|-)(?:years?|yrs?|y/?o)(?:[\s-]+old)?\b"
            r"|\b(?P<lead>aged?|I'm|I\s+am)\s+(?:9\d|1[0-2]\d)\b(?!\s*(?:mg|g|kg|ml|%|cm|mm|years|yrs))",
            re.IGNORECASE,
        ),
        lambda m: f"{m.group('lead')} over 89" if m.group("lead") else "over 89 years old",
    ),
]


def scrub_phi(text: str) -> PHIRedaction:
    """Remove personal details from ``text``: the cleaned ``.text`` and the ``.removed`` kinds (never the values).
    What was removed leaves no placeholder behind: "[name]" would become a search term."""
    removed: list[str] = []
    for kind, pattern, replacement in _RULES:
        text, count = _substitute(pattern, replacement, text)
        if count and kind not in removed:
            removed.append(kind)
    text, count = _phone_numbers(text)
    if count and PHONE not in removed:
        removed.append(PHONE)
    text, count = _unannounced_names(text)
    if count and NAME not in removed:
        removed.append(NAME)
    return PHIRedaction(drop_placeholders(text) if removed else text, removed)


PHONE_REGIONS = ("US", "GB")  # national formats read as these countries'; international (+...) ones always


def _phone_numbers(text: str) -> tuple[str, int]:
    """Phone numbers the patterns above miss (international and national formats), found by libphonenumber as
    valid numbers only, so doses, dates and lab values stay."""
    import phonenumbers

    spans = {
        (m.start, m.end)
        for region in PHONE_REGIONS
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID)
    }
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + "[phone]" + text[end:]
    return text, len(spans)


def _unannounced_names(text: str) -> tuple[str, int]:
    """Full names nobody announced ("This is Margaret Olsen writing"), by common given and family names."""
    spans = full_names(text)
    for start, end in reversed(spans):
        text = text[:start] + "[name]" + text[end:]
    return text, len(spans)


_PLACEHOLDER = re.compile(r"\[(?:name|email|record number|id number|phone|date of birth|date|address)\]")
# Words that only announce a personal detail: a clause left with nothing else said nothing about the question.
_ANNOUNCING = frozenset(
    """
    my name is name's names this here it i im i'm am was were born on in at of the a an and or call me signed
    email e-mail phone number mobile cell tel address live lives living contact reach date birth birthday dob
    mrn record id no hi hello dear writing from is be said says told tells asked wrote writes
    """.split()
)
_CLAUSE = re.compile(r"[^.!?;,:]*(?:[.!?;,:]+|$)")


def drop_placeholders(text: str) -> str:
    """``text`` without the placeholders ``_RULES`` put in: a clause that only announced the detail ("My name is
    [name].", "born [date of birth],") goes whole; elsewhere the placeholder alone goes ("my wife [name] has ...")."""
    kept: list[str] = []
    dropped = False
    for clause in _CLAUSE.findall(text):
        if not clause.strip():
            continue
        if _PLACEHOLDER.search(clause):
            words = re.findall(r"[\w'-]+", _PLACEHOLDER.sub(" ", clause).lower())
            if all(w in _ANNOUNCING for w in words):
                dropped = True
                continue
            clause = _PLACEHOLDER.sub("", clause)
        if dropped:  # "My name is X, and I have CLL" -> "I have CLL"
            clause = re.sub(r"^\s*(?:and|but|so)\b", "", clause, flags=re.IGNORECASE)
        kept.append(clause)
        dropped = False
    joined = re.sub(r"\s+([.,;!?])", r"\1", re.sub(r"\s{2,}", " ", "".join(kept))).strip(" ,;")
    return joined[:1].upper() + joined[1:] if joined else joined


def _substitute(pattern: re.Pattern, replacement, text: str) -> tuple[str, int]:
    changed = 0

    def apply(match: re.Match) -> str:
        nonlocal changed
        new = replacement(match) if callable(replacement) else replacement
        if new != match.group(0):
            changed += 1
        return new

    return pattern.sub(apply, text), changed
