"""The splits every trained model and tuned value respects, written down (``bioasq_splits.json``,
``medquad_splits.json`` beside this module) so a result can say which questions it never saw.

BioASQ (the 2,310 7B-11B dev questions, ``../shared/data/bioasq/dev_questions.jsonl``; no 12B material of any kind):
- ``cancer``: the 179 cancer questions (``dev_cancer_questions.jsonl``), reported on, never trained or tuned on;
- ``tuning``: 400 of the others, seed 13 (the split HSRDR's fusion, the record prior and the addressing rule were
  tuned on since issue 15: ``fusion_sweep.split``), tuned on, never trained on;
- ``dev``: 500 of the rest, seed 36, reported on, never trained or tuned on;
- ``train``: the remaining questions, the only ones a model may learn from.

MedQuAD (NIH patient pages, ``../shared/data/medquad``), split by page so no section of an evaluated page is learned
from: per collection, pages in a seeded order (seed 35), ``eval`` 30 %, ``tuning`` 10 %, ``train`` 60 %.

``python -m cpqa.evaluation.data.splits`` writes both files again; the test checks they are what the seeds give.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Sequence

from cpqa.evaluation.data.shared import SHARED_DATA

HERE = Path(__file__).resolve().parent
BIOASQ_SPLITS = HERE / "bioasq_splits.json"
MEDQUAD_SPLITS = HERE / "medquad_splits.json"
TUNING_SEED, TUNING_SIZE = 13, 400
DEV_SEED, DEV_SIZE = 36, 500
MEDQUAD_SEED = 35
MEDQUAD_SHARES = (("eval", 0.3), ("tuning", 0.1), ("train", 0.6))


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def bioasq_splits(shared: Path = SHARED_DATA) -> dict[str, list[str]]:
    """The BioASQ question ids by split (see the module docstring), each list in the file's order."""
    every = _ids(shared / "bioasq" / "dev_questions.jsonl")
    cancer = set(_ids(shared / "bioasq" / "dev_cancer_questions.jsonl"))
    others = [q for q in every if q not in cancer]
    tuning = set(random.Random(TUNING_SEED).sample(others, TUNING_SIZE))  # as fusion_sweep.split draws it
    rest = [q for q in others if q not in tuning]
    dev = set(random.Random(DEV_SEED).sample(rest, DEV_SIZE))
    return {
        "cancer": [q for q in every if q in cancer],
        "tuning": [q for q in every if q in tuning],
        "dev": [q for q in every if q in dev],
        "train": [q for q in rest if q not in dev],
    }


def medquad_page_splits(pages: Sequence[str]) -> dict[str, list[str]]:
    """Page keys (``collection/document id``) by split: per collection, a seeded order cut by ``MEDQUAD_SHARES``."""
    by_collection: dict[str, list[str]] = {}
    for page in sorted(pages):
        by_collection.setdefault(page.split("/", 1)[0], []).append(page)
    splits: dict[str, list[str]] = {name: [] for name, _ in MEDQUAD_SHARES}
    for collection, keys in sorted(by_collection.items()):
        order = keys[:]
        random.Random(f"{MEDQUAD_SEED}:{collection}").shuffle(order)
        start = 0
        for i, (name, share) in enumerate(MEDQUAD_SHARES):
            end = len(order) if i == len(MEDQUAD_SHARES) - 1 else start + round(share * len(order))
            splits[name] += sorted(order[start:end])
            start = end
    return splits


def medquad_pages(shared: Path = SHARED_DATA) -> list[str]:
    """Every MedQuAD page key, ``collection/document id`` (``1_CancerGov_QA/0000001_1``), from the file names."""
    root = shared / "medquad"
    return sorted(f"{path.parent.name}/{path.stem}" for path in root.glob("*/*.xml"))


def load_splits(path: Path) -> dict[str, frozenset[str]]:
    """A written split file as sets of ids."""
    return {name: frozenset(ids) for name, ids in json.loads(path.read_text(encoding="utf-8")).items()}


def write_splits(shared: Path = SHARED_DATA) -> None:
    BIOASQ_SPLITS.write_text(json.dumps(bioasq_splits(shared), indent=0) + "\n", encoding="utf-8")
    MEDQUAD_SPLITS.write_text(json.dumps(medquad_page_splits(medquad_pages(shared)), indent=0) + "\n", "utf-8")


if __name__ == "__main__":
    write_splits()
    for path in (BIOASQ_SPLITS, MEDQUAD_SPLITS):
        print(path.name, {name: len(ids) for name, ids in load_splits(path).items()})
