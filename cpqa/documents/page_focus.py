"""Whether a question names the condition a patient page is about (``names_focus``): the search puts the sections
of such pages first, and the answer quotes only from them. "How common is testicular cancer?" is answered by a
testicular cancer page, not by the frequency section of a page about another condition."""

from __future__ import annotations

import re
from functools import lru_cache

from cpqa.words import concept_names, content_terms

# Words every condition's name may hold: a page is about a question's condition by the other words of its name.
# Of them, a growth's names are one class: a page about a cancer answers only a question that names one, in any of
# its words ("womb cancer" is searched as "endometrial neoplasms").
_GROWTH = frozenset(
    content_terms("cancer cancers tumor tumors tumour neoplasm neoplasms carcinoma malignancy malignancies sarcoma")
)
_GENERIC = _GROWTH | frozenset(
    content_terms(
        "disease diseases syndrome disorder adult adults childhood children child treatment prevention screening "
        "type types primary malignant benign cell cells epithelial"
    )
)
_PAGE_KIND = frozenset(content_terms("treatment prevention screening adult adults childhood children child type types"))


# a name in brackets, less "including"
_BRACKETED = re.compile(r"\(([^()]*)\)")
_INCLUDING = re.compile(r"^\s*(?:including|such as|also called)\s+", re.IGNORECASE)
# a title listing growths that share one name ("Ovarian, Fallopian Tube, and Primary Peritoneal Cancer"): each is
# the page's condition
_LISTED = re.compile(r",\s*(?:(?:and|or)\s+)?")


@lru_cache(maxsize=8192)
def _stems(text: str) -> frozenset[str]:
    """``text``'s content stems, read once: a question is matched against up to 50 titles, a title by many questions."""
    return frozenset(content_terms(text))


_PDQ = re.compile(r"\(PDQ\)")


def condition_stems(title: str) -> frozenset[str]:
    """The stems of the condition a page's ``title`` names, less the page's kind: "Small Cell Lung Cancer Treatment
    (PDQ)" -> small cell lung cancer."""
    return _stems(_PDQ.sub(" ", title)) - _PAGE_KIND


def names_focus(title: str, asked: str) -> bool:
    """Whether ``asked`` (a question and the names of its concepts) names the condition of a page titled ``title``:
    every distinctive word of the title ("Endometrial Cancer Treatment (PDQ)": endometrial), of one of the growths
    it lists or of a name it gives in brackets, and, for a growth, a growth's name; a title of common words only
    ("I-Cell Disease") by all of its words but the page's kind; never where ``asked`` names another type of it
    (``_another_type``), a type by its number or numeral alike ("type II", "type 2")."""
    title = _PDQ.sub(" ", title)
    if _another_type(title, asked):
        return False
    title = _TYPE_NAMED.sub("type", title)  # "type II" or "type 2C": not words to name (``_another_type`` read them)
    named, words = _stems(title), _stems(asked)
    distinctive = _distinctive(title)
    if not distinctive:
        return bool(named - _PAGE_KIND) and named - _PAGE_KIND <= words
    if named & _GROWTH and not words & _GROWTH:
        return False
    # a name in brackets is another name ("Liver (Hepatocellular) Cancer", "Hematuria (Blood in the Urine)")
    outside = _BRACKETED.sub(" ", title)
    listed = _LISTED.split(outside) if named & _GROWTH and re.search(r",\s*(?:and|or)\s", outside) else [outside]
    names = [*listed, *(_INCLUDING.sub("", inside) for inside in _BRACKETED.findall(title))]
    return any(part and part <= words for part in map(_distinctive, names))


# a title ending in its type ("Short rib-polydactyly syndrome type 3", "Usher syndrome, type 2C", "Cone-rod dystrophy
# 2"): the word before it and the type (a number or a Roman numeral, a letter after it)
_TYPE = r"(\d{1,2}|[ivx]{1,4})([a-z]?)"
_TYPE_NAMED = re.compile(rf"\btype\s+{_TYPE}\b", re.IGNORECASE)
_TYPED_TITLE = re.compile(rf"([\w-]+),?\s+(?:type\s+)?{_TYPE}\s*$", re.IGNORECASE)
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}


def _another_type(title: str, asked: str) -> bool:
    """Whether ``asked`` names the title's condition with another type than the page's: "What are the symptoms of
    Short rib-polydactyly syndrome type 4?" is not about the type 3 page (a question naming no type is about any)."""
    typed = _TYPED_TITLE.search(_BRACKETED.sub(" ", title).strip())
    if typed is None:
        return False
    head, number, letter = typed.groups()
    pattern = rf"\b{re.escape(head)},?\s+(?:type\s+)?{_TYPE}\b"
    asked_types = {_type(n, lt) for n, lt in re.findall(pattern, asked, re.IGNORECASE)}
    return bool(asked_types) and _type(number, letter) not in asked_types


def _type(number: str, letter: str) -> str:
    """A type as one form: "II" and "2" alike, "2c" as "2C"."""
    return f"{_ROMAN.get(number.lower(), number)}{letter.lower()}"


def _distinctive(name: str) -> frozenset[str]:
    """The stems of ``name`` that are not generic; a word written in capitals is a name, however common its letters
    ("CHILD syndrome" is not any syndrome)."""
    return (_stems(name) - _GENERIC) | _stems(" ".join(re.findall(r"\b[A-Z]{2,}\b", name)))


def focus_tier(title: str, asked: str) -> int:
    """How closely a page titled ``title`` is about what ``asked`` names: 0 its condition; 1 a condition it names
    that is not a growth, when it asks about one ("kidney cancer": "Kidney Cancer" before "Kidney Disease", "liver
    cancer if you have hepatitis B": the liver cancer pages before those on hepatitis B); 2 another condition."""
    if not names_focus(title, asked):
        return 2
    return 1 if _stems(asked) & _GROWTH and not _stems(title) & _GROWTH else 0


def asked_with_names(question: str, concepts) -> str:
    """``question`` with every name of its conditions and treatments (their phrases, synonyms and MeSH heading): what
    a page's title is matched against, so "womb cancer" names the page "Endometrial Cancer". A symptom's clinical
    terms are not a condition the question names: "lump in my neck" may be read as "thyroid nodule", but "is that
    how lymphoma starts?" is not about thyroid cancer."""
    names = [name for c in concepts if c.kind in ("disease", "treatment") for name in concept_names(c)]
    return " ".join([question, *names])


__all__ = ["asked_with_names", "condition_stems", "focus_tier", "names_focus"]
