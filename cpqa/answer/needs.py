"""What a question asks for (rule 1 of ``cpqa.answer.intent``): the kinds of statement that answer it, read from its
wording with the names of its conditions said as "it" ("hereditary angioedema" does not ask about inheritance).
"""

from __future__ import annotations

import re
from typing import Sequence

from cpqa.answer.statements import Need

_I = re.IGNORECASE

_AE_NOUNS = r"side[- ]?effects?|adverse|toxicit\w*|complications?|after[- ]?effects?|late effects?|harms?\b|tolerab\w*"
_QUESTION_NEEDS: tuple[tuple[Need, re.Pattern], ...] = (
    (
        "side_effects",
        re.compile(
            rf"{_AE_NOUNS}|\bwhat (?:happens|to expect) (?:after|during|with)|\brisks? (?:of|from|with) (?:having |"
            r"getting |taking |undergoing |receiving )?(?:the |a |an )?[\w-]*\s?(?:therapy|surgery|treatment|chemo\w*|"
            r"radiation|radiotherapy|operation|procedure|drug|medication|transplant)",
            _I,
        ),
    ),
    (
        # "blood in my wee, could it be bladder cancer?", "a painless lump, is that how lymphoma starts?"
        "symptoms",
        re.compile(
            r"\bsymptoms?\b|\bsigns?\b|\bwarning signs\b|\bpresent(?:s|ation)? (?:with|of)"
            r"|\bcould (?:it|this|that) be\b|\bis (?:it|this|that) how\b",
            _I,
        ),
    ),
    (
        "rate",
        re.compile(
            r"\bhow (?:common|rare|often|many|much more|likely|frequent(?:ly)?|long (?:do|does|can|will|would|is))\b|"
            r"\bwhat (?:percentage|proportion|fraction|share|number|are the (?:chances|odds))\b|\bpercent|"
            r"\b(?:survival|response|cure|recurrence|relapse|success|mortality|death|remission|incidence) rates?\b|"
            r"\bchances? (?:of|to|that)\b|\bodds of\b|\blife expectancy\b|\bprevalen\w*|\bincidence\b|\bfrequency\b|"
            r"\bage (?:of|at) (?:onset|diagnosis)\b|\bonset age\b|\b(?:at )?what age\b|\bhow old\b",
            _I,
        ),
    ),
    (
        "mechanism",
        re.compile(
            r"\bhow (?:does|do|can|could|would) .{1,60}\b(?:work|act|kill|cause|lead to|spread|develop|grow|become)|"
            r"\bmechanisms?\b|\bmode of action\b|\bwhy (?:does|do|is|are|would|can)\b|\brole of\b|\bpathways?\b|"
            r"\bwhat does .{1,40}\bdo\b|\bfunction of\b|\bhow .{1,40}\b(?:regulated|activated|inhibited)\b",
            _I,
        ),
    ),
    (
        "recommendation",
        re.compile(
            r"^\s*(?:should|when should|who should|at what age|how often should)\b|\brecommend\w*|\bguidelines?\b|"
            r"\bwhat (?:should|can|could|do) (?:i|we|you|one|he|she|they|patients?|people) do\b|"
            r"\bis it (?:advisable|recommended|necessary|safe)\b|"
            r"\bbest (?:treatment|way|option|approach|therapy|drug|medic)|"
            r"\bstandard (?:of care|treatment|therapy)|\bindicated\b|\bfirst[- ]line\b|\btreatment options?\b|"
            r"\bwhat (?:is|are) the (?:treatments?|therap(?:y|ies)|management|options?)\b|"
            r"\bhow (?:is|are|should|do you|do they|can) .{1,50}\b(?:treated|managed|prevented|screened|cured)\b|"
            r"\b(?:which|what) (?:drugs?|treatments?|therap(?:y|ies)|medications?) (?:are|is|can|should)\b",
            _I,
        ),
    ),
    (
        "effect",
        re.compile(
            r"\b(?:reduce|reduces|lower|lowers|decrease|decreases|prevent|prevents|improve|improves|prolong|prolongs|"
            r"extend|extends|help|helps|work|works|cure|cures|shrink|shrinks|delay|delays|slow|slows)\b|"
            r"\b(?:effective|efficacy|effectiveness|benefits?|beneficial|useful|better than|worse than|superior|"
            r"inferior|compared? (?:to|with)|versus|vs\.?|outcomes?|impact|influence|respon(?:d|se|sive))\b|"
            r"(?<!side )(?<!side-)\beffects? (?:of|on)\b|\baffects?\b",
            _I,
        ),
    ),
    (
        "risk",
        re.compile(
            r"\brisks?\b|\bcause[sd]?\b|\bcausing\b|\bassociat\w*|\blink(?:ed|s)?\b|\bcorrelat\w*|\brelat(?:ed|ionship)\b|"
            r"\bhereditary\b|\bgenetic\b|\binherit\w*|\bpredispos\w*|\bsusceptib\w*|\bcontribut\w*|\bmore likely\b|"
            r"\bincrease\w*",
            _I,
        ),
    ),
    (
        # which kinds a thing comes in: "what are the types of leukemia?", "how many kinds of skin cancer are there?"
        # ("what type of cancer is mesothelioma?" asks what it is: a definition)
        "types",
        re.compile(
            r"\b(?:types|kinds|forms|subtypes|categories|classes|varieties|sorts) of\b|"
            r"\bhow many (?:types|kinds|forms|subtypes)\b|\b(?:types|kinds|forms) (?:are there|exist)\b",
            _I,
        ),
    ),
    (
        "name",
        re.compile(
            r"\bstands? for\b|\b(?:another|other|alternative|generic|brand|trade|proprietary|commercial|full|common)"
            r"[- ]?names?\b|\btradenames?\b|\bsynonyms?\b|\bacronym\b|\babbreviation (?:of|for)\b|\bshort for\b",
            _I,
        ),
    ),
    (
        "definition",
        re.compile(
            r"^\s*(?:what(?:'s| is| are) (?:a |an |the )?[\w\s,/()'-]{1,60}\??\s*$|define\b|definition\b)|"
            r"\bwhat does .{1,40}\bmean\b|\bwhat kind of\b|\bwhat type of\b",
            _I,
        ),
    ),
)


# A question asking for a counted set of things ("what are the 5 common nail problems?", "the three main ...").
_COUNTED = re.compile(
    r"\bwhat are (?:the |some )?(?:\d+|two|three|four|five|six|seven|eight|nine|ten|several)\b(?! (?:percent|%))", _I
)


def without_names(question: str, concepts: Sequence = ()) -> str:
    """``question`` with the name of each condition it asks about said as "it": a word inside a disease's name
    ("hereditary angioedema", "HPV-associated cancer") names the disease; it does not ask for a risk."""
    for concept in concepts:
        if getattr(concept, "kind", None) == "disease" and concept.text.strip():
            question = re.sub(rf"(?i)(?<![\w-]){re.escape(concept.text)}(?![\w-])", "it", question)
    return question


def question_needs(question: str, concepts: Sequence = ()) -> tuple[Need, ...]:
    """The kinds of statement that answer ``question`` (rule 1 of the module's docstring), in the order above: a
    question may ask for several ("the benefits and side effects of olaparib"). A definition is asked for only when
    nothing else is; with no cue at all, any finding about the subject answers. ``concepts``: the question's (the
    rewrite's), whose conditions' names are not read as cues (``without_names``)."""
    wording = without_names(question, concepts)
    needs = [need for need, pattern in _QUESTION_NEEDS if pattern.search(wording)]
    if len(needs) > 1 and "definition" in needs:
        needs.remove("definition")
    if needs == ["definition"] and _COUNTED.search(wording):
        needs = ["types"]  # "what are the 5 common nail problems?" asks for a list of them, not what one is
    return tuple(needs) or ("finding",)
