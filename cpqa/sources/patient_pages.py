"""NIH patient-information pages as ``PatientSection`` records: MedQuAD's reader, and how current pages map on.

MedQuAD (``../shared/data/medquad``, CC BY 4.0) holds nine collections of NIH patient pages as scraped around
2017-2019, one XML file per page: ``<Document id source url>`` with ``<Focus>`` (the condition) and ``<QAPairs>`` of
``<Question qid qtype>`` / ``<Answer>`` (one section of the page). Four NINDS files use another schema
(``<doc docid corpus>``, ``<doctitle-focus>``, ``<qaPairs>/<pair>``) and one CDC file ``<DiseaseFile fid>``; the
reader takes all three. Some cancer.gov pages are split into files per condition that share the parent's Document id
and qids (``0000013_2_1.xml`` ... hold ``0000013_2-1``...): a record's page and key use the file's name, so both stay
unique and the page is the unit ``cpqa.evaluation.data.splits`` splits on.

The same record holds the current pages a site would load instead (no reader here; the table is in
docs/architecture.md, "Patient information"), field <- source:
- MedlinePlus health-topic XML (``mplus_topics_*.xml``), a record per ``<h3>`` section of ``<full-summary>``:
  key <- "medlineplus-" + ``@id`` + "-" + section number; site <- "MedlinePlus (NLM)"; collection <- "medlineplus";
  page <- "medlineplus/" + ``@id``; url <- ``@url``; focus, title <- ``@title``; heading <- the ``<h3>`` text (else
  "What is {title}?"); kind <- from that heading ("What causes ..." -> causes), else information; text <- the
  section's HTML, ``<p>`` as lines and ``<li>`` as "- " lines; question <- empty. English topics (``@language``)
  only; ``<also-called>`` and ``<mesh-heading>`` name the topic too (no field yet: they would join the title in the
  BM25 text); ``<group>`` ("Cancers") picks the topics to load.
- NCI PDQ patient summaries (PDQ XML / JSON API), a record per summary section: key <- "pdq-" + the CDR id + "-" +
  section number; site <- "cancer.gov (NCI)"; collection <- "pdq-patient"; page <- "pdq/" + CDR id; url <- the
  summary's URL; title <- the summary title ("... Treatment (PDQ)"); focus <- its main topic (else the title less
  its suffix); heading <- the section title; kind <- from it, as for MedlinePlus; text <- the section's HTML
  (``Para``, ``ItemizedList``, ``KeyPoint``) the same way; question <- empty. Summaries for patients only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from lxml import etree

from cpqa.types import PatientSection

# collection folder -> (key slug, the publisher as a reader names it)
COLLECTIONS = {
    "1_CancerGov_QA": ("cancergov", "cancer.gov (NCI)"),
    "2_GARD_QA": ("gard", "GARD (NIH)"),
    "3_GHR_QA": ("ghr", "Genetics Home Reference (NLM)"),
    "4_MPlus_Health_Topics_QA": ("medlineplus", "MedlinePlus (NLM)"),
    "5_NIDDK_QA": ("niddk", "NIDDK (NIH)"),
    "6_NINDS_QA": ("ninds", "NINDS (NIH)"),
    "7_SeniorHealth_QA": ("seniorhealth", "NIHSeniorHealth (NIH)"),
    "8_NHLBI_QA_XML": ("nhlbi", "NHLBI (NIH)"),
    "9_CDC_QA": ("cdc", "CDC"),
}
# MedQuAD question type -> the heading a reader sees (every type in the nine collections)
HEADINGS = {
    "information": "What is {focus}?",
    "symptoms": "Signs and symptoms",
    "exams and tests": "Tests and diagnosis",
    "outlook": "Outlook (prognosis)",
    "susceptibility": "Risk factors",
    "stages": "Stages",
    "treatment": "Treatment",
    "research": "Clinical trials and research",
    "frequency": "How common is it?",
    "causes": "Causes",
    "genetic changes": "Genetic changes",
    "inheritance": "Inheritance",
    "prevention": "Prevention",
    "complications": "Complications",
    "considerations": "Things to know",  # NIDDK's "Eating, diet, and nutrition" and "Points to remember"
    "support groups": "Support groups",
}
_PDQ = re.compile(r"/(?P<slug>[a-z0-9-]+?)-(?P<kind>trea\w*|prevention|screening)-pdq/?$")
_BULLET = re.compile(r"(?:\A[ \t]*|\n[ \t]*|[ \t]{2,})-(?!-)[ \t]*(?=\S)")  # "- item" after a wide gap or line start
_BLOCK_GAP = re.compile(r"(?<=[.!?:])[ \t]{3,}(?=[A-Z0-9(\"'])")  # a wide gap after a sentence: a new line
# a wide gap inside a list item before a capital: the item ended and the next paragraph began (MedlinePlus writes
# "- Have a family history of the cancer       Symptoms include pain, ...")
_ITEM_END = re.compile(r"(?<=[^\s-])[ \t]{3,}(?=[A-Z0-9(])")
_TAB_LABEL = re.compile(r"\A\s*Summary\s*:\s*")  # MedlinePlus's page tab, scraped before each answer's text
_SPACES = re.compile(r"[ \t\u00a0]+")
_NOISE_LINES = {"-", "Espaol", "Español"}  # an empty bullet; NHLBI's scraped link to the Spanish page


def clean_text(raw: str) -> str:
    """MedQuAD's scraped whitespace made readable: list items as "- " lines, blocks as lines, spaces single, no run
    of empty lines, no "Summary :" tab label before the text. Lines break only at list items, after a sentence's end
    and where a list item's text ends, so sentences stay whole."""
    text = _BULLET.sub("\n- ", _TAB_LABEL.sub("", raw).replace("\r\n", "\n").replace("\r", "\n"))
    text = _BLOCK_GAP.sub("\n", text)
    lines: list[str] = []
    for line in (part for whole in text.split("\n") for part in _item_parts(whole)):
        line = _SPACES.sub(" ", line).strip()
        if line in _NOISE_LINES or (not line and (not lines or not lines[-1])):
            continue
        lines.append(line)
    return "\n".join(lines).strip()


def phenotype_lists(raw: str) -> str:
    """GARD's symptom sections as a reader can use them. GARD shows the Human Phenotype Ontology's signs as a table
    ("the table below includes how often the symptom is seen"), and MedQuAD flattened it to "Signs and Symptoms
    Approximate number of patients (when available) Abnormal facial shape 90% Hearing impairment 90% ... Ptosis - ...".
    The table becomes a line per frequency, its signs as published ("Signs and symptoms seen in about 90% of people
    with this condition (Human Phenotype Ontology): Abnormal facial shape; Conductive hearing impairment; ..."), the
    mode of inheritance it lists on a line of its own, and the sentence naming a table no longer there goes; GARD's
    other words stay as written. "This condition", as GARD writes: the page names it (a name on every line would weigh
    in the search as if the section were about nothing else). Text without the table is returned as it is."""
    match = _HPO_TABLE.search(raw)
    if not match:
        return raw
    groups: dict[str, list[str]] = {}
    inheritance = []
    for cell in _HPO_CELL.finditer(match["table"]):
        sign, often = " ".join(cell["sign"].split()), cell["often"]
        if sign.lower().endswith(" inheritance"):
            inheritance.append(sign)
        else:
            groups.setdefault(often, []).append(sign)
    lines = [f"{_seen(often)} (Human Phenotype Ontology): {'; '.join(signs)}." for often, signs in groups.items()]
    if inheritance:
        lines.append(f"Inheritance of this condition (Human Phenotype Ontology): {'; '.join(inheritance)}.")
    told = _TABLE_BELOW.sub("", raw[: match.start()]).strip()  # the sentences before the table, but the one naming it
    return "\n".join(part for part in (told, *lines, raw[match.end() :].strip()) if part)


def _seen(often: str) -> str:
    if often.endswith("%"):  # HPO's share of a frequency class ("very frequent": 90%)
        return f"Signs and symptoms seen in {'' if often == '100%' else 'about '}{often} of people with this condition"
    if often[0].isdigit():  # "47/47", "3 of 4"
        had, examined = re.split(r"/| of ", often)
        return f"Signs and symptoms seen in {had} of {examined} people with this condition in one study"
    return "Other signs and symptoms of this condition, how often not known"


_HPO_TABLE = re.compile(
    r"Signs and Symptoms Approximate number of patients \(when available\)(?P<table>.*?)(?=The Human "
    r"Phenotype Ontology \(HPO\) has collected information)",
    re.S,
)
_TABLE_BELOW = re.compile(
    r"\s*If the information is available, the table below includes how often the symptom is seen "
    r"in people with this condition\."
)
_HPO_CELL = re.compile(r"\s*(?P<sign>\S.*?)\s+(?P<often>\d+(?:\.\d+)?%|\d+/\d+|\d+ of \d+|-)(?=\s|$)", re.S)


def _item_parts(line: str) -> list[str]:
    """A list item's line, cut where its text ends and the next paragraph begins (``_ITEM_END``); any other line
    whole."""
    return _ITEM_END.split(line) if line.startswith("- ") else [line]


def page_title(url: str, focus: str, collection: str) -> str:
    """The page's title as a reader knows it: cancer.gov PDQ pages from the URL ("Breast Cancer Treatment (PDQ)"),
    others the focus, or (no focus) the URL's last words."""
    match = _PDQ.search(url) if collection == "1_CancerGov_QA" else None
    if match and focus:
        kind = match["kind"]
        kind = "Treatment" if kind.startswith("trea") else kind.capitalize()  # one URL spells it "treament"
        during = " During Pregnancy" if match["slug"].startswith("pregnancy-") else ""
        return f"{focus} {kind}{during} (PDQ)"
    if focus:
        return focus
    parts = [p for p in re.split(r"[/?#]", url.split("://", 1)[-1])[1:] if p and not p.startswith("index")]
    words = re.sub(r"\.\w+$", "", parts[-1]) if parts else url
    return re.sub(r"[_-]+", " ", words).strip().title()


def section_heading(kind: str, focus: str) -> str:
    return HEADINGS.get(kind, kind.capitalize() or "About").format(focus=focus)


def _local(element) -> str:
    return etree.QName(element).localname.lower() if isinstance(element.tag, str) else ""


def _child(element, *names: str):
    return next((c for c in element if _local(c) in names), None)


def _text(element) -> str:
    return "".join(element.itertext()) if element is not None else ""


def _parsed(path: Path):
    try:
        return etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    except (etree.XMLSyntaxError, OSError) as exc:
        raise ValueError(f"{path}: not readable MedQuAD XML ({exc})") from None


def read_medquad_file(path: Path) -> Iterator[PatientSection]:
    """The answered sections of one MedQuAD page file; ``ValueError`` naming the file when it is not one."""
    yield from _sections(_parsed(path), path)


def read_medquad_page(path: Path) -> tuple[list[PatientSection], PageCondition]:
    """One MedQuAD page file read once: its answered sections and what it is about (``cpqa ingest medquad``)."""
    root = _parsed(path)
    return list(_sections(root, path)), _condition(root, path)


def _focus(root) -> str:
    return _SPACES.sub(" ", _text(_child(root, "focus", "doctitle-focus"))).strip()


def _sections(root, path: Path) -> Iterator[PatientSection]:
    pairs = _child(root, "qapairs")
    if pairs is None:
        raise ValueError(f"{path}: not a MedQuAD page (no <QAPairs> under <{root.tag}>)")
    collection, stem = path.parent.name, path.stem
    slug, site = COLLECTIONS.get(collection) or (re.sub(r"^\d+_|_qa.*$|\W|_", "", collection.lower()), "")
    doc_id = root.get("id") or root.get("docid") or root.get("fid") or stem
    url = (root.get("url") or "").strip()
    focus = _focus(root)
    title = page_title(url, focus, collection)
    for pair in pairs:
        question, answer = _child(pair, "question"), _child(pair, "answer")
        if question is None or answer is None:
            continue
        text = clean_text(phenotype_lists(_text(answer)))
        if not text:
            continue
        qid, kind = question.get("qid") or "", (question.get("qtype") or "").strip().lower()
        if not qid.startswith(f"{doc_id}-"):
            raise ValueError(f"{path}: question id {qid!r} is not of page {doc_id!r}")
        yield PatientSection(
            key=f"{slug}-{stem}{qid[len(doc_id) :]}",
            site=site or root.get("source") or root.get("corpus") or slug,
            collection=collection,
            page=f"{collection}/{stem}",
            url=url,
            focus=focus,
            title=title,
            kind=kind,
            heading=section_heading(kind, focus or title),
            question=_SPACES.sub(" ", _text(question)).strip(),
            text=text,
        )


@dataclass(frozen=True)
class PageCondition:
    """What a MedQuAD page is about, as its ``<FocusAnnotations>`` say: the focus, its other names (``<Synonyms>``),
    UMLS's semantic group ("Disorders" for a condition; a page about household products has none) and types."""

    collection: str
    focus: str
    other_names: tuple[str, ...]
    semantic_group: str
    semantic_types: tuple[str, ...] = ()  # UMLS's: "T047" a disease or syndrome, "T184" a sign or symptom ...


def _condition(root, path: Path) -> PageCondition:
    annotations = _child(root, "focusannotations")
    umls = _child(annotations, "umls") if annotations is not None else None
    synonyms = _child(annotations, "synonyms") if annotations is not None else None
    names = (_SPACES.sub(" ", _text(s)).strip() for s in (synonyms if synonyms is not None else ()))
    group = _text(_child(umls, "semanticgroup")).strip() if umls is not None else ""
    types = _child(umls, "semantictypes") if umls is not None else None
    codes = tuple(t for t in (_text(c).strip() for c in (types if types is not None else ())) if t)
    return PageCondition(path.parent.name, _focus(root), tuple(n for n in names if n), group, codes)


def medquad_files(paths: Iterable[Path | str]) -> list[Path]:
    """The XML files of collection folders and files, in order; a folder without any is an error."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.glob("*.xml"))
            if not found:
                raise ValueError(f"{path}: no MedQuAD XML files in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files


def read_medquad(paths: Iterable[Path | str]) -> Iterator[PatientSection]:
    """Every answered section of MedQuAD collection folders or page files (an empty ``<Answer>`` is skipped)."""
    for path in medquad_files(paths):
        yield from read_medquad_file(path)
