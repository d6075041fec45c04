"""Term tables for the rewrite module: concepts with a MeSH heading and synonyms.

Four sources: the tables ``cpqa ingest mesh`` writes to ``settings.terms_dir`` (MeSH Neoplasms tree plus Disease
Ontology synonyms), the conditions of the NIH patient pages ``cpqa ingest medquad`` reads (every disorder a page is
about, with its other names: ``ingestion.condition_terms``), the term links ``cpqa index build`` learns from the stored
records (MeSH headings by name, abbreviations; ``ingestion.term_links``; used with the rewrite option ``term_links``),
and a small built-in list of common cancers, treatments and question intents that is always present, so the
rule-based rewriter works without the tables (with fewer synonyms).

Text is matched on normalised words: lower case, US spelling, simple singular (``word_forms.normalize_word``).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Literal

from pydantic import BaseModel, Field

from cpqa.config import Settings
from cpqa.rewrite.spelling import Speller
from cpqa.rewrite.word_forms import normalize_word

TERMS_FILE = "terms.json"
LEARNED_FILE = "learned_terms.json"  # local Automatic Term Mapping links (ingestion.term_links)
CONDITIONS_FILE = "conditions.json"  # the conditions of NIH patient pages (ingestion.condition_terms)
PAGE_ABBREVIATIONS_FILE = "page_abbreviations.json"  # the abbreviations NIH patient pages define (ingestion.medquad)
Kind = Literal["disease", "treatment", "intent", "other"]

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def tokenize(text: str) -> list[str]:
    """Words of ``text`` in lower case (letters of any script and digits; hyphens and slashes split words)."""
    return _WORD.findall(text.lower())


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` as ``tokenize`` reads them, each with its character offsets."""
    return [(m.group(0).lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


def phrase_key(text: str) -> str:
    """The lookup key of a phrase: its normalised words joined by single spaces."""
    return " ".join(normalize_word(w) for w in tokenize(text))


def natural_mesh_name(name: str) -> str:
    """MeSH's inverted form in reading order: ``Carcinoma, Non-Small-Cell Lung`` ->
    ``Non-Small-Cell Lung Carcinoma``."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[1]:
        return f"{parts[1]} {parts[0]}"
    return name


class Term(BaseModel):
    """One concept: preferred name, MeSH heading (for ``[mh]``) and synonyms (for ``[tiab]``)."""

    name: str
    mesh: str | None = None
    synonyms: list[str] = Field(default_factory=list)
    kind: Kind = "other"

    def phrases(self) -> list[str]:
        """Name and synonyms, distinct by normalised key, name first."""
        seen: set[str] = set()
        out = []
        for p in [self.name, *self.synonyms]:
            key = phrase_key(p)
            if key and key not in seen:
                seen.add(key)
                out.append(p)
        return out


def _t(name: str, mesh: str | None, kind: Kind, *synonyms: str) -> Term:
    return Term(name=name, mesh=mesh, kind=kind, synonyms=list(synonyms))


# A deliberately small list: the commonest cancers, treatment families and question intents.
BUILTIN: tuple[Term, ...] = (
    _t("cancer", "Neoplasms", "disease", "neoplasm", "tumor", "malignancy"),
    _t("breast cancer", "Breast Neoplasms", "disease", "breast carcinoma", "breast tumor"),
    _t("lung cancer", "Lung Neoplasms", "disease", "lung carcinoma", "lung tumor"),
    _t("non-small cell lung cancer", "Carcinoma, Non-Small-Cell Lung", "disease", "NSCLC"),
    _t("small cell lung cancer", "Small Cell Lung Carcinoma", "disease", "SCLC"),
    _t("prostate cancer", "Prostatic Neoplasms", "disease", "prostate carcinoma", "prostatic cancer"),
    _t("colorectal cancer", "Colorectal Neoplasms", "disease", "colon cancer", "rectal cancer", "bowel cancer"),
    _t("pancreatic cancer", "Pancreatic Neoplasms", "disease", "pancreatic carcinoma", "pancreatic adenocarcinoma"),
    _t("ovarian cancer", "Ovarian Neoplasms", "disease", "ovarian carcinoma"),
    _t("cervical cancer", "Uterine Cervical Neoplasms", "disease", "cervical carcinoma"),
    _t("endometrial cancer", "Endometrial Neoplasms", "disease", "uterine cancer", "endometrial carcinoma"),
    _t("bladder cancer", "Urinary Bladder Neoplasms", "disease", "bladder carcinoma", "urothelial carcinoma"),
    _t("kidney cancer", "Kidney Neoplasms", "disease", "renal cell carcinoma", "renal cancer"),
    _t("liver cancer", "Liver Neoplasms", "disease", "liver carcinoma", "hepatic cancer"),
    _t("stomach cancer", "Stomach Neoplasms", "disease", "gastric cancer", "gastric carcinoma"),
    _t("esophageal cancer", "Esophageal Neoplasms", "disease", "esophageal carcinoma"),
    _t("thyroid cancer", "Thyroid Neoplasms", "disease", "thyroid carcinoma"),
    _t("head and neck cancer", "Head and Neck Neoplasms", "disease", "head and neck squamous cell carcinoma"),
    _t("brain tumor", "Brain Neoplasms", "disease", "brain cancer"),
    _t("melanoma", "Melanoma", "disease", "malignant melanoma"),
    _t("skin cancer", "Skin Neoplasms", "disease", "skin carcinoma"),
    _t("leukemia", "Leukemia", "disease", "leukaemia"),
    _t("lymphoma", "Lymphoma", "disease", "lymphomas"),
    _t("multiple myeloma", "Multiple Myeloma", "disease", "myeloma"),
    _t("sarcoma", "Sarcoma", "disease"),
    _t("metastasis", "Neoplasm Metastasis", "disease", "metastatic"),
    _t("chemotherapy", "Drug Therapy", "treatment", "chemo", "chemotherapeutic"),
    _t("radiotherapy", "Radiotherapy", "treatment", "radiation therapy", "irradiation"),
    _t("immunotherapy", "Immunotherapy", "treatment", "immunotherapies"),
    _t("surgery", "Surgical Procedures, Operative", "treatment", "resection", "surgical"),
    _t("hormone therapy", "Antineoplastic Agents, Hormonal", "treatment", "endocrine therapy"),
    _t("targeted therapy", "Molecular Targeted Therapy", "treatment"),
    _t("pembrolizumab", "pembrolizumab", "treatment", "keytruda"),
    _t("nivolumab", "Nivolumab", "treatment", "opdivo"),
    _t("tamoxifen", "Tamoxifen", "treatment"),
    _t("trastuzumab", "Trastuzumab", "treatment", "herceptin"),
    _t("palliative care", "Palliative Care", "treatment", "palliation"),
    _t("adverse effects", None, "intent", "side effects", "adverse events", "toxicity"),
    _t("survival", "Survival Rate", "intent", "prognosis", "mortality"),
    _t("prognosis", "Prognosis", "intent", "outcome", "survival"),
    _t("diagnosis", "Diagnosis", "intent", "detection"),
    _t("screening", "Early Detection of Cancer", "intent", "early detection"),
    _t("risk", "Risk Factors", "intent", "risk factor", "incidence"),
    _t("recurrence", "Neoplasm Recurrence, Local", "intent", "relapse"),
    _t("treatment", "Therapeutics", "intent", "therapy", "management"),
)


class Vocabulary:
    """Phrase lookup over term tables: longest match and spelling correction against known words."""

    max_words = 6

    def __init__(
        self, terms: Iterable[Term], source: str = "builtin", abbreviations: Iterable[tuple[str, list[str]]] = ()
    ):
        self.source = source
        self._index: dict[str, Term] = {}
        self._short_forms: set[str] = set()  # the abbreviations ``_abbreviate`` added
        merged = _merge_by_heading(terms)
        for term in merged:  # names first, so a phrase that names a term finds that term
            self._index.setdefault(phrase_key(term.name), term)
        for term in merged:
            for phrase in term.phrases():
                self._index.setdefault(phrase_key(phrase), term)
        self.words: frozenset[str] = frozenset(w for key in self._index for w in key.split())
        self._speller = Speller(self.words)  # its index is built on the first spelling correction
        for short, long_forms in abbreviations:  # after the speller's words: no typo is read as a short form
            self._abbreviate(short, long_forms)

    def __len__(self) -> int:
        return len(self._index)

    def _abbreviate(self, short: str, long_forms: list[str]) -> None:
        """``short`` joins the disease one of ``long_forms`` names, unless a known phrase already reads so."""
        key = phrase_key(short)
        term = next((t for t in map(self.lookup, long_forms) if t is not None), None)
        if term is not None and term.kind == "disease" and key not in self._index:
            term.synonyms.append(short)
            self._index[key] = term
            self._short_forms.add(key)

    def lookup(self, phrase: str) -> Term | None:
        return self._index.get(phrase_key(phrase))

    def longest_match(self, words: list[str], start: int) -> tuple[Term, int] | None:
        """The longest known phrase starting at ``words[start]`` (normalised words), and its length."""
        for n in range(min(self.max_words, len(words) - start), 0, -1):
            term = self._index.get(" ".join(words[start : start + n]))
            if term is not None:
                return term, n
        return None

    def is_short_form(self, phrase: str) -> bool:
        """Whether ``phrase`` is known only as a disease's abbreviation (``disease_abbreviations``)."""
        return phrase_key(phrase) in self._short_forms

    def correct(self, word: str) -> str:
        """``word``, or the one vocabulary word nearest to it within one edit (two from 12 letters on)."""
        return self._speller.correct(word)


def _merge_by_heading(terms: Iterable[Term]) -> list[Term]:
    """One term per MeSH heading: the first keeps its name and kind, later ones add their synonyms."""
    out: list[Term] = []
    by_mesh: dict[str, Term] = {}
    for term in terms:
        first = by_mesh.get(term.mesh) if term.mesh else None
        if first is None:
            term = term.model_copy(deep=True)
            out.append(term)
            if term.mesh:
                by_mesh[term.mesh] = term
        else:
            first.synonyms += [p for p in term.phrases() if p not in first.synonyms]
    return out


def terms_path(settings: Settings) -> Path:
    return settings.terms_dir / TERMS_FILE


def save_terms(terms: list[Term], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([t.model_dump() for t in terms], ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def learned_terms_path(settings: Settings) -> Path:
    return settings.terms_dir / LEARNED_FILE


def conditions_path(settings: Settings) -> Path:
    return settings.terms_dir / CONDITIONS_FILE


def page_abbreviations_path(settings: Settings) -> Path:
    return settings.terms_dir / PAGE_ABBREVIATIONS_FILE


def load_vocabulary(settings: Settings, term_links: bool = False, conditions: bool = True) -> Vocabulary:
    """Built-in terms, then the MeSH / Disease Ontology tables ``cpqa ingest mesh`` writes, then the conditions of the
    NIH patient pages ``cpqa ingest medquad`` reads (with ``conditions``), then the term links ``cpqa index build``
    learns from the stored records (with ``term_links``): earlier sources win a phrase. The abbreviations the patient
    pages and the records define join their diseases always, the pages' first (``disease_abbreviations``)."""
    candidates = [
        terms_path(settings),
        *([conditions_path(settings)] if conditions else []),
        *([learned_terms_path(settings)] if term_links else []),
    ]
    defined = [page_abbreviations_path(settings), learned_terms_path(settings)]
    return _load_cached(_stamped(candidates), _stamped(defined))


def _stamped(paths: list[Path]) -> tuple[tuple[str, int, int], ...]:
    """The files of ``paths`` that exist, each with its modification time and size (the cache's key)."""
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths if p.exists())


@lru_cache(maxsize=4)
def _load_cached(files: tuple[tuple[str, int, int], ...], defined: tuple[tuple[str, int, int], ...] = ()) -> Vocabulary:
    read = {path: _read_terms(Path(path)) for path, _, _ in files + defined}  # the term links once, if both
    # Built-ins first: their intent and treatment entries should win over same-named table rows.
    return Vocabulary(
        [*BUILTIN, *(term for path, _, _ in files for term in read[path])],
        source="+".join(["builtin", *(Path(path).name for path, _, _ in files + defined)]),
        abbreviations=[pair for path, _, _ in defined for pair in disease_abbreviations(read[path])],
    )


def _read_terms(path: Path) -> list[Term]:
    return [Term.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


# Written as an abbreviation: two capitals or more, no space ("AML", "NSCLC", "PCa", "X-ALD").
_ABBREVIATION = re.compile(r"^(?=(?:[^A-Z]*[A-Z]){2})[A-Za-z0-9-]{2,8}$")


def disease_abbreviations(learned: Iterable[Term], english_zipf: float = 3.5) -> list[tuple[str, list[str]]]:
    """The abbreviations among ``learned`` terms (the records' or the patient pages' definitions, found by NCBI's
    Ab3P: ``ingestion.term_links``, ``ingestion.medquad``), each with the long forms it stands for: a patient writes
    "AML at 72" as the records do, and the vocabulary then reads it as acute myeloid leukemia wherever the curated
    tables hold that disease (``Vocabulary``; a known phrase keeps its reading). Never one that is also an English
    word (``english_zipf``, wordfreq): "Mrs", "MEN" and "PBS" are not diseases."""
    from wordfreq import zipf_frequency

    found = []
    for term in learned:
        shorts = [s for s in term.synonyms if _ABBREVIATION.match(s)]
        headings = [term.mesh, natural_mesh_name(term.mesh)] if term.mesh else []
        longs = [term.name, *headings, *(s for s in term.synonyms if s not in shorts)]
        found += [(s, longs) for s in shorts if zipf_frequency(s.lower(), "en") < english_zipf]
    return found
