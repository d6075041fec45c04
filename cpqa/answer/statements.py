"""What an evidence sentence states: a finding, an association, a number, an adverse event, a sign, an action, another
name, a classification, a recommendation (rule 2b of the addressing rule, ``cpqa.answer.intent``).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from cpqa.words import content_terms

Need = Literal[
    "side_effects",
    "symptoms",
    "rate",
    "mechanism",
    "recommendation",
    "effect",
    "risk",
    "types",
    "name",
    "definition",
    "finding",
]
NEEDS: tuple[str, ...] = get_args(Need)
_I = re.IGNORECASE

# A sentence that reports what a study found: a result, an effect, a comparison, a conclusion.
FINDING = re.compile(
    r"(?i)\b(?:significant(?:ly)?|reduc(?:ed|es|ing|tion)|increas(?:ed|es|ing)|decreas(?:ed|es|ing)|improv(?:ed|es|ing|"
    r"ement)|prolong(?:ed|s)|lower(?:ed)?|higher|associated with|correlat(?:ed|es|ion)|compared (?:with|to)|versus|"
    r"hazard ratio|odds ratio|relative risk|confidence interval|showed|shown|"
    r"demonstrat(?:ed|es)|found|suggest(?:ed|s)?|indicat(?:ed|es)|conclu(?:de|ded|sion)|effective|efficacy|"
    r"no (?:significant )?difference|did not|was not|were not|is not|are not|resulted in|led to|benefit(?:ed|s)?)\b"
    r"|\d\s?%|\bp\s?[<=>]\s?0?\.\d"
)
_EFFECT_SIZE = re.compile(
    r"\b(?:HR|OR|RR|CI|aHR|aOR|IRR|SMD|NNT|hazard ratio|odds ratio|relative risk|risk ratio|confidence interval)\b|"
    r"\d\s?%|\bp\s?[<=>]\s?0?\.\d|\b\d+(?:\.\d+)?[- ]fold\b|\bmedian\b[^.]{0,40}\d"
)
# Adverse events and symptoms in clinical and lay words (CTCAE's system-organ classes and their common terms).
# A generic word ("side effects", "toxicity") says what is talked about; only with a finding or a number does the
# sentence say what the side effects are ("tamoxifen side effects were studied" does not).
_AE_GENERIC = re.compile(
    r"\b(?:toxicit\w*|adverse|side[- ]?effects?|complications?|tolera\w*|morbidit\w*|sequelae?|late effects?|"
    r"safety|harms?|grade\s*(?:[1-5]|i{1,3}|iv))\b",
    _I,
)
_AE_TERMS = (
    r"nause|vomit|emesis|diarrh|constipat|mucositis|stomatitis|sore mouth|mouth sore|dysphagia|"
    r"esophagitis|oesophagitis|proctitis|colitis|enteritis|cystitis|fatigue|tired|exhaust|asthenia|weakness|"
    r"neuropath|numbness|tingling|paraesthes|paresthes|alopecia|hair loss|rash|dermatitis|erythema|pruritus|itch|"
    r"hand[- ]foot|desquamat|skin reaction|neutropeni|leukopeni|lymphopeni|anaemi|anemi|thrombocytopeni|"
    r"myelosuppress|bone marrow suppression|febrile|infection|sepsis|fever|bleeding|haemorrhag|hemorrhag|"
    r"thrombo|embol|clot|cardiotox|cardiomyopath|heart failure|arrhythmi|hypertension|hypotension|pneumonitis|"
    r"fibrosis|dyspnoea|dyspnea|breathless|cough|hepatotox|hepatitis|liver (?:damage|injury|enzyme)|nephrotox|"
    r"renal (?:failure|impairment|injury)|kidney (?:damage|injury)|incontinen|urinary|urgency|frequency|"
    r"erectile|impotence|sexual|infertil|fertility|menopaus|hot flash|hot flush|lymph(?:o)?edema|lymphoedema|"
    r"swelling|oedema|edema|pain|ache|headache|cognitive|memory|confusion|hearing loss|ototox|tinnitus|"
    r"weight (?:loss|gain)|appetite|anorexia|taste|dry mouth|xerostomia|osteoporos|fracture|hypothyroid|"
    r"endocrin|secondary (?:cancer|malignanc)|second (?:cancer|malignanc)|leukaemia|leukemia|treatment-related death|"
    r"hospitali[sz]|discontinu|dose (?:reduction|delay)|quality of life|distress|anxiety|depress|"
    # CTCAE's nervous system and general disorders
    r"seizure|convuls|letharg|somnolen|drows|coma\b|unconscious|syncope|faint|dizz|vertigo|tremor|ataxi|paralys|"
    r"blurred vision|vision loss|irritab"
)
# "also known as", "marketed as": another name follows
_ALIAS = (
    r"(?:also|commonly|formerly|previously|otherwise) (?:known|called|named|termed|referred to)|"
    r"(?:known|marketed|sold|licensed) as"
)
_STATEMENTS: dict[str, re.Pattern] = {
    "effect": FINDING,
    "risk": re.compile(
        r"\b(?:risks?|associat\w*|odds|hazard|incidence|link(?:ed|s)?|caus\w*|factors?|correlat\w*|increas\w*|"
        r"decreas\w*|higher|lower|elevated|predispos\w*|susceptib\w*|carriers?|mutations?|exposure|likely|"
        r"contribut\w*|protective|reduc\w*|HR|OR|RR|inherit\w*|autosomal|x-linked|recessive|dominant|"
        # a cause said in other words: "occurs because of poor eustachian tube function", "arises from"
        r"because of|due to|result(?:s|ed|ing)? from|aris(?:e|es|ing) from|stem(?:s|med)? from|triggered by)\b",
        _I,
    ),
    "rate": re.compile(
        r"\d\s?%|\b\d+(?:\.\d+)?\s?(?:per ?cent|percent)\b|\bper (?:100|1,?000|10,?000|100,?000|million)\b|"
        r"\b(?:one|1) in \w+\b|\b\d+ (?:of|out of) (?:the )?\d+|\brates?\b|\bincidence\b|\bprevalen\w*|\bproportion\b|"
        r"\bmedian\b|\bmean\b|\baverage\b|\bmost (?:common|frequent)\w*|\b(?:common|rare|frequent|uncommon|"
        r"infrequent)\b|\bmajority\b|\bminority\b|\b\d+(?:\.\d+)?\s?(?:months?|years?|weeks?|days?)\b|"
        r"\b(?:half|third|quarter|fifth|tenth)s?\b|\bratio\b|\bfrequency\b|"
        # an age: when a disease begins or is found ("onset in the second decade", "diagnosed in childhood")
        r"\bdecades?\b|\b(?:infancy|childhood|adolescence|adulthood|middle age|old age)\b|\byears? (?:of age|old)\b|"
        r"\bage[sd]? (?:of |at )?\d+|\bby (?:the )?age (?:of )?\d+",
        _I,
    ),
    "side_effects": re.compile(rf"\b(?:{_AE_TERMS})", _I),  # or a generic word with a finding (``states``)
    "symptoms": re.compile(
        rf"\b(?:symptom\w*|signs?\b|present(?:ed|ing|s|ation)?\b|complain\w*|manifest\w*|{_AE_TERMS}|lump|mass|"
        r"palpable|bloat\w*|jaundice|hoarse\w*|blood|bloody|discharge|ulcer\w*|lesion)",
        _I,
    ),
    "mechanism": re.compile(
        r"\b(?:inhibit\w*|activat\w*|bind\w*|binds|pathways?|signal\w*|express\w*|mediat\w*|regulat\w*|induc\w*|"
        r"block\w*|target\w*|via|through|mechanisms?|suppress\w*|apoptos\w*|apoptotic|phosphorylat\w*|receptors?|"
        r"enzymes?|mutat\w*|damag\w*|repair\w*|cell cycle|proliferat\w*|metaboli\w*|immune|antibod\w*|kinases?|"
        r"promot\w*|interact\w*|transcript\w*|degrad\w*|cleav\w*|stimulat\w*|triggers?|drives?|driven|"
        r"depend\w*|required|role)\b",
        _I,
    ),
    # another name for what was asked: an abbreviation spelled out, a code, a brand or generic name beside it (a
    # bracket of statistics, "(RR 0.53; 95% CI ...)", names nothing)
    "name": re.compile(
        rf"\((?![^()]*(?:\d[.,]\d|[%;=<>]))[^()]*[A-Za-z]{{2}}[^()]{{0,60}}\)|\b(?:{_ALIAS})\b|"
        r"\b(?:brand|trade|generic|proprietary) names?\b|[®™]|"
        r"\b(?:stands?|short) for\b|\babbreviat\w*|\bacronym\b|\bsynonym\w*",
        _I,
    ),
    # the kinds of a thing, listed: "There are four types of headache: vascular, ...", "The two main types of lung
    # cancer are ...", "Types of breast cancer include ..."; not "the most common type of blood cancer" (what it is)
    # or a list of three or more named after "include", "including", "such as" ("antibodies, including single-targeted
    # antibodies, bispecific antibodies and ADCs"; "Common nail problems include ...")
    "types": re.compile(
        r"\b(?:types|kinds|forms|subtypes|categories|classes|varieties)\b[^.;]{0,80}?(?::|\binclud\w*|\bare\b)|"
        r"\bclassified (?:as|into)\b|\bdivided into\b|"
        r"\b(?:includ(?:e|es|ing)|such as|namely)\b[^.;:]{1,80}?,[^.;:]{1,80}?\b(?:and|or)\b",
        _I,
    ),
    "definition": re.compile(
        r"\b(?:is|are|was|were)\s+(?:a|an|the|one of|defined|considered|classified|known)\b|\brefers? to\b|"
        r"\bdefined as\b|\bknown as\b|\bcalled\b|\bcharacteri[sz]ed by\b|\bconsists? of\b|\bform of\b|"
        r"\btype of\b|\bsubtype\b|\bclass of\b|\bterm\b",
        _I,
    ),
    "recommendation": re.compile(
        r"\b(?:recommend\w*|guidelines?|should|indicated|indication|standard|advis\w*|consider\w*|candidates?|"
        r"suitable|appropriate|offer\w*|options?|prefer\w*|first[- ]line|second[- ]line|warrant\w*|treated with|"
        r"treatment of choice|mainstay|management|approach\w*|effective|efficacy|benefit\w*|therap\w*|surgery|"
        r"resection|chemotherapy|radiotherapy|radiation|screening|surveillance|used|use of|helpful|successful|"
        r"powerful)\b",
        _I,
    ),
}


_WORD = re.compile(r"[A-Za-z0-9][\w-]*")
_BRACKET_AFTER = re.compile(r"\s*[®™]|\s*\(")
_ALIAS_AFTER = re.compile(  # a few words may come between: "sildenafil citrate, sold as Viagra"
    rf"(?:[\s,]+[\w-]+){{0,3}}?,?\s+(?:{_ALIAS}|stands? for)\b", _I
)
_ALIAS_BEFORE = re.compile(r"\b(?:known as|called|named|termed|referred to as|brand name|trade name)\s*$", _I)


def names_beside(sentence: str, stems: set[str]) -> bool:
    """Whether ``sentence`` gives a word of ``stems`` (content stems) another name beside it: in brackets after or
    around it ("apixaban (Eliquis)", "fragment-based drug discovery (FBDD)"), with a brand mark, or "also known as".
    "PSA velocity (PSAV)" names the velocity, not PSA."""
    if not states(sentence, "name"):
        return False
    for word in _WORD.finditer(sentence):
        if not set(content_terms(word.group(0))) & stems:
            continue
        before, after = sentence[: word.start()], sentence[word.end() :]
        inside = before.count("(") > before.count(")")  # "biologicals (biological ... drugs, bDMARDs)"
        if inside or _BRACKET_AFTER.match(after) or _ALIAS_AFTER.match(after) or _ALIAS_BEFORE.search(before):
            return True
    return False


def effect_size(sentence: str) -> bool:
    """Whether a sentence reports a number a clinician weighs: a ratio, an interval, a percentage, a p-value."""
    return _EFFECT_SIZE.search(sentence) is not None


def states(sentence: str, need: Need) -> bool:
    """Whether ``sentence`` makes the kind of statement ``need`` asks for (rule 2b)."""
    if need == "finding":
        return True
    if need == "side_effects" and _AE_GENERIC.search(sentence):
        if FINDING.search(sentence) or _STATEMENTS["rate"].search(sentence):
            return True
    return _STATEMENTS[need].search(sentence) is not None


__all__ = ["FINDING", "NEEDS", "Need", "effect_size", "names_beside", "states"]
