"""What kind of thing a "which" question asks for, and whether a sentence names one.

"Which disease is treated with tebentafusp?" is answered by a sentence naming a disease the question does not
("approved for metastatic uveal melanoma"), not by one saying what tebentafusp is. The kinds are UMLS's semantic
groups (McCray et al., 2001, "Aggregating UMLS semantic types"), as far as a word's form tells them apart:

- **disorders**: a word built on a disorder's combining form (-itis, -osis, -oma, -emia, -pathy, -plasia, ...:
  MedlinePlus, "Understanding medical words") or a disorder's head noun ("syndrome", "leukemia", "infection");
- **genes and molecules**: a symbol as HGNC writes one (capitals and digits: "PRF1", "KRAS", "PDGFRα");
- **chemicals and drugs**: a name on one of WHO's INN stems ("-mab", "-tinib", "-parib", "-siran": "The use of stems
  in the selection of International Nonproprietary Names", WHO 2018), a code name ("AMG334", "RTA 408") or a symbol;
- **living beings**: a binomial ("Rickettsia japonica") or a taxon's suffix ("-virus", "-coccus", "-bacter");
- **organisations**: a company by its legal or trade suffix ("Alnylam Pharmaceuticals", "Roche AG") or as the one a
  thing was "developed by";
- **dates**: a year ("which year", "when was ... approved?"), 1800 to 2099;
- **a named thing** (a tool, a test, a pathway): a word general English rarely uses.

The name must be one the question does not use: a sentence restating the question names nothing new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from cpqa.options import AnswerOptions
from cpqa.words import is_specialist

Group = Literal["disorder", "gene", "drug", "organism", "company", "date", "name", "treatment"]
_I = re.IGNORECASE

# Head nouns of each group, as a question names what it asks for ("which two genes", "what viral infection").
_HEADS: dict[Group, str] = {
    "disorder": r"diseases?|disorders?|syndromes?|conditions?|infections?|cancers?|tumou?rs?|malignanc(?:y|ies)|"
    r"illness(?:es)?|neoplasms?|patholog(?:y|ies)",
    "gene": r"genes?|proteins?|molecules?|receptors?|enzymes?|kinases?|factors?|markers?|biomarkers?|mutations?|"
    r"variants?|targets?|antigens?|ligands?|transporters?|channels?|hormones?|cytokines?|mi(?:cro)?rnas?|rnas?|"
    r"alleles?|isoforms?|subunits?|domains?|marks?",
    "drug": r"drugs?|medications?|medicines?|agents?|inhibitors?|antagonists?|agonists?|antibod(?:y|ies)|vaccines?|"
    r"compounds?|antibiotics?|components?",
    # asked for by the addressing rule's recommendation need (rule 2), not by a name: surgery, radiotherapy ...
    "treatment": r"therap(?:y|ies)|treatments?|chemotherap(?:y|ies)|surger(?:y|ies)|procedures?|options?",
    "organism": r"organisms?|bacteri(?:um|a)|virus(?:es)?|pathogens?|species|famil(?:y|ies)|microbes?|parasites?|"
    r"fung(?:us|i)|strains?|genus|genera",
    "company": r"compan(?:y|ies)|manufacturers?|firms?|sponsors?",
    "date": r"years?|decades?",
    "name": r"tools?|databases?|software|packages?|resources?|editors?|algorithms?|servers?|programs?|platforms?|"
    r"names?|brands?|tests?|assays?|scores?|scales?|criteria|pathways?|tissues?|organs?|cells?",
}
_GROUP_OF: tuple[tuple[Group, re.Pattern], ...] = tuple((g, re.compile(rf"^(?:{p})$", _I)) for g, p in _HEADS.items())
_ANY_HEAD = "|".join(_HEADS.values())
# "which [is the] [up to four modifiers] HEAD", "list [the] ... HEADs": a modifier is neither a verb's auxiliary nor
# a preposition ("what is the function of the protein ..." asks for a function, not a protein).
_WHICH = re.compile(
    rf"\b(?:which|what)\s+(?:(?:is|are|was|were)\s+(?:the|an?)\s+)?((?:[\w/-]+\s+){{0,4}}?)({_ANY_HEAD})\b", _I
)
_LIST = re.compile(
    rf"^\s*(?:please\s+)?(?:list|name|enumerate)\s+(?:the\s+)?((?:[\w/-]+\s+){{0,5}}?)({_ANY_HEAD})\b", _I
)
_NOT_MODIFIER = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|has|have|of|for|in|by|with|to|on|from|at|as|that|which|the|a|an|"
    # a question's verbs: "what causes Noonan syndrome?" asks for a cause, not a syndrome
    r"causes?|caused|happens?|makes?|triggers?|leads?|increases?|decreases?|affects?|helps?|determines?|means?|"
    r"should|would|will|must|might|may)$",
    _I,
)

_DISORDER = re.compile(
    r"\b\w{3,}(?:itis|osis|oses|omas?|omata|emia|aemia|pathy|pathies|plasia|trophy|algia|iasis|penia|rrhoea|rrhea|"
    r"plegia|philia|cele)\b|\b(?:disease|disorder|syndrome|cancer|carcinoma|leuka?emia|lymphoma|sarcoma|tumou?r|"
    r"infection|deficiency|fever|failure|dystrophy|palsy|dementia|epilepsy|diabetes|influenza|ha?emorrhage|injury|"
    r"sclerosis|insufficiency|malformation|anomal(?:y|ies))s?\b",
    _I,
)
_SYMBOL = re.compile(r"(?<![\w-])(?=[\w-]*[A-Z][\w-]*[A-Z0-9])[A-Za-z][A-Za-z0-9-]{1,12}[α-ω]?(?![\w-])")
_ENZYME = re.compile(r"\b\w{3,}ases?\b")  # aldolase, transferase, kinase
_CODE_NAME = re.compile(r"(?<![\w-])[A-Z]{2,5}[- ]?\d{2,6}(?![\w-])")
_INN_STEM = re.compile(
    r"\b\w{2,}(?:mab|tinib|nib|coxib|mantadine|ciclib|parib|platin|taxel|rubicin|mustine|tecan|zomib|lisib|degib|vir|"
    r"mycin|cillin|cycline|oxacin|azole|sartan|pril|olol|statin|gliptin|gliflozin|glutide|tide|gepant|rsen|siran|gene|vec|cel|"
    r"stim|kinra|cept|amide|azepam|profen|dronate|parin|fungin|xaban|gatran|lukast|setron|tidine|prazole|semide|"
    r"thiazide|dipine|triptan|caine|olone|terol|tropium|curium)\b",
    _I,
)
_ORGANISM = re.compile(
    r"\b[A-Z][a-z]{3,}\s(?:[a-z]{4,}|spp?\.)|\bgenus\s[A-Z][a-z]{3,}\b|"
    r"\b\w+(?:virus|viruses|bacter|coccus|cocci|bacillus|bacilli|monas|myces)\b"
)
_COMPANY = re.compile(
    r"\b[A-Z][\w&.-]*(?:\s[A-Z][\w&-]*){0,2},?\s(?:Pharmaceuticals?|Pharma|Therapeutics|Biotech(?:nology)?|"
    r"Biosciences|Biologics|Laboratories|Labs|Inc\b|Ltd\b|Limited|Corp(?:oration)?\b|Co\.|GmbH|AG\b|S\.?A\.?\b|"
    r"plc\b|LLC\b|N\.?V\.?\b|K\.?K\.?\b)|\b(?:developed|manufactured|marketed|produced|made|sponsored|discovered|"
    r"sold|licensed)\b[^.;()]{0,30}?\bby\s(?:the\s)?[A-Z][\w&-]+"
)
_YEAR = re.compile(r"(?<![\w.-])(?:18|19|20)\d{2}(?![\w.-]|\s?(?:mg|patients|cases|subjects|participants))")
# "when was X approved?" asks for a date as "which year" does; "when should X be used?" asks for a time, not a date
_WHEN = re.compile(r"^\s*(?:in\s+)?when\s+(?:was|were|did)\b", _I)
_WORD = re.compile(r"[A-Za-z][\w-]*\w|[A-Za-z]")
_QUESTION_WORD = re.compile(rf"{_WORD.pattern}|\d+")  # a year the question names is not an answer either


@dataclass(frozen=True)
class AskedType:
    """The kind of thing a question asks for (``group``), by the noun it asks with (``head``), and the question's
    own words (a name among them is not an answer)."""

    group: Group
    head: str
    question_words: frozenset[str]

    @classmethod
    def of(cls, question: str) -> "AskedType | None":
        """What ``question`` asks for, when it asks "which X" or "list X" of a kind above, or when a thing was done;
        else None."""
        if _WHEN.search(question):
            return cls("date", "when", _words(question))
        for pattern in (_WHICH, _LIST):
            match = pattern.search(question)
            if not match or any(_NOT_MODIFIER.match(w) for w in match.group(1).split()):
                continue
            head, following = match.group(2), [w.strip("?.,;:") for w in question[match.end() :].split()]
            while following and _group(following[0]):  # a compound's last noun: "gene therapies"
                head = following.pop(0)
            named = following[0].lower() if following else ""
            if named and is_specialist(named):
                continue  # the noun names what follows it ("what is the drug chloroquine used for?"): not asked
            group = _group(head)
            if group == "treatment":
                return None
            if group:
                return cls(group, head.lower(), _words(question))
        return None

    @lru_cache(maxsize=4096)  # the rule asks of a sentence more than once (does it address? does it lead?)
    def named_in(self, sentence: str) -> bool:
        """Whether ``sentence`` names a thing of this kind that the question does not."""
        if self.group == "disorder":
            return any(self._new(m.group(0)) for m in _DISORDER.finditer(sentence))
        if self.group == "gene":
            return any(self._new_name(m.group(0)) for m in (*_SYMBOL.finditer(sentence), *_ENZYME.finditer(sentence)))
        if self.group == "drug":
            names = (*_INN_STEM.finditer(sentence), *_CODE_NAME.finditer(sentence))
            return any(self._new(m.group(0)) for m in names) or any(
                self._new_name(m.group(0)) for m in _SYMBOL.finditer(sentence)
            )
        if self.group == "company":
            return any(self._new(m.group(0)) for m in _COMPANY.finditer(sentence))
        if self.group == "date":
            return any(m.group(0) not in self.question_words for m in _YEAR.finditer(sentence))
        if self.group == "organism":
            # by a word general English rarely uses that the question does not ("Telomestatin specifically ..."
            # opens a sentence about telomestatin: no organism)
            return any(any(self._new_name(w) for w in _WORD.findall(m.group(0))) for m in _ORGANISM.finditer(sentence))
        return any(len(w) > 2 and self._new_name(w) for w in _WORD.findall(sentence))

    def _new(self, text: str) -> bool:
        return any(w.lower() not in self.question_words for w in _WORD.findall(text))

    def _new_name(self, word: str) -> bool:
        return word.lower() not in self.question_words and is_specialist(word.lower())


def names_drug(text: str, name_zipf: float = AnswerOptions().drug_name_zipf) -> bool:
    """Whether ``text`` is a drug's name by its form alone: one word on an INN stem or a code name ("tepotinib",
    "AMG334"), which general English never uses (below ``name_zipf``: "peptide" and "oncogene" end as stems do)."""
    word = text.strip()
    named = _INN_STEM.fullmatch(word) or _CODE_NAME.fullmatch(word)
    return bool(named) and is_specialist(word.lower(), name_zipf)


def is_disorder(word: str) -> bool:
    """Whether ``word`` is shaped as a condition's name (a combining form or a head noun: "fever", "nephritis")."""
    return bool(_DISORDER.fullmatch(word))


def _words(question: str) -> frozenset[str]:
    """The question's words and numbers, lower-cased: a name or a year it uses is not an answer."""
    return frozenset(w.lower() for w in _QUESTION_WORD.findall(question))


def _group(noun: str) -> Group | None:
    return next((group for group, pattern in _GROUP_OF if pattern.match(noun)), None)


__all__ = ["AskedType", "Group", "is_disorder", "names_drug"]
