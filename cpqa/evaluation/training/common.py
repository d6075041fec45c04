"""What both data builders share: the guard that keeps evaluated material out, the text table and the compact files.

The guard (``Guard``) holds what no training example may use:
- BioASQ questions of the ``cancer``, ``tuning`` and ``dev`` splits (``cpqa.evaluation.data.splits``), and a
  ``train`` question whose wording (normalised) is the same as one of theirs (BioASQ repeats questions across years);
- records that are gold for one of those questions, never an anchor, positive, negative or candidate, so a
  reported question's gold record is never seen in training;
- BioASQ 12B material: the records of ``bioasq_snippet_docs.xml.gz`` that no 7B-11B golden file names (the corpus
  rebuilt them from 12B snippets) and are not in the shared sample;
- the 109 cancer PubMedQA items (``pubmedqa/dev_cancer_questions.jsonl``) and, when a CMMQA file is given, every
  PubMedQA and BioASQ question CMMQA evaluates (``cpqa ingest cmmqa`` writes it).

A dataset folder holds ``texts.jsonl.gz`` (``{"id", "text"}``, each text once), the examples (``triples.jsonl.gz``
or ``pairs.jsonl.gz``, by id) and ``manifest.json`` (sources with their counts, exclusions, checks, file sizes).
"""

from __future__ import annotations

import gzip
import importlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections import Counter
from typing import Any, Iterable, Iterator

from cpqa.evaluation.data.shared import SHARED_DATA
from cpqa.evaluation.data.splits import BIOASQ_SPLITS, MEDQUAD_SPLITS, load_splits

HELD_OUT_SPLITS = ("cancer", "tuning", "dev")
_PMID = re.compile(r"<MedlineCitation[^>]*>\s*<PMID[^>]*>(\d+)</PMID>")


def normalised(text: str) -> str:
    """Lower-case words and numbers joined by one space: how two questions are compared."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _xml_pmids(path: Path) -> set[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return set(_PMID.findall(handle.read()))


def _golden_pmids(raw_dir: Path) -> set[str]:
    """Every record a 7B-11B golden file names, as a document or a snippet's source."""
    found: set[str] = set()
    for path in sorted(raw_dir.glob("*/*golden*.json")):
        for question in json.loads(path.read_text(encoding="utf-8")).get("questions", []):
            urls = [*question.get("documents", []), *(s.get("document", "") for s in question.get("snippets", []))]
            found.update(str(u).rstrip("/").rsplit("/", 1)[-1] for u in urls if u)
    return found


@dataclass
class Guard:
    """What training may not use (module docstring); ``check`` raises on a breach."""

    questions: dict[str, dict[str, Any]]  # every BioASQ dev question by id: {question, gold_pmids, type}
    train_ids: list[str]  # the train split, less wording repeats of held-out questions
    held_out_ids: frozenset[str]
    held_out_texts: frozenset[str]  # normalised wordings of every held-out question (BioASQ, PubMedQA, CMMQA)
    forbidden_records: frozenset[str]
    pubmedqa_excluded: frozenset[str]
    counts: dict[str, int] = field(default_factory=dict)

    def check_question(self, qid: str, text: str) -> None:
        if qid in self.held_out_ids or normalised(text) in self.held_out_texts:
            raise AssertionError(f"held-out question used for training: {qid} {text[:80]!r}")

    def check_record(self, pmid: str) -> None:
        if pmid in self.forbidden_records:
            raise AssertionError(f"held-out or BioASQ 12B record used for training: {pmid}")

    def allowed(self, pmids: Iterable[str]) -> list[str]:
        return [p for p in pmids if p not in self.forbidden_records]


def build_guard(shared: Path = SHARED_DATA, cmmqa: Path | None = None) -> Guard:
    """The guard from the written splits and the shared data; ``cmmqa``: a CMMQA JSONL whose questions are kept out."""
    questions = {q["id"]: q for q in read_jsonl(shared / "bioasq" / "dev_questions.jsonl")}
    splits = load_splits(BIOASQ_SPLITS)
    held_out: set[str] = set().union(*(splits[name] for name in HELD_OUT_SPLITS))
    pubmedqa_out = {str(q["id"]) for q in read_jsonl(shared / "pubmedqa" / "dev_cancer_questions.jsonl")}
    texts = {normalised(questions[q]["question"]) for q in held_out}
    pubmedqa = json.loads((shared / "pubmedqa" / "pqal_test500.json").read_text(encoding="utf-8"))
    cmmqa_items = read_jsonl(cmmqa) if cmmqa is not None else []
    for item in cmmqa_items:
        texts.add(normalised(item["question"]))
        if item.get("dataset") == "pubmedqa":
            pubmedqa_out.add(str(item["qid"]))
    texts.update(normalised(pubmedqa[q]["QUESTION"]) for q in pubmedqa_out if q in pubmedqa)
    held_gold = {p for q in held_out for p in questions[q]["gold_pmids"]}
    held_gold |= pubmedqa_out  # a PubMedQA item's id is its gold record's PMID
    held_gold.update(str(p) for item in cmmqa_items for p in item.get("pmids", []))
    held_out |= {str(item["qid"]) for item in cmmqa_items if item.get("dataset") == "bioasq"}
    snippet_docs = _xml_pmids(shared / "corpus" / "bioasq_snippet_docs.xml.gz")
    twelve_b = snippet_docs - _golden_pmids(shared / "mirage" / "rawdata" / "bioasq")
    twelve_b -= _xml_pmids(shared / "corpus" / "pubmed_sample.xml.gz")
    # sorted: the split is a set, whose order changes with the interpreter's hash seed, and the builders draw their
    # negatives question by question from one seeded generator
    train = sorted(
        q for q in splits["train"] if q not in held_out and normalised(questions[q]["question"]) not in texts
    )
    counts = {
        "bioasq_train_split": len(splits["train"]),
        "bioasq_train_dropped_as_held_out": len(splits["train"]) - len(train),
        "held_out_questions": len(held_out),
        "held_out_gold_records": len(held_gold),
        "bioasq_12b_only_records": len(twelve_b),
        "pubmedqa_excluded": len(pubmedqa_out),
        "cmmqa_questions": len(cmmqa_items),
    }
    return Guard(
        questions=questions,
        train_ids=train,
        held_out_ids=frozenset(held_out),
        held_out_texts=frozenset(texts),
        forbidden_records=frozenset(held_gold | twelve_b),
        pubmedqa_excluded=frozenset(pubmedqa_out),
        counts=counts,
    )


def default_cmmqa(home: Path) -> Path | None:
    """The CMMQA file ``cpqa ingest cmmqa`` wrote into ``home``, if any."""
    path = home / "cmmqa" / "cmmqa.jsonl"
    return path if path.is_file() else None


class TextTable:
    """Texts by id, each stored once; examples refer to them by id."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def add(self, key: str, text: str) -> str:
        self.texts.setdefault(key, text)
        return key

    def __contains__(self, key: str) -> bool:
        return key in self.texts


def _write_gz(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    count = 0
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as raw:
        for row in rows:
            raw.write((json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
            count += 1
    return count


def write_dataset(
    out: Path, kind: str, table: TextTable, examples_name: str, examples: list[dict[str, Any]], manifest: dict
) -> dict[str, Any]:
    """Write ``out/texts.jsonl.gz`` (the texts the examples use), the examples and ``manifest.json``."""
    used: set[str] = set()
    for row in examples:
        for key, value in row.items():
            if key != "s" and isinstance(value, str):
                used.add(value)
            elif isinstance(value, list):
                used.update(value)
    missing = sorted(used - set(table.texts))[:5]
    if missing:
        raise AssertionError(f"examples refer to texts never added: {missing}")
    out.mkdir(parents=True, exist_ok=True)
    texts = _write_gz(out / "texts.jsonl.gz", ({"id": k, "text": table.texts[k]} for k in sorted(used)))
    _write_gz(out / examples_name, examples)
    files = {name: (out / name).stat().st_size for name in ("texts.jsonl.gz", examples_name)}
    manifest = {
        "kind": kind,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "format": {"texts": "texts.jsonl.gz", "examples": examples_name},
        **manifest,
        "texts": texts,
        "examples": len(examples),
        "files": files,
        "total_bytes": sum(files.values()),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def medquad_sections(shared: Path = SHARED_DATA, split: str = "train") -> tuple[list[tuple[str, Any]] | None, str]:
    """(page key, section) for the MedQuAD sections of the ``split`` pages, read page by page (only those pages'
    files are opened) through the product's ``cpqa.sources.patient_pages.read_medquad``; (None, why) where that
    reader does not exist yet."""
    try:
        module = importlib.import_module("cpqa.sources.patient_pages")
    except ImportError as exc:
        return None, f"cpqa.sources.patient_pages not importable ({exc})"
    reader = getattr(module, "read_medquad", None)
    if reader is None:
        return None, "cpqa.sources.patient_pages has no read_medquad"
    pages = sorted(load_splits(MEDQUAD_SPLITS)[split])
    found: list[tuple[str, Any]] = []
    for page in pages:
        path = shared / "medquad" / f"{page}.xml"
        if path.is_file():
            for section in reader([path]):
                if section.page != page:
                    raise AssertionError(f"{path} read as page {section.page}, not {page}")
                if section.text.strip() and section.question.strip():
                    found.append((page, section))
    return found, f"{len(found)} sections with a question, of {len(pages)} {split} pages"


def section_text(section: Any, max_chars: int = 1500) -> str:
    """A section as a candidate: "heading: text", cut at a word before ``max_chars`` (the models read 256 tokens)."""
    text = " ".join(f"{section.heading}: {section.text}".split()) if section.heading else " ".join(section.text.split())
    return text if len(text) <= max_chars else text[:max_chars].rsplit(" ", 1)[0]


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def audit(examples: list[dict[str, Any]], guard: Guard, table: TextTable) -> dict[str, int]:
    """Every id the examples use, checked against the guard once more (a breach raises): BioASQ questions (``q:``)
    of the train split and not worded as a held-out one, PubMedQA questions (``pq:``) not excluded, records
    (``d:``, ``t:``, ``ab:``, sentences ``s:PMID:...``) neither held-out gold nor 12B."""
    train = set(guard.train_ids)
    seen: Counter[str] = Counter()
    for row in examples:
        for key, value in row.items():
            for ident in value if isinstance(value, list) else [value]:
                if key == "s" or not isinstance(ident, str):
                    continue
                kind, _, rest = ident.partition(":")
                seen[kind] += 1
                if kind == "q":
                    if rest not in train:
                        raise AssertionError(f"BioASQ question outside the train split: {rest}")
                    guard.check_question(rest, table.texts[ident])
                elif kind == "pq":
                    if rest in guard.pubmedqa_excluded:
                        raise AssertionError(f"excluded PubMedQA question used: {rest}")
                    guard.check_question(rest, table.texts[ident])
                elif kind in {"d", "t", "ab", "s"}:
                    guard.check_record(rest.split(":", 1)[0])
    return {"examples_checked": len(examples), **{f"ids_{kind}": n for kind, n in sorted(seen.items())}}
