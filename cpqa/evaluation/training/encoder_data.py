"""Training triples for a biomedical bi-encoder (issue 36): E1 (question -> PubMed record) and the passage layer.

Each example is ``{"a": anchor, "p": positive, "n": [hard negatives], "s": source}`` by text id
(``texts.jsonl.gz``); ``fit`` trains with the in-batch negatives plus one of ``n`` per epoch, in turn. Sources:
- ``bioasq``: train-split questions (``common.Guard``) -> each gold record in the store, as E1 embeds it ("title.
  abstract", id ``d:PMID``); negatives: the best records of the product's E1 and BM25 paths (the same
  ``DocumentQuery`` a user's question gets), interleaved, that are not gold (past the first ``skip`` of them);
- ``pubmedqa``: PubMedQA questions but the excluded ones -> their abstract (``d:PMID``), negatives as above;
- ``title-abstract``: a record's title -> its abstract (``t:PMID`` -> ``ab:PMID``), weak supervision from the corpus
  alone; negatives: plain BM25's best other abstracts for the title;
- ``medquad`` (``--medquad``, on by default, since whether it helps is to be measured): a train page's question ->
  its answer section ("heading: text"), negatives: the page's other sections.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from cpqa.evaluation.data.shared import SHARED_DATA
from cpqa.evaluation.training.common import (
    Guard,
    TextTable,
    audit,
    build_guard,
    chunks,
    medquad_sections,
    normalised,
    section_text,
    write_dataset,
)
from cpqa.evaluation.training.mining import Miner, interleave

Progress = Callable[[str], None]


@dataclass
class EncoderDataOptions:
    negatives: int = 5  # hard negatives kept per question (BioASQ, PubMedQA, MedQuAD)
    depth: int = 20  # ranks of E1 and of BM25 mined for them
    # the best non-gold records passed over before negatives are taken: once E1 is trained on these questions, its
    # very top non-gold records are often relevant records BioASQ's list lacks (unlabelled positives)
    skip: int = 0
    title_pairs: int = 12000  # title -> abstract pairs at most (a seeded sample of the records with both)
    title_negatives: int = 2
    medquad: bool = True
    limit: int | None = None  # questions per question source at most (trial runs, tests)
    seed: int = 36


def _rotated(items: list[str], by: int) -> list[str]:
    by = by % len(items) if items else 0
    return items[by:] + items[:by]


def _with_text(miner: Miner, pmids: Sequence[str], text: Callable[[Any], str]) -> dict[str, str]:
    articles = miner.articles(pmids)
    found = {p: text(articles[p]) for p in pmids if p in articles}
    return {p: t for p, t in found.items() if t.strip()}


def question_source(
    miner: Miner,
    guard: Guard,
    table: TextTable,
    items: Sequence[tuple[str, str, list[str]]],
    source: str,
    options: EncoderDataOptions,
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Triples for (anchor id, question, gold PMIDs): each gold record, with mined negatives."""
    examples: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for number, (anchor, question, gold) in enumerate(items, 1):
        guard.check_question(anchor.split(":", 1)[1], question)
        allowed = guard.allowed(gold)
        counts["gold_records_held_out_or_12b"] += len(gold) - len(allowed)
        positives = _with_text(miner, allowed, lambda a: a.title_and_abstract)
        counts["gold_records_not_in_store"] += len(allowed) - len(positives)
        if not positives:
            counts["questions_without_gold_record"] += 1
            continue
        hits = miner.document_hits(question, options.depth)
        pool = [p for p in guard.allowed(interleave(hits["E1"], hits["BM25"])) if p not in set(gold)][options.skip :]
        negatives = _with_text(miner, pool[: 2 * options.negatives], lambda a: a.title_and_abstract)
        chosen = [p for p in pool if p in negatives][: options.negatives]
        counts["negatives_from_e1"] += sum(p in hits["E1"] for p in chosen)
        counts["negatives_from_bm25"] += sum(p in hits["BM25"] for p in chosen)
        table.add(anchor, question)
        for pmid in [*positives, *chosen]:
            table.add(f"d:{pmid}", positives.get(pmid) or negatives[pmid])
        for j, pmid in enumerate(positives):
            examples.append({"a": anchor, "p": f"d:{pmid}", "n": _rotated([f"d:{p}" for p in chosen], j), "s": source})
        counts["questions"] += 1
        if options.limit and counts["questions"] >= options.limit:
            break
        if progress and number % 100 == 0:
            progress(f"{source}: {number}/{len(items)} questions")
    counts["triples"] = len(examples)
    return examples, dict(counts)


def bioasq_items(guard: Guard) -> list[tuple[str, str, list[str]]]:
    return [
        (f"q:{qid}", guard.questions[qid]["question"], [str(p) for p in guard.questions[qid]["gold_pmids"]])
        for qid in guard.train_ids
    ]


def pubmedqa_items(guard: Guard, shared: Path) -> list[tuple[str, str, list[str]]]:
    """PubMedQA test items but the excluded ones (the cancer dev set, CMMQA's): question -> its own record."""
    items = json.loads((shared / "pubmedqa" / "pqal_test500.json").read_text(encoding="utf-8"))
    return [
        (f"pq:{pid}", item["QUESTION"], [pid])
        for pid, item in items.items()
        if pid not in guard.pubmedqa_excluded and normalised(item["QUESTION"]) not in guard.held_out_texts
    ]


def title_source(
    miner: Miner, guard: Guard, table: TextTable, options: EncoderDataOptions
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Title -> abstract of records with both (a title of 3+ words, an abstract of 20+), seeded sample."""
    pmids = guard.allowed(miner.all_pmids())
    random.Random(options.seed).shuffle(pmids)
    examples: list[dict[str, Any]] = []
    counts: Counter[str] = Counter(records_allowed=len(pmids))
    for batch in chunks(pmids, 500):
        if len(examples) >= options.title_pairs:
            break
        articles = miner.articles(batch)
        for pmid in batch:
            article = articles.get(pmid)
            if article is None or len(article.title.split()) < 3 or len(article.abstract.split()) < 20:
                continue
            counts["records_with_title_and_abstract"] += 1
            hits = [p for p in guard.allowed(miner.bm25_text(article.title, options.title_negatives + 8)) if p != pmid]
            others = _with_text(miner, hits, lambda a: a.abstract if len(a.abstract.split()) >= 20 else "")
            chosen = [p for p in hits if p in others][: options.title_negatives]
            table.add(f"t:{pmid}", article.title)
            table.add(f"ab:{pmid}", article.abstract)
            for other in chosen:
                table.add(f"ab:{other}", others[other])
            negatives = [f"ab:{p}" for p in chosen]
            examples.append({"a": f"t:{pmid}", "p": f"ab:{pmid}", "n": negatives, "s": "title-abstract"})
            if len(examples) >= options.title_pairs:
                break
    counts["triples"] = len(examples)
    counts["without_negative"] = sum(not e["n"] for e in examples)
    return examples, dict(counts)


def medquad_source(
    table: TextTable, options: EncoderDataOptions, shared: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A train page's question -> its answer section; negatives: the page's other sections."""
    sections, why = medquad_sections(shared, "train")
    if sections is None:
        return [], {"skipped": why}
    by_page: dict[str, list[Any]] = {}
    for page, section in sections:
        by_page.setdefault(page, []).append(section)
    examples: list[dict[str, Any]] = []
    for found in by_page.values():
        texts = [section_text(s) for s in found]
        for i, section in enumerate(found):
            anchor = table.add(f"mq:q:{section.key}", " ".join(section.question.split()))
            positive = table.add(f"mq:s:{section.key}", texts[i])
            others = [j for j in range(len(found)) if texts[j] != texts[i]][: options.negatives]
            negatives = [table.add(f"mq:s:{found[j].key}", texts[j]) for j in others]
            examples.append({"a": anchor, "p": positive, "n": _rotated(negatives, i), "s": "medquad"})
    examples = examples[: options.limit] if options.limit else examples
    return examples, {"read": why, "pages": len(by_page), "triples": len(examples)}


def build_encoder_data(
    home: Path,
    out: Path,
    options: EncoderDataOptions | None = None,
    *,
    shared: Path = SHARED_DATA,
    cmmqa: Path | None = None,
    passages_path: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Mine every source over the data home ``home`` and write the dataset to ``out``; the manifest."""
    options = options or EncoderDataOptions()
    guard = build_guard(shared, cmmqa)
    table = TextTable()
    examples: list[dict[str, Any]] = []
    sources: dict[str, Any] = {}
    with Miner(home, passages_path) as miner:
        for name, items in (("bioasq", bioasq_items(guard)), ("pubmedqa", pubmedqa_items(guard, shared))):
            found, sources[name] = question_source(miner, guard, table, items, name, options, progress)
            examples += found
        found, sources["title-abstract"] = title_source(miner, guard, table, options)
        examples += found
        encoder = miner.encoder_name
    if options.medquad:
        found, sources["medquad"] = medquad_source(table, options, shared)
        examples += found
    else:
        sources["medquad"] = {"skipped": "--no-medquad"}
    checks = audit(examples, guard, table)
    extra = {
        "home": str(home),
        "mined_with": {"E1": encoder, "BM25": "bm25s over title + abstract", "depth": options.depth},
        "options": asdict(options),
        "guard": guard.counts,
        "checks": checks,
        "sources": sources,
        "per_source": dict(Counter(e["s"] for e in examples)),
    }
    return write_dataset(out, "encoder", table, "triples.jsonl.gz", examples, extra)
