"""Whether an evidence sentence answers what was asked, or only mentions the topic.

"What are the side effects of radiotherapy for prostate cancer?" is not answered by a sentence about patients'
treatment preferences that names the same treatment. The rule, published in docs/results.md ("Answers that answer"):

1. **The question's needs** (``question_needs``): the kinds of statement that answer it, read from its wording:
   side effects, symptoms, a rate, a mechanism, a recommendation, an effect, a risk, a definition (only when nothing
   else is asked), or (none of these) any finding about its subject.
2. **A sentence addresses the question** (``Addressing.addresses``) when it (a) names the question's subject, each key
   concept by any of its names (the rewrite's concepts with their MeSH synonyms, matched by stem): the disease may be
   named by the sentence's record instead (an abstract about breast cancer does not repeat it in every sentence),
   a treatment must be named in the sentence, and of the other key concepts at most a third may be missing; and
   (b) states what one of its needs asks: a finding for an effect (a change, a comparison, a ratio, no difference), an
   association for a risk, a number or frequency for a rate, an adverse event for side effects (CTCAE's vocabulary
   in lay and clinical words), a sign for symptoms, an action for a mechanism, a classification for a definition, a
   recommendation or treatment for a recommendation.
3. **What a "which" question asks for** (``cpqa.answer.asked_type``): "which disease is treated with tebentafusp?"
   asks for a disease. A sentence naming the subject and a thing of that kind the question does not name
   (``Addressing.names_asked``) addresses it, and is quoted before the sentences that address it by rule 2.

The extractive answerer quotes addressing sentences first and says plainly when none addresses the question; a
model-written answer is checked by the same rule (``cpqa.answer.verify.judged``); ``cpqa eval answers`` counts
answers whose first sentence does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence

from cpqa.answer.asked_type import AskedType
from cpqa.types import Passage
from cpqa.words import content_terms, is_specialist

Need = Literal[
    "side_effects", "symptoms", "rate", "mechanism", "recommendation", "effect", "risk", "definition", "finding"
]
NEEDS: tuple[str, ...] = (
    "side_effects",
    "symptoms",
    "rate",
    "mechanism",
    "recommendation",
    "effect",
    "risk",
    "definition",
    "finding",
)
_I = re.IGNORECASE

# ------------------------------------------------------------------ what a question asks for
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
    ("symptoms", re.compile(r"\bsymptoms?\b|\bsigns?\b|\bwarning signs\b|\bpresent(?:s|ation)? (?:with|of)", _I)),
    (
        "rate",
        re.compile(
            r"\bhow (?:common|rare|often|many|much more|likely|frequent(?:ly)?|long (?:do|does|can|will|would|is))\b|"
            r"\bwhat (?:percentage|proportion|fraction|share|number|are the (?:chances|odds))\b|\bpercent|"
            r"\b(?:survival|response|cure|recurrence|relapse|success|mortality|death|remission|incidence) rates?\b|"
            r"\bchances? (?:of|to|that)\b|\bodds of\b|\blife expectancy\b|\bprevalen\w*|\bincidence\b|\bfrequency\b|"
            r"\bage (?:of|at) (?:onset|diagnosis)\b|\bonset age\b|\bat what age\b|\bhow old\b",
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
            r"\bis it (?:advisable|recommended|necessary|safe)\b|\bbest (?:treatment|way|option|approach|therapy)|"
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
            r"\bhereditary\b|\binherit\w*|\bpredispos\w*|\bsusceptib\w*|\bcontribut\w*|\bmore likely\b|\bincrease\w*",
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
    return tuple(needs) or ("finding",)


# ------------------------------------------------------------------ what a sentence states
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
    r"hospitali[sz]|discontinu|dose (?:reduction|delay)|quality of life|distress|anxiety|depress"
)
_STATEMENTS: dict[str, re.Pattern] = {
    "effect": FINDING,
    "risk": re.compile(
        r"\b(?:risks?|associat\w*|odds|hazard|incidence|link(?:ed|s)?|caus\w*|factors?|correlat\w*|increas\w*|"
        r"decreas\w*|higher|lower|elevated|predispos\w*|susceptib\w*|carriers?|mutations?|exposure|likely|"
        r"contribut\w*|protective|reduc\w*|HR|OR|RR|inherit\w*|autosomal|x-linked|recessive|dominant)\b",
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
        r"\bage[sd]? (?:of |at )?\d+",
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
        r"resection|chemotherapy|radiotherapy|radiation|screening|surveillance|used|use of)\b",
        _I,
    ),
}


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


# ------------------------------------------------------------------ the question's subject
@dataclass(frozen=True)
class Subject:
    """One key concept of the question, by all its names' stems."""

    names: tuple[frozenset[str], ...]  # each name as its set of content stems
    kind: str  # "disease", "treatment" or "other"
    proper: bool = False  # named by a word general English rarely uses (a drug, a gene, a test's name)

    def named_in(self, stems: frozenset[str]) -> bool:
        return any(name and name <= stems for name in self.names)


# The words a question uses to say what it asks for, not what it is about ("how common", "side effects", "risk").
_NEED_WORDS = frozenset(
    content_terms(
        "side effect effects adverse toxicity toxicities complication complications harm harms tolerability common "
        "rare often many much likely frequent frequently percentage proportion fraction number chance chances odds "
        "rate rates incidence prevalence frequency risk risks cause causes caused factor factors associated "
        "association link linked related mechanism mechanisms role work works act pathway function recommend "
        "recommended recommendation guideline guidelines best option options standard care symptom symptoms sign signs "
        "define definition mean meaning kind type effect effective efficacy benefit benefits outcome outcomes impact "
        "help helps improve reduce lower prevent increase expect happen first early earliest initial main typical "
        "usual inheritance inherited inherit hereditary mode pattern onset age origin "
        # a condition's class: a sentence from the condition's record names the condition, not its class
        "disease diseases disorder disorders syndrome syndromes condition conditions illness"
    )
)
_OUTCOME_NEEDS = ("effect", "risk")  # an intent word that is not a need word is the outcome asked about ("recurrence")


def subjects_of(concepts: Sequence, needs: Sequence[Need] = ("finding",)) -> list[Subject]:
    """The key concepts an answering sentence must name (``Concept``s of the rewrite, with their phrases, synonyms and
    MeSH heading): neither weak nor a word saying what is asked (``_NEED_WORDS``); an intent concept only as the
    outcome of an effect or a risk ("recurrence" in "does tamoxifen reduce the risk of recurrence?")."""
    found = []
    for concept in concepts:
        stems = set(content_terms(concept.text))
        if getattr(concept, "weak", False) or not stems or stems <= _NEED_WORDS:
            continue
        if concept.kind == "intent" and not set(needs) & set(_OUTCOME_NEEDS):
            continue
        texts = {concept.text, *concept.phrases, *concept.synonyms, *([concept.mesh] if concept.mesh else [])}
        names = tuple(frozenset(content_terms(t)) for t in texts if t.strip())
        names = tuple(n for n in names if n)
        if names:
            proper = any(is_specialist(w) for w in re.findall(r"[a-z][a-z0-9-]+", concept.text.lower()))
            found.append(
                Subject(names=names, kind="other" if concept.kind == "intent" else concept.kind, proper=proper)
            )
    return found


@dataclass
class Addressing:
    """The rule, bound to one question: ``addresses(sentence, record_text)``."""

    needs: tuple[Need, ...]
    subjects: list[Subject]
    wording: str = ""  # the question as asked, its conditions named "it" (``without_names``)
    asks_for: AskedType | None = None  # what a "which" question asks for (rule 3)

    @classmethod
    def of(cls, question: str, concepts: Sequence | None = None) -> "Addressing":
        """The rule for ``question``, whose subject is ``concepts`` (the rewrite's); without them, the question's
        concepts by the built-in vocabulary."""
        if concepts is None:
            from cpqa.rewrite.concepts import process_question
            from cpqa.rewrite.vocabulary import BUILTIN, Vocabulary

            concepts = process_question(question, Vocabulary(BUILTIN)).concepts
        wording = without_names(question, concepts)
        needs = question_needs(wording)
        return cls(needs=needs, subjects=subjects_of(concepts, needs), wording=wording, asks_for=AskedType.of(wording))

    def names_subject(self, sentence: str, record_text: str = "") -> bool:
        """Rule 2a: every treatment named in the sentence, a disease in the sentence or its record, and of the rest
        at most a third missing."""
        stems = _stems(sentence) | _spelled_out(sentence, record_text) if record_text else _stems(sentence)
        record = _stems(record_text) | stems if record_text else stems
        others = [s for s in self.subjects if s.kind not in ("disease", "treatment")]
        if not all(s.named_in(stems) for s in self.subjects if s.kind == "treatment"):
            return False
        if not all(s.named_in(record) for s in self.subjects if s.kind == "disease"):
            return False
        missing = sum(not s.named_in(stems) for s in others)
        return missing <= len(others) // 3

    def asked(self, question: str) -> str:
        """The question with every name of its subjects (the rewrite's synonyms, the lay words' clinical terms)."""
        return " ".join([question, *(" ".join(name) for s in self.subjects for name in s.names)])

    def names_condition(self, text: str, record_text: str = "") -> bool:
        """Whether ``text`` (with its record) names every disease and treatment the question is about: what a patient
        page's section must be about (the page's headings say what it states, so the question's other words need not
        be in it)."""
        stems = _stems(text) | _stems(record_text)
        return all(s.named_in(stems) for s in self.subjects if s.kind in ("disease", "treatment"))

    def names_asked(self, sentence: str, record_text: str = "") -> bool:
        """Rule 3: ``sentence`` names a thing of the kind a "which" question asks for, and what the question names:
        each of its subjects named by a word general English rarely uses (a disease may be named by the record), or
        (it names none) its subject by rule 2a. "Which company produces the Oncomine Dx target test?" is about
        Oncomine; "company", "produces" and "target" say what is asked."""
        if not (self.asks_for and self.asks_for.named_in(sentence)):
            return False
        proper = [s for s in self.subjects if s.proper]
        if not proper:
            return self.names_subject(sentence, record_text)
        stems = _stems(sentence) | _spelled_out(sentence, record_text) if record_text else _stems(sentence)
        record = _stems(record_text) | stems if record_text else stems
        missing = sum(not s.named_in(record if s.kind == "disease" else stems) for s in proper)
        return missing <= len(proper) // 3

    def addresses(self, sentence: str, record_text: str = "") -> bool:
        """Whether ``sentence`` (from a record holding ``record_text``) answers one of the question's needs (rule 2),
        or names what a "which" question asks for (rule 3)."""
        if any(states(sentence, need) for need in self.needs) and self.names_subject(sentence, record_text):
            return True
        return self.names_asked(sentence, record_text)


@lru_cache(maxsize=256)
def _stems(text: str) -> frozenset[str]:
    """Content stems of a text; kept, since every sentence of a passage is judged against the same record text."""
    return frozenset(content_terms(text))


@lru_cache(maxsize=256)
def _abbreviations(record_text: str) -> tuple[tuple[re.Pattern, frozenset[str], frozenset[str]], ...]:
    """The abbreviations a record defines ("Duchenne muscular dystrophy (DMD)"), each as a pattern finding the short
    form, the short form's stems and the long form's stems."""
    from cpqa.rewrite.concepts import defined_abbreviations

    return tuple(
        (
            re.compile(rf"(?<![\w-]){re.escape(short)}(?![\w-])"),
            frozenset(content_terms(short)),
            frozenset(content_terms(long)),
        )
        for short, long in defined_abbreviations(record_text).items()
    )


_REFERS_BACK = re.compile(
    r"\b(?:this|these|the) (?:conditions?|disorders?|diseases?|syndromes?|cancers?|tumou?rs?|malignanc(?:y|ies))\b", _I
)


def _spelled_out(sentence: str, record_text: str) -> frozenset[str]:
    """What ``sentence`` names by its record: an abbreviation the record defines names its long form ("DMD" names
    Duchenne muscular dystrophy in a record that spells it out) and the long form the abbreviation ("human
    papillomavirus" names HPV); a sentence saying "this condition" names what its record (a patient page's section,
    an abstract) is about."""
    if _REFERS_BACK.search(sentence):
        return _stems(record_text)
    stems, named = _stems(sentence), set()
    for short, short_stems, long in _abbreviations(record_text):
        if short.search(sentence):
            named |= long
        elif long and long <= stems:
            named |= short_stems
    return frozenset(named)


def record_text(passage: Passage) -> str:
    """What a passage says of its record: title, passage and the record's conclusions (a sentence's context)."""
    return " ".join(t for t in (passage.title, passage.text, passage.conclusion) if t)


__all__ = [
    "Addressing",
    "FINDING",
    "record_text",
    "NEEDS",
    "Need",
    "effect_size",
    "question_needs",
    "states",
    "subjects_of",
]
