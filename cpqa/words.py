"""Words, one of each: the stopword list, the stemmer (Snowball, PyStemmer), and one tokenisation per purpose.

- ``STOPWORDS``: English function words; they carry no concept of a question (rewrite), no name (safety) and no
  evidence (``content_terms``, with ``QUESTION_WORDS``, the asking words of a question).
- ``stem``: the one stemmer, for matching words (lexical overlap, BM25). The rewrite builds search terms with real
  word forms instead (``cpqa.rewrite.word_forms``): a stem such as "studi" finds nothing in PubMed.
- ``content_terms``: the stemmed content words of a text in US spelling (``us_spelling``), for lexical overlap (the
  extractive answer, the support check, the answers evaluation): "tumour" and "tumor", "lymphoedema" and
  "lymphedema" are one word.
- ``strip_labels``: a sentence or record without the structured-abstract labels it opens with ("BACKGROUND:",
  NLM's run-in "UNLABELLED ABSTRACT").
- ``is_specialist``: a word general English rarely uses (a drug, gene or test name), by word frequency (wordfreq).
- ``document_bm25_tokens`` / ``passage_bm25_tokens``: bm25s tokenisations of the document index (stemmed; saved, so
  it must not change under a built index) and of a question's candidate passages (unstemmed, as the passage
  reranker was tuned).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from cpqa.options import AnswerOptions

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can cannot could did didn't do does doesn't doing don't down during each either else ever
every few for from further had has have having he her here hers herself him himself his how however i if in
into is isn't it it's its itself just least less let like may me might more most much must my myself neither
no nor not now of off on once only or other ought our ours ourselves out over own per rather really same shall
she should so some such than that the their theirs them themselves then there these they this those through
thus to too under until up upon us very via was we were what whatever when where whether which while who whom
whose why will with within without would yes yet you your yours yourself yourselves
""".split()
)
QUESTION_WORDS = frozenset("get got know many need one please tell thing things want".split())
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_NOT_EVIDENCE = STOPWORDS | QUESTION_WORDS


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


# British -> US spellings of medical words, applied inside words ("leukaemia", "haemorrhage", "lymphoedema",
# "diarrhoea", "paediatric", "oesophageal", "coeliac", "anaesthetic"): a patient in the UK writes them, the evidence
# (PubMed, NIH pages) mostly does not.
UK_SPELLINGS = (
    ("tumour", "tumor"),
    ("oesophag", "esophag"),
    ("oestr", "estr"),
    ("haem", "hem"),
    ("aemi", "emi"),
    ("rrhoea", "rrhea"),
    ("oedema", "edema"),
    ("paed", "ped"),
    ("foet", "fet"),
    ("coeliac", "celiac"),
    ("anaesth", "anesth"),
    ("gynaec", "gynec"),
    ("pnoea", "pnea"),
    ("isation", "ization"),
)
_UK = re.compile("|".join(uk for uk, _ in UK_SPELLINGS))
_US = dict(UK_SPELLINGS)


def us_spelling(text: str) -> str:
    """``text`` in lower case, its British spellings of medical words in US form ("Leukaemia" -> "leukemia")."""
    return _UK.sub(lambda found: _US[found.group()], text.lower())


# English plurals no suffix rule reaches: "women" and "woman" are one word to a reader, not to Snowball.
_IRREGULAR_PLURALS = {"women": "woman", "men": "man", "children": "child", "feet": "foot", "teeth": "tooth"}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of a lower-case word, an irregular plural read as its singular."""
    return _stemmer().stemWord(_IRREGULAR_PLURALS.get(word, word))


def content_terms(text: str) -> list[str]:
    """The content words of ``text``, lower-cased, in US spelling and stemmed, in order."""
    return [stem(w) for w in _WORD.findall(us_spelling(text)) if w not in _NOT_EVIDENCE and len(w) > 1]


def document_bm25_tokens(texts: list[str]) -> Any:
    """bm25s tokens of records (title + abstract) and of questions against them: English stopwords, stemmed."""
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False)


def passage_bm25_tokens(texts: list[str]) -> list[list[str]]:
    """bm25s tokens of a question's candidate passages and of the question: English stopwords, not stemmed."""
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", show_progress=False, return_ids=False)


# A structured-abstract label: "RESULTS: ", "Conclusions: ", or NLM's capitalised headings run into the text
# without a colon ("BACKGROUND Tamoxifen is ...", "UNLABELLED ABSTRACT ...").
SECTION_LABEL = re.compile(
    r"^(?:[A-Z][A-Za-z /&-]{2,40}:\s+|(?:UNLABELLED|ABSTRACT|BACKGROUNDS?|INTRODUCTION|CONTEXT|"
    r"IMPORTANCE|OBJECTIVES?|AIMS?|PURPOSES?|GOALS?|RATIONALE|DESIGN|SETTINGS?|PATIENTS|PARTICIPANTS|"
    r"SUBJECTS|INTERVENTIONS?|MEASUREMENTS|METHODS?|MATERIALS?|AND|RESULTS?|FINDINGS|INTERPRETATION|"
    r"CONCLUSIONS?|SUMMARY|MAIN|OUTCOMES?|MEASURES?|SIGNIFICANCE|RELEVANCE)\s+(?=[A-Z]))"
)


def strip_labels(sentence: str) -> str:
    """The sentence without the structured-abstract labels it opens with ("UNLABELLED ABSTRACT: BACKGROUND: ...")."""
    previous = None
    while previous != sentence:
        previous, sentence = sentence, SECTION_LABEL.sub("", sentence, count=1)
    return sentence.strip()


_MEASUREMENT = re.compile(r"(?i)^\d+(?:[.,]\d+)?\s?(?:°?[cf]|mg|mcg|kg|g|ml|l|mm|cm|%|x|h|hrs?|mins?)?$")
_LAY_SUFFIXES = ("ier", "iest", "ily", "y", "ish", "ness", "ly", "ed", "ing", "able", "ible")


def names_rare_word(text: str) -> bool:
    """Whether ``text`` holds a word of three letters or more that general English rarely uses (``is_specialist``):
    a concept that names something (a drug, a gene, a test), not small talk or a question's common words."""
    return any(len(w) > 2 and is_specialist(w) for w in _WORD.findall(text.lower()))


def concept_names(concept) -> list[str]:
    """Every name of a concept (the rewrite's ``Concept``, or anything with its fields): its words as asked, its
    phrases, synonyms and MeSH heading."""
    names = (concept.text, *concept.phrases, *concept.synonyms, *([concept.mesh] if concept.mesh else []))
    return [name for name in names if name.strip()]


def name_forms(stems: frozenset[str]) -> tuple[frozenset[str], ...]:
    """The ways a sentence may say a name (its stems): as asked, with a person said the other way (``_person_forms``:
    "men" by "male") and with an "-able" adjective said by its verb (``_able_forms``: "curable" by "cured")."""
    return tuple(form for person in _person_forms(stems) for form in _able_forms(person))


def _able_forms(stems: frozenset[str]) -> tuple[frozenset[str], ...]:
    """A name's stems, and, where one is an "-able" adjective, the name by its verb as well: "treatable" is named by a
    sentence saying "treated", "curable" by one saying "cured" (Snowball stems "curable" curabl, "cured" cure)."""
    forms = [stems]
    for stem in stems:
        if stem.endswith("abl") and len(stem) > 5:
            forms += [(stems - {stem}) | {verb} for verb in (stem[:-3], stem[:-3] + "e")]
    return tuple(forms)


# Who a question is about, said as a person or as an adjective: "can men get breast cancer?" is answered by "Male
# breast cancer represents less than 1 percent ...", a question about children by a childhood or paediatric figure.
_PEOPLE: dict[str, tuple[str, ...]] = {
    "man": ("male",),
    "male": ("man",),
    "woman": ("femal",),
    "femal": ("woman",),
    "child": ("childhood", "pediatr", "paediatr"),
    "kid": ("child", "childhood", "pediatr", "paediatr"),
}


def _person_forms(stems: frozenset[str]) -> tuple[frozenset[str], ...]:
    """A name's stems, and the name with a person said the other way (``_PEOPLE``: "men" by "male")."""
    forms = [stems]
    for stem in stems & _PEOPLE.keys():
        forms += [(stems - {stem}) | {other} for other in _PEOPLE[stem]]
    return tuple(forms)


def _is_code(word: str, rare_zipf: float) -> bool:
    """A hyphenated code of letters and digits ("EE-4A", "IL-6", "PD-L1", "5-FU"), none of its parts an English word:
    wordfreq reads such a code as its parts, each common ("il-6" at Zipf 4.3), so by frequency alone it was ordinary.
    "type-2" and "10-year" are not codes."""
    from wordfreq import zipf_frequency

    if "-" not in word or not any(c.isdigit() for c in word) or not any(c.isalpha() for c in word):
        return False
    return not any(len(p) >= 3 and p.isalpha() and zipf_frequency(p, "en") >= rare_zipf for p in word.split("-"))


@lru_cache(maxsize=65536)
def is_specialist(word: str, rare_zipf: float = AnswerOptions().rare_word_zipf) -> bool:
    """A word general English rarely uses (a drug, gene, test or procedure name, not "never" or "hair"). Neither a
    measurement ("39c") nor a rare form of a common word ("shivery", "achy": a lay word for a sign) names one."""
    from wordfreq import zipf_frequency

    if _MEASUREMENT.match(word):
        return False
    if _is_code(word, rare_zipf):
        return True
    if zipf_frequency(word, "en") >= rare_zipf:
        return False
    for suffix in _LAY_SUFFIXES:
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3:
            if any(zipf_frequency(b, "en") >= rare_zipf for b in (base, base + "e", base[:-1])):
                return False
    return True
