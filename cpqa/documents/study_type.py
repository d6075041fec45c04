"""What kind of evidence a record is, from its PubMed publication types and MeSH headings.

NLM indexes the study design (publication types such as "Randomized Controlled Trial", check tags such as
"Humans" and "Animals", design headings such as "Cohort Studies"); a reader should see it beside a finding, and
a patient should meet human clinical evidence before mouse and cell-line findings. Records NLM marks as retracted
(or that are retraction notices) are not evidence at all. Human cell lines carry the "Humans" check tag, and
human xenografts in mice carry both "Humans" and "Animals", so laboratory work is told apart from studies of
people by the age-group headings (Adult, Aged, Child...), which NLM gives only to studies of people.
"""

from __future__ import annotations

import re
from cpqa.types import Article

# Every evidence type, with the badge a reader sees.
BADGES: dict[str, str] = {
    "retracted": "Retracted",
    "retraction notice": "Retraction notice",
    "meta-analysis": "Meta-analysis",
    "systematic review": "Systematic review",
    "guideline": "Guideline",
    "randomized controlled trial": "Randomised trial",
    "clinical trial": "Clinical trial",
    "observational study": "Observational study",
    "case report": "Case report",
    "review": "Review",
    "animal study": "Animal study",
    "in vitro study": "Lab study (cells)",
    "human study": "Study in people",
    "not indexed": "Study type not indexed",
}
# Evidence from animals or cells: a finding a patient should read as early science, not as what happens in people.
PRECLINICAL: frozenset[str] = frozenset({"animal study", "in vitro study"})
EXCLUDED: frozenset[str] = frozenset({"retracted", "retraction notice"})

# Publication types, most decisive first.
_BY_PUBLICATION_TYPE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("retraction notice", ("retraction of publication",)),
    ("retracted", ("retracted publication",)),
    ("meta-analysis", ("meta-analysis", "network meta-analysis")),
    ("systematic review", ("systematic review",)),
    ("guideline", ("practice guideline", "guideline", "consensus development conference")),
    ("randomized controlled trial", ("randomized controlled trial", "pragmatic clinical trial", "equivalence trial")),
    ("clinical trial", ("clinical trial", "controlled clinical trial", "clinical study")),
    ("observational study", ("observational study", "observational study, veterinary", "twin study")),
    ("case report", ("case reports",)),
    ("review", ("review", "scoping review")),
)
_OBSERVATIONAL_MESH = frozenset(
    {
        "cohort studies",
        "retrospective studies",
        "prospective studies",
        "case-control studies",
        "cross-sectional studies",
        "follow-up studies",
        "longitudinal studies",
        "registries",
        "seer program",
        "survival analysis",
        "proportional hazards models",
        "surveys and questionnaires",
    }
)
_AGE_GROUPS = frozenset(
    {
        "adult",
        "young adult",
        "middle aged",
        "aged",
        "aged, 80 and over",
        "adolescent",
        "child",
        "child, preschool",
        "infant",
        "infant, newborn",
    }
)
_CELL_MESH = frozenset(
    {
        "cell line",
        "cell line, tumor",
        "cells, cultured",
        "in vitro techniques",
        "tumor cells, cultured",
        "hela cells",
        "mcf-7 cells",
        "hep g2 cells",
        "a549 cells",
        "hct116 cells",
        "ht29 cells",
        "caco-2 cells",
        "pc-3 cells",
        "jurkat cells",
        "k562 cells",
        "organoids",
    }
)


def evidence_type(article: Article) -> str:
    """The record's evidence type (a key of ``BADGES``)."""
    if article.retracted_by:
        return "retracted"
    types = {t.lower() for t in article.publication_types}
    types |= {"clinical trial" for t in types if t.startswith("clinical trial, phase")}
    for kind, names in _BY_PUBLICATION_TYPE:
        if types & set(names):
            design = _title_design(article.title) if kind == "review" else None
            if design in ("meta-analysis", "systematic review"):
                return design  # publishers label a systematic review plain "Review"
            return kind
    mesh = {h.descriptor.lower() for h in article.mesh}
    if mesh & _OBSERVATIONAL_MESH and (mesh & _AGE_GROUPS or "humans" in mesh):
        return "observational study"
    if not mesh & _AGE_GROUPS:
        if "animals" in mesh:
            return "animal study"
        if mesh & _CELL_MESH:
            return "in vitro study"
    if "humans" in mesh:
        return "human study"
    return _from_text(article) if not mesh else "not indexed"


# Records NLM has not indexed yet (no MeSH; a third of the sample): the design as the title names it, or the
# study's subjects as the abstract counts them.
_TITLE_DESIGNS: tuple[tuple[str, re.Pattern], ...] = (
    ("meta-analysis", re.compile(r"(?i)\bmeta-?analys[ie]s\b")),
    ("systematic review", re.compile(r"(?i)\bsystematic\s+(?:literature\s+)?review\b")),
    ("guideline", re.compile(r"(?i)\b(?:guidelines?|consensus statement|recommendations? (?:of|from) the)\b")),
    ("randomized controlled trial", re.compile(r"(?i)\brandomi[sz]ed\b.*\btrial\b|\btrial\b.*\brandomi[sz]ed\b")),
    (
        "clinical trial",
        re.compile(r"(?i)\bphase (?:I{1,3}V?|[1-4])(?:/I{1,3}|/[1-4])?\b.*\btrial\b|\bclinical trial\b"),
    ),
    ("case report", re.compile(r"(?i)\bcase report\b|\ba case of\b|\breport of (?:a|two|three) cases?\b")),
    ("review", re.compile(r"(?i)\b(?:a |an )?(?:narrative |literature )?review\b\s*$|^review\b|\bliterature review\b")),
)
_ANIMALS = re.compile(
    r"(?i)\b(?:mice|mouse|murine|rats?|xenografts?|rabbits?|dogs|canine|zebrafish|porcine|pigs|"
    r"hamsters?|primates|monkeys|sheep|bovine|animal models?)\b"
)
_CELLS = re.compile(
    r"(?i)\b(?:cell lines?|in vitro|cultured (?:cells|\w+ cells)|cells were (?:treated|transfected|"
    r"incubated|cultured))\b"
)
_PEOPLE = re.compile(
    r"(?i)\b(?:patients?|women|men|participants?|children|adults?|volunteers?|subjects|cases|cohort|"
    r"survivors?|individuals|respondents|persons|people)\b"
)


def _title_design(title: str) -> str | None:
    return next((kind for kind, pattern in _TITLE_DESIGNS if pattern.search(title)), None)


def _from_text(article: Article) -> str:
    design = _title_design(article.title)
    if design:
        return design
    text = f"{article.title} {article.abstract}"
    animals, cells, people = (len(p.findall(text)) for p in (_ANIMALS, _CELLS, _PEOPLE))
    if animals >= 2 and animals > people:
        return "animal study"
    if cells >= 2 and cells > people and not animals:
        return "in vitro study"
    return "not indexed"


def badge(kind: str | None) -> str:
    """The reader's label for an evidence type ("" when unknown)."""
    return BADGES.get(kind or "", "")
