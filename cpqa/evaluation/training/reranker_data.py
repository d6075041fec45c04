"""Training data for the record reranker (``cpqa train reranker-data``; ``cpqa.documents.record_rerank``).

For every BioASQ question of the train split (``common.Guard``: held-out questions, their gold records, BioASQ 12B's
and CMMQA's kept out), HSRDR is asked as the pipeline asks it, and the pairs are (question, record) labelled 1 for a
gold record (those HSRDR kept and those it missed, where they have an abstract) and 0 for a kept record that is not
gold: ``hard`` drawn from the first ``hard_pool`` kept, ``easy`` from the rest, seeded. The reranker reads a record as
E1 does ("title. abstract"), so the text is ``Article.title_and_abstract``.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from cpqa.evaluation.training.common import Guard, TextTable, audit, build_guard, write_dataset
from cpqa.evaluation.training.mining import Miner


@dataclass(frozen=True)
class RerankerDataOptions:
    hard: int = 8  # non-gold kept records per question from the first hard_pool
    hard_pool: int = 20
    easy: int = 2  # ... and from the kept records after them
    limit: int | None = None  # questions at most (trial runs)
    seed: int = 60


def question_pairs(
    miner: Miner, guard: Guard, table: TextTable, options: RerankerDataOptions, progress: Callable[[str], None]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The labelled pairs of the train split's questions, and counts of what was found."""
    rng = random.Random(options.seed)
    pairs: list[dict[str, Any]] = []
    counts = {"questions": 0, "gold_kept": 0, "gold_missed": 0, "questions_without_gold": 0}
    ids = guard.train_ids[: options.limit] if options.limit else guard.train_ids
    for number, qid in enumerate(ids, 1):
        item = guard.questions[qid]
        guard.check_question(qid, item["question"])
        gold = set(guard.allowed(item["gold_pmids"]))
        kept = guard.allowed(miner.kept_records(item["question"]))
        positives = [p for p in kept if p in gold] + sorted(gold - set(kept))
        others = [p for p in kept if p not in gold]
        pool, rest = others[: options.hard_pool], others[options.hard_pool :]
        negatives = rng.sample(pool, min(options.hard, len(pool))) + rng.sample(rest, min(options.easy, len(rest)))
        articles = miner.articles(positives + negatives)
        question = table.add(f"q:{qid}", item["question"])
        found = 0
        for pmid, label in [(p, 1) for p in positives] + [(p, 0) for p in negatives]:
            article = articles.get(pmid)
            if article is None or not article.has_abstract:
                continue
            record = table.add(f"d:{pmid}", article.title_and_abstract)
            source = "bioasq:gold-record" if label else "bioasq:retrieved"
            pairs.append({"q": question, "c": record, "y": label, "s": source})
            found += label
        counts["questions"] += 1
        counts["gold_kept"] += sum(p in gold for p in kept)
        counts["gold_missed"] += len(gold - set(kept))
        counts["questions_without_gold"] += found == 0
        if number % 100 == 0:
            progress(f"reranker data: {number}/{len(ids)} questions, {len(pairs)} pairs")
    return pairs, counts


def build_reranker_data(
    home: Path,
    out: Path,
    options: RerankerDataOptions = RerankerDataOptions(),
    *,
    cmmqa: Path | None = None,
    passages_path: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Mine ``home`` into ``out`` (``texts.jsonl.gz``, ``pairs.jsonl.gz``, ``manifest.json``); the manifest."""
    guard = build_guard(cmmqa=cmmqa)
    table = TextTable()
    with Miner(home, passages_path) as miner:
        pairs, counts = question_pairs(miner, guard, table, options, progress)
        encoder = miner.encoder_name
    checks = audit(pairs, guard, table)
    labels = {str(y): sum(p["y"] == y for p in pairs) for y in (1, 0)}
    per_source: dict[str, int] = {}
    for pair in pairs:
        per_source[pair["s"]] = per_source.get(pair["s"], 0) + 1
    manifest = {
        "home": str(home),
        "retrieval": f"HSRDR's kept records (E1: {encoder}), the pipeline's default options",
        "options": asdict(options),
        "guard": guard.counts,
        "checks": checks,
        "sources": {"bioasq": counts},
        "per_source": per_source,
        "labels": labels,
    }
    return write_dataset(out, "reranker", table, "pairs.jsonl.gz", pairs, manifest)


__all__ = ["RerankerDataOptions", "build_reranker_data", "question_pairs"]
