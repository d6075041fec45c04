"""``cpqa ingest mesh DIR``: cancer term tables from the MeSH Neoplasms tree and the Disease Ontology.

Reads, from DIR, ``mesh_c04_neoplasms.csv`` (mesh_id, mesh_name, tree_number, level),
``DO_cancer_slim.json`` (OBO graph JSON: labels, synonyms, MeSH cross-references) and, when present,
``MESHinDO.tsv`` (DOID -> MeSH). Each MeSH heading becomes one term (reading-order name, ``X cancer`` /
``X tumor`` forms for ``X Neoplasms``, DO labels and exact synonyms); DO terms without a C04 heading become
terms of their own. The result goes to ``settings.terms_dir/terms.json`` for ``cpqa.rewrite.vocabulary``.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from pathlib import Path

import typer

from cpqa.config import get_settings
from cpqa.rewrite.vocabulary import Term, natural_mesh_name, phrase_key, save_terms, terms_path

MESH_CSV = "mesh_c04_neoplasms.csv"
DO_JSON = "DO_cancer_slim.json"
MESH_IN_DO = "MESHinDO.tsv"
_SYNONYM_PREDICATES = {"hasExactSynonym"}  # related / narrow synonyms would widen a concept
_DOID = re.compile(r"DOID[_:](\d+)")
_MESH = re.compile(r"MESH:([A-Z]\d+)")


def read_mesh_csv(path: Path) -> dict[str, str]:
    """MeSH UI -> heading name (a heading sits at several tree numbers; it is kept once)."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"mesh_id", "mesh_name"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path.name}: missing columns {sorted(missing)}")
        return {row["mesh_id"].strip(): row["mesh_name"].strip() for row in reader if row.get("mesh_id")}


def read_do_json(path: Path) -> list[tuple[str, str, list[str], set[str]]]:
    """(DOID, label, synonyms, MeSH UIs) for every non-deprecated DO class."""
    graph = json.loads(path.read_text(encoding="utf-8"))["graphs"][0]
    out = []
    for node in graph.get("nodes", []):
        meta = node.get("meta", {}) or {}
        label = node.get("lbl")
        match = _DOID.search(node.get("id", ""))
        if node.get("type") != "CLASS" or not label or not match or meta.get("deprecated"):
            continue
        synonyms = [s["val"] for s in meta.get("synonyms", []) if s.get("pred") in _SYNONYM_PREDICATES and s.get("val")]
        mesh = {m.group(1) for x in meta.get("xrefs", []) if (m := _MESH.search(x.get("val", "")))}
        out.append((f"DOID:{match.group(1)}", label, synonyms, mesh))
    return out


def read_mesh_in_do(path: Path) -> dict[str, set[str]]:
    """DOID -> MeSH UIs from the tab-separated DOID/label/xrefs table."""
    mapping: dict[str, set[str]] = defaultdict(set)
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            cols = [c.strip().strip('"') for c in line.rstrip("\n").split("\t")]
            if len(cols) < 3 or not (doid := _DOID.search(cols[0])):
                continue
            mapping[f"DOID:{doid.group(1)}"].update(_MESH.findall(cols[2]))
    return mapping


def _neoplasm_forms(name: str) -> list[str]:
    """``Breast Neoplasms`` -> ``breast cancer``, ``breast tumor``, ``breast neoplasm``; an inverted heading by its
    reading order (``Colorectal Neoplasms, Hereditary Nonpolyposis`` -> ``Hereditary Nonpolyposis Colorectal
    cancer``, the name a reader uses). Not the laboratory models' headings (``Neoplasms, Experimental``, ``Mammary
    Neoplasms, Animal``): a reader's "experimental cancer" is not one."""
    m = re.fullmatch(r"(.+?) Neoplasms", name)
    if not m or "," in name or re.match(r"(?:Experimental|Animal)\b", name):
        return []
    stem = m.group(1)
    return [f"{stem} cancer", f"{stem} tumor", f"{stem} neoplasm"]


def build_terms(directory: Path) -> list[Term]:
    """Term tables from the files in ``directory`` (see the module docstring)."""
    mesh_csv, do_json = directory / MESH_CSV, directory / DO_JSON
    for path in (mesh_csv, do_json):
        if not path.exists():
            raise FileNotFoundError(f"{path} not found (expected {MESH_CSV} and {DO_JSON} in {directory})")
    headings = read_mesh_csv(mesh_csv)
    extra = read_mesh_in_do(directory / MESH_IN_DO) if (directory / MESH_IN_DO).exists() else {}
    synonyms: dict[str, list[str]] = defaultdict(list)  # MeSH UI -> DO labels and synonyms
    terms: list[Term] = []
    for doid, label, syns, mesh_uis in read_do_json(do_json):
        uis = sorted(ui for ui in mesh_uis | extra.get(doid, set()) if ui in headings)
        if uis:
            for ui in uis:
                synonyms[ui] += [label, *syns]
        else:
            terms.append(Term(name=label, synonyms=syns, kind="disease"))
    for ui, heading in headings.items():
        natural = natural_mesh_name(heading)
        forms = [heading, *_neoplasm_forms(natural), *synonyms.get(ui, [])]
        terms.append(Term(name=natural, mesh=heading, synonyms=_distinct(forms, natural), kind="disease"))
    return terms


def _distinct(phrases: list[str], name: str) -> list[str]:
    seen = {phrase_key(name)}
    out = []
    for p in phrases:
        key = phrase_key(p)
        if key and key not in seen:
            seen.add(key)
            out.append(p)
    return out


def ingest_mesh_command(
    directory: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="folder with the MeSH C04 CSV and DO files"
    ),
) -> None:
    """Build the cancer term tables (MeSH Neoplasms + Disease Ontology synonyms) into the data home."""
    settings = get_settings()
    try:
        terms = build_terms(directory)
    except (OSError, ValueError, KeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    path = terms_path(settings)
    save_terms(terms, path)
    n_syn = sum(len(t.synonyms) for t in terms)
    typer.echo(
        f"wrote {len(terms)} terms ({sum(t.mesh is not None for t in terms)} with a MeSH heading, "
        f"{n_syn} synonyms) to {path}"
    )
