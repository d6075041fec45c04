"""The conditions NIH patient pages are about, as terms of the rewrite's vocabulary (``cpqa ingest medquad``).

The MeSH table here covers only the Neoplasms tree, so a question about any other condition ("pseudotumor
cerebri", "Sanfilippo syndrome") is read word by word: neither word a disease, each one a sentence must repeat. Each
MedQuAD page names its condition (``<Focus>``), and where UMLS places it in the Disorders semantic group (McCray et
al., 2001) the page gives its other names too (``<Synonyms>``, from UMLS and the sites). A page of that group gives a
disease term, unless the vocabulary already knows the condition: the focus as its name (a bracketed short form
dropped), and where the site curates them (``CURATED_OTHER_NAMES``) its other names as synonyms, except

- a short form ("ABL", "AMS"): one word in capitals or with digits names a gene or another condition as often;
- a name of more than ``MAX_WORDS`` words or with more than one comma: a description, which no question repeats;
- a class of conditions in general words ("Viral Infections"): "which viral infection ..." asks for a condition,
  it does not name one; and a page about a sign, symptom or finding only ("Back Pain", UMLS's T184 and T033): a
  question naming one describes what the asker feels;

and an inverted name is read in reading order ("Aneurysm, abdominal aortic" -> "abdominal aortic aneurysm"; "Stickler
syndrome, type 2" keeps its order). Pages about one condition are one term. The table is saved beside the MeSH table
(``cpqa.rewrite.vocabulary.conditions_path``) and read after it, so MeSH's names and headings win a phrase.

A question naming a condition by a page's name now reads it as one disease (named by an abstract's record, as a
cancer is), and its other names join the search and the addressing rule's names for it.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from cpqa.rewrite.vocabulary import Term, natural_mesh_name, phrase_key
from cpqa.sources.patient_pages import PageCondition
from cpqa.words import is_specialist

MAX_WORDS = 6  # the longest phrase the vocabulary matches (``Vocabulary.max_words``)
_BRACKETED = re.compile(r"\s*\([^)]*\)\s*")
_SHORT_FORM = re.compile(r"^(?=\S*(?:[A-Z]\S*[A-Z]|\d))\S+$")  # one word, two capitals or a digit: "ABL", "DM1"
# Genetics Home Reference and MedlinePlus list the names a condition goes by; GARD's synonyms, gathered from UMLS and
# Orphanet, name related conditions too ("Neuroacanthocytosis" for pantothenate kinase-associated neurodegeneration).
CURATED_OTHER_NAMES = frozenset({"3_GHR_QA", "4_MPlus_Health_Topics_QA"})
SIGNS = frozenset({"T184", "T033"})  # UMLS's semantic types Sign or Symptom, and Finding
_CLASS_HEAD = re.compile(
    r"(?i)diseases|disorders|infections|conditions|problems|injuries|defects|abnormalities|anomalies|tumou?rs|cancers|"
    r"syndromes|deficiencies|illnesses"
)
_QUALIFIER = re.compile(r"^(?:type|group|class|form|variant|\d)", re.IGNORECASE)  # "X, type 2" is read as written


def reading_order(name: str) -> str:
    """An inverted name in reading order; a name qualified after its comma ("..., type 2") as written."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[1] and not _QUALIFIER.match(parts[1]):
        return natural_mesh_name(name)
    return name


def usable_name(name: str) -> str | None:
    """``name`` as a vocabulary phrase, or None where it is a short form, a description or a class (see the module)."""
    name = _BRACKETED.sub(" ", name).strip()
    if not name or _SHORT_FORM.match(name) or name.count(",") > 1 or len(name.split()) > MAX_WORDS:
        return None
    return None if names_a_class(name) else reading_order(name)


def names_a_class(name: str) -> bool:
    """A class of conditions in general words ("Viral Infections", "Bone Diseases", "Eating Disorders": MedlinePlus's
    topics): a plural head, and no word general English rarely uses ("Campylobacter Infections" names one)."""
    words = re.findall(r"[A-Za-z]+", name)
    return bool(words) and bool(_CLASS_HEAD.fullmatch(words[-1])) and not any(is_specialist(w.lower()) for w in words)


def is_condition(page: PageCondition) -> bool:
    """A page about a condition: of UMLS's Disorders group, and not only a sign, symptom or finding ("Back Pain",
    "Fatigue": "myeloma symptoms back pain and always tired" asks about myeloma)."""
    signs_only = bool(page.semantic_types) and set(page.semantic_types) <= SIGNS
    return page.semantic_group == "Disorders" and not signs_only


def condition_terms(
    pages: Iterable[PageCondition],
    known: Callable[[str], bool] = lambda name: False,
    other_names_from: frozenset[str] = CURATED_OTHER_NAMES,
) -> list[Term]:
    """One disease term per condition of the Disorders group that the vocabulary does not know yet (``known``: MeSH's
    names win), with the other names its pages in ``other_names_from`` give. An other name that is another page's
    condition stays that page's term too (a phrase finds the term it names first: ``Vocabulary``), so two sites'
    names for one condition are not chained into one term."""
    terms: dict[str, Term] = {}
    for page in pages:
        name = usable_name(page.focus) if is_condition(page) else None
        if name is None or known(name):
            continue
        term = terms.setdefault(phrase_key(name), Term(name=name, kind="disease"))
        if page.collection not in other_names_from:
            continue
        phrases = {phrase_key(p) for p in term.phrases()}
        for other in filter(None, map(usable_name, page.other_names)):
            if phrase_key(other) not in phrases:
                phrases.add(phrase_key(other))
                term.synonyms.append(other)
    return list(terms.values())


__all__ = [
    "CURATED_OTHER_NAMES",
    "MAX_WORDS",
    "SIGNS",
    "condition_terms",
    "is_condition",
    "names_a_class",
    "reading_order",
    "usable_name",
]
