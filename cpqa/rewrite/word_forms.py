"""Real word forms for search terms: the US spelling and singular a vocabulary is keyed on, and the plural a PubMed
query adds beside it. Not a stemmer on purpose: the Boolean ladder searches with these words, and a stem such as
"studi" finds nothing in PubMed (matching words uses the one stemmer, ``cpqa.words.stem``)."""

from __future__ import annotations

from cpqa.words import us_spelling

# Plurals that the suffix rules get wrong.
_IRREGULAR = {
    "metastases": "metastasis",
    "diagnoses": "diagnosis",
    "prognoses": "prognosis",
    "analyses": "analysis",
    "neoplasia": "neoplasia",
    "women": "woman",
    "men": "man",
    "children": "child",
    "data": "data",
    "criteria": "criterion",
    "nuclei": "nucleus",
    "carcinomata": "carcinoma",
    "womens": "woman",
    "mens": "man",
    "lymphomata": "lymphoma",
    "stomata": "stoma",
    "feet": "foot",
    "diabetes": "diabetes",
    "herpes": "herpes",
    "series": "series",
    "species": "species",
}
_NO_SINGULAR = ("ss", "us", "is", "ous", "ics", "sis", "xis", "as", "ys")


def normalize_word(word: str) -> str:
    """Lower case, US spelling and a simple singular: ``Tumours`` -> ``tumor``."""
    w = us_spelling(word).strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(_NO_SINGULAR):
        return w[:-1]
    return w


def plural_of(word: str) -> str:
    """A singular noun's plural (``metastasis`` -> ``metastases``, ``therapy`` -> ``therapies``)."""
    if word.endswith("sis"):
        return word[:-3] + "ses"
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"
