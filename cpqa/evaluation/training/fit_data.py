"""Reading a training folder (``texts.jsonl.gz``, ``triples.jsonl.gz`` or ``pairs.jsonl.gz``, ``manifest.json``)
and cutting it into batches. Standard library only: ``fit`` runs where CPQA's dependencies are not installed."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

EXAMPLE_FILES = {"encoder": "triples.jsonl.gz", "chooser": "pairs.jsonl.gz", "reranker": "pairs.jsonl.gz"}


@dataclass
class TrainingData:
    kind: str  # "encoder", or a cross-encoder's: "chooser", "reranker"
    texts: dict[str, str]
    examples: list[dict[str, Any]]
    manifest: dict[str, Any]

    @property
    def group_key(self) -> str:
        """What an example belongs to: its anchor (encoder) or its question (chooser)."""
        return "a" if self.kind == "encoder" else "q"


def _lines(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_data(folder: Path, kind: str) -> TrainingData:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("kind") != kind:
        raise ValueError(f"{folder} holds {manifest.get('kind')!r} data, not {kind!r}")
    texts = {row["id"]: row["text"] for row in _lines(folder / "texts.jsonl.gz")}
    return TrainingData(kind, texts, _lines(folder / EXAMPLE_FILES[kind]), manifest)


def is_check(key: str, share: float) -> bool:
    """A fixed share of anchors / questions, by a hash of the id, is held out of training to check the model."""
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 10_000 < share * 10_000


def split_check(
    data: TrainingData, share: float = 0.02, cap: int = 400
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, check): every example of a held-out anchor / question goes to check; at most ``cap`` of them, in
    the order of a hash of their anchor / question (so every source is in it, as often as it has questions)."""
    key = data.group_key
    train = [e for e in data.examples if not is_check(e[key], share)]
    check = [e for e in data.examples if is_check(e[key], share)]
    check.sort(key=lambda e: hashlib.sha1(f"order:{e[key]}".encode()).hexdigest())  # stable: a group stays together
    return train, check[:cap]


def select(examples: list[dict[str, Any]], sources: list[str] | None) -> list[dict[str, Any]]:
    """The examples of ``sources`` (a name, or a prefix before ":" as "bioasq" for "bioasq:snippet"); all if None."""
    if not sources:
        return examples
    wanted = set(sources)
    return [e for e in examples if e["s"] in wanted or e["s"].split(":", 1)[0] in wanted]


def sample(examples: list[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """At most ``n`` examples, a seeded sample (every source keeps its share)."""
    if n is None or n >= len(examples):
        return examples
    return random.Random(seed).sample(examples, n)


def negative_for(example: dict[str, Any], epoch: int) -> str | None:
    """The hard negative an example trains with in ``epoch``: its list in turn."""
    negatives = example.get("n") or []
    if isinstance(negatives, str):
        return negatives
    return negatives[epoch % len(negatives)] if negatives else None


def encoder_batches(
    examples: list[dict[str, Any]], size: int, epoch: int, seed: int
) -> list[list[tuple[str, str, str | None]]]:
    """(anchor, positive, negative) batches for in-batch negatives: each batch from one source, and no text twice
    in a batch (a repeated question or record would count as its own negative); batches shuffled."""
    rng = random.Random(f"{seed}:{epoch}")
    by_source: dict[str, list[tuple[str, str, str | None]]] = {}
    for e in examples:
        by_source.setdefault(e["s"], []).append((e["a"], e["p"], negative_for(e, epoch)))
    batches: list[list[tuple[str, str, str | None]]] = []
    for source in sorted(by_source):
        queue = deque(rng.sample(by_source[source], len(by_source[source])))
        while queue:
            batch: list[tuple[str, str, str | None]] = []
            used: set[str] = set()
            deferred = []
            while queue and len(batch) < size:
                item = queue.popleft()
                ids = {i for i in item if i is not None}
                if ids & used:
                    deferred.append(item)
                else:
                    batch.append(item)
                    used |= ids
            queue.extendleft(reversed(deferred))
            batches.append(batch)  # the first item always fits, so the queue shrinks
    rng.shuffle(batches)
    return batches


def pair_batches(
    examples: list[dict[str, Any]],
    size: int,
    epoch: int,
    seed: int,
    length: Callable[[dict[str, Any]], int] | None = None,
) -> list[list[dict[str, Any]]]:
    """Shuffled batches; with ``length``, examples of about one length batched together (within windows of 50
    batches, then the batches shuffled), so a batch of short sentences is not padded to a long section."""
    rng = random.Random(f"{seed}:{epoch}")
    order = rng.sample(examples, len(examples))
    if length is not None:
        window = 50 * size
        order = [e for i in range(0, len(order), window) for e in sorted(order[i : i + window], key=length)]
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    rng.shuffle(batches)
    return batches
