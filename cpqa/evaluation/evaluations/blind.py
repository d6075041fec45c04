"""Blind judgement of first sentences against BioASQ's exact answers: the ruler beside a judge.

The ruler (``answers.names_exact_answer``) finds an exact answer written as BioASQ writes it, or by an abbreviation
the record defines; it never credits a sentence that does not name one, but it misses equivalent forms ("IL-36
receptor" for interleukin-36, "C. difficile", "aortic wall" for the aorta). ``cpqa eval answers --blind DIR``
writes each scored system's first sentences of the factoid and list questions, shuffled together with the system
hidden (``items.jsonl``: question, gold answers, sentence) and the key apart (``key.json``). A judge who sees only
the items writes ``labels.jsonl`` (``{"n": ..., "names": true|false}`` per item); ``cpqa eval blind DIR`` then gives
each system's judged share beside the ruler's, and how far the ruler agrees with the judge.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Mapping, Sequence

ITEMS, KEY, LABELS = "items.jsonl", "key.json", "labels.jsonl"


def write_items(folder: Path, systems: Mapping[str, Sequence[dict]], seed: int = 0) -> int:
    """Write the blind items of every system's answered exact-answer rows (``score_question`` rows with ``first``,
    ``question`` and ``exact``) and their key; returns how many items."""
    pooled = [
        (name, row)
        for name, rows in systems.items()
        for row in rows
        if row.get("exact_question") and not row["abstained"] and row.get("first")
    ]
    random.Random(seed).shuffle(pooled)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ITEMS).open("w", encoding="utf-8") as out:
        for n, (_, row) in enumerate(pooled):
            item = {"n": n, "question": row["question"], "gold_answers": row["exact"], "sentence": row["first"]}
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    key = [
        {"n": n, "system": name, "id": row["id"], "ruler": row["first_names_exact"]}
        for n, (name, row) in enumerate(pooled)
    ]
    (folder / KEY).write_text(json.dumps(key, indent=1), encoding="utf-8")
    return len(pooled)


def read_labels(path: Path) -> dict[int, bool]:
    """The judge's labels by item number; a line that is not ``{"n": int, "names": bool}`` is an error."""
    labels: dict[int, bool] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        if not isinstance(item.get("n"), int) or not isinstance(item.get("names"), bool):
            raise ValueError(f'{path}:{number}: expected {{"n": int, "names": bool}}, got {line[:80]}')
        labels[item["n"]] = item["names"]
    return labels


def judged(folder: Path) -> dict:
    """Per system: items judged, the judged share naming an exact answer, the ruler's share on the same items, and
    the ruler's recall and precision against the judge."""
    key = json.loads((folder / KEY).read_text(encoding="utf-8"))
    labels = read_labels(folder / LABELS)
    missing = [k["n"] for k in key if k["n"] not in labels]
    if missing:
        raise ValueError(f"{len(missing)} of {len(key)} items have no label (first: {missing[0]})")
    result = {}
    for system in dict.fromkeys(k["system"] for k in key):
        mine = [(k["ruler"], labels[k["n"]]) for k in key if k["system"] == system]
        both = sum(r and j for r, j in mine)
        result[system] = {
            "items": len(mine),
            "judged_names_exact": round(sum(j for _, j in mine) / len(mine), 4),
            "ruler_names_exact": round(sum(r for r, _ in mine) / len(mine), 4),
            "ruler_recall": round(both / max(sum(j for _, j in mine), 1), 4),
            "ruler_precision": round(both / max(sum(r for r, _ in mine), 1), 4),
        }
    return result


__all__ = ["ITEMS", "KEY", "LABELS", "judged", "read_labels", "write_items"]
