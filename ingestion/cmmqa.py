"""``cpqa ingest cmmqa MIRAGE_JSON --mesh DIR``: CMMQA, MIRAGE filtered to cancer questions.

A question is kept when its stem or one of its options names a cancer term: a MeSH Neoplasms (C04) heading
or a Disease Ontology cancer-slim label or synonym (the term tables of ``ingestion.mesh.build_terms``).
Matching is on word boundaries, case-insensitive, with singular and plural forms of the last word; hyphens,
slashes and spaces between words are interchangeable. Acronyms ("CML", "NSCLC") match case-sensitively,
and an acronym that is an everyday word in capitals ("ALL" as in "ALL EXCEPT") is left out. All forms go
into one compiled regular expression built from a word trie, so the 7,663 questions filter in a second.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterable

import typer

from cpqa.config import Settings, get_settings
from cpqa.evaluation.data.cmmqa_data import DATASETS, CMMQACounts, MCQuestion, cmmqa_dir, cmmqa_path, counts_path
from cpqa.rewrite.vocabulary import Term, normalize_word
from ingestion.mesh import build_terms

_SEP = r"[\s\-/]+"
_WORDS = re.compile(r"[^\s\-/]+")
# Acronyms that exam questions write in capitals as ordinary words.
_CAPITALISED_WORDS = {"ALL"}


def is_acronym(phrase: str) -> bool:
    """Mostly capitals and short ("CML", "B-ALL", "PEComa"), so case carries the meaning."""
    letters = [c for c in phrase if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    return len(phrase) <= 16 and upper >= 2 and upper * 2 >= len(letters)


def word_forms(word: str) -> set[str]:
    """``word`` with its singular and the plural forms cancer terms take (tumors, carcinomata, nevi, metastases)."""
    w = word.lower()
    singular = normalize_word(w) if w.isalpha() else w
    forms = {w, singular}
    if singular.isalpha() and len(singular) > 2:
        forms.add(singular + ("es" if singular.endswith(("s", "x", "ch", "sh", "z")) else "s"))
        if singular.endswith("y") and singular[-2:-1] not in "aeiou":
            forms.add(singular[:-1] + "ies")
        if singular.endswith("oma"):
            forms.add(singular + "ta")
        if singular.endswith("us"):
            forms.add(singular[:-2] + "i")
        if singular.endswith("is"):
            forms.add(singular[:-2] + "es")
    return forms


class _Trie:
    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.end = False

    def add(self, words: list[str]) -> None:
        node = self
        for word in words:
            node = node.children.setdefault(word, _Trie())
        node.end = True

    def pattern(self) -> str:
        """Alternatives for the words below this node; longer words first so "tumors" beats "tumor"."""
        alts = []
        for word in sorted(self.children, key=lambda w: (-len(w), w)):
            child = self.children[word]
            rest = child.pattern() if child.children else ""
            if rest:
                alts.append(f"{re.escape(word)}(?:{_SEP}(?:{rest})){'?' if child.end else ''}")
            else:
                alts.append(re.escape(word))
        return "|".join(alts)


class CancerMatcher:
    """Finds the first cancer term in a text; ``.match(text) -> (canonical term, matched text) | None``."""

    def __init__(self, terms: Iterable[Term]):
        folded, exact = _Trie(), _Trie()
        self._by_key: dict[str, str] = {}
        self._by_acronym: dict[str, str] = {}
        self.forms = 0
        for term in terms:
            for phrase in term.phrases():
                if "," in phrase:  # MeSH's inverted order never occurs in running text
                    continue
                words = _WORDS.findall(phrase)
                if not words:
                    continue
                if is_acronym(phrase):
                    if phrase in _CAPITALISED_WORDS:
                        continue
                    exact.add(words)
                    self._by_acronym.setdefault(" ".join(words), term.name)
                    self.forms += 1
                    continue
                head = [w.lower() for w in words[:-1]]
                for last in word_forms(words[-1]):
                    folded.add(head + [last])
                    self._by_key.setdefault(" ".join(head + [last]), term.name)
                    self.forms += 1
        parts = []
        if exact.children:
            parts.append(f"(?P<acronym>(?-i:{exact.pattern()}))")
        if folded.children:
            parts.append(f"(?P<term>{folded.pattern()})")
        if not parts:
            raise ValueError("no cancer terms to match")
        self.regex = re.compile(rf"(?<![\w-])(?:{'|'.join(parts)})(?![\w-])", re.IGNORECASE)

    def match(self, text: str) -> tuple[str, str] | None:
        found = self.regex.search(text)
        if found is None:
            return None
        surface = found.group(0)
        if found.lastgroup == "acronym":
            canonical = self._by_acronym.get(" ".join(_WORDS.findall(surface)), surface)
        else:
            canonical = self._by_key.get(" ".join(_WORDS.findall(surface.lower())), surface)
        return canonical, surface


def question_text(item: dict) -> str:
    return "\n".join([item.get("question", ""), *[str(v) for v in (item.get("options") or {}).values()]])


def filter_benchmark(benchmark: dict, matcher: CancerMatcher) -> tuple[list[MCQuestion], CMMQACounts]:
    """The MIRAGE questions ``matcher`` keeps, in benchmark order, with per-dataset counts."""
    unknown = set(benchmark) - set(DATASETS)
    if unknown or not benchmark:
        raise ValueError(f"not a MIRAGE benchmark.json: datasets {sorted(benchmark)} (expected {sorted(DATASETS)})")
    kept: list[MCQuestion] = []
    total: Counter[str] = Counter()
    for dataset in DATASETS:
        for qid, item in benchmark.get(dataset, {}).items():
            total[dataset] += 1
            hit = matcher.match(question_text(item))
            if hit is None:
                continue
            kept.append(
                MCQuestion(
                    dataset=dataset,
                    qid=str(qid),
                    question=item["question"],
                    options={str(k): str(v) for k, v in item["options"].items()},
                    answer=str(item["answer"]),
                    matched_term=hit[0],
                    matched_text=hit[1],
                    pmids=[str(p) for p in item.get("PMID", [])],
                )
            )
    per_dataset = Counter(q.dataset for q in kept)
    counts = CMMQACounts(
        total={d: total[d] for d in DATASETS}, kept={d: per_dataset[d] for d in DATASETS}, terms=matcher.forms
    )
    return kept, counts


def build_cmmqa(benchmark_path: Path, mesh_dir: Path, settings: Settings) -> CMMQACounts:
    """Filter ``benchmark_path`` with the terms in ``mesh_dir`` and write CMMQA into the data home."""
    benchmark = json.loads(benchmark_path.read_text(encoding="utf-8"))
    if not isinstance(benchmark, dict):
        raise ValueError(f"{benchmark_path}: expected a JSON object of datasets")
    kept, counts = filter_benchmark(benchmark, CancerMatcher(build_terms(mesh_dir)))
    cmmqa_dir(settings).mkdir(parents=True, exist_ok=True)
    tmp = cmmqa_path(settings).with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for q in kept:
            out.write(q.model_dump_json() + "\n")
    tmp.replace(cmmqa_path(settings))
    counts_path(settings).write_text(counts.model_dump_json(indent=2), encoding="utf-8")
    return counts


def ingest_cmmqa_command(
    mirage_json: Path = typer.Argument(..., exists=True, dir_okay=False, help="MIRAGE benchmark.json"),
    mesh: Path = typer.Option(
        ..., "--mesh", exists=True, file_okay=False, help="folder with mesh_c04_neoplasms.csv and DO_cancer_slim.json"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
) -> None:
    """Build CMMQA (MIRAGE questions that name a MeSH Neoplasms / Disease Ontology cancer term)."""
    settings = get_settings()
    try:
        counts = build_cmmqa(mirage_json, mesh, settings)
    except (OSError, ValueError, KeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps({"path": str(cmmqa_path(settings)), **counts.model_dump()}, indent=2))
        return
    for d in DATASETS:
        typer.echo(f"{DATASETS[d]:<11} {counts.kept[d]:>5} of {counts.total[d]:>5}")
    typer.echo(
        f"{'total':<11} {sum(counts.kept.values()):>5} of {sum(counts.total.values()):>5} -> {cmmqa_path(settings)}"
    )
