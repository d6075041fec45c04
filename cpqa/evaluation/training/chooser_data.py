"""Labelled (question, candidate) pairs for an answer-chooser cross-encoder (issue 35): does this candidate answer
the question? A candidate is a sentence of a PubMed record or a section of an NIH patient page.

Each example is ``{"q": question id, "c": candidate id, "y": 1 | 0, "s": source}`` (texts in ``texts.jsonl.gz``).
Sources:
- BioASQ train-split questions (``common.Guard``) with their gold snippets (``bioasq_gold``):
  ``bioasq:snippet`` (1): a snippet's sentences of 4+ words (the product's splitter, ``cpqa.passages.seos``);
  ``bioasq:gold-record`` (0): the gold records' other sentences, that match no gold snippet;
  ``bioasq:retrieved`` (0): sentences of the best non-gold records of the product's E1 and BM25 paths;
  ``bioasq:chooser-top`` (0): the current chooser's best sentences (the extractive answerer's ``rank_sentences`` over
  the pipeline's top passages) that match no gold snippet; ``bioasq:chooser-gold`` (1): those of a gold record
  that match one.
  A sentence "matches" a snippet as ``cpqa eval answers`` counts it: 60 % of its content words are in the snippet;
  one between a third and that share is too close to call either way and is left out.
- ``label="exact"`` (``--label exact``): BioASQ factoid and list questions only, every candidate labelled by whether
  it names one of the question's exact answers (as ``cpqa eval answers`` counts a quote that answers): the snippets'
  sentences (``bioasq:exact-snippet`` 1 / ``bioasq:topic-snippet`` 0: about the topic, not the answer), the gold
  records' (``bioasq:exact-record`` / ``bioasq:topic-record``), the current ranking's best (``bioasq:exact-ranked`` /
  ``bioasq:topic-ranked``) and the retrieved non-gold records' (``bioasq:exact-retrieved`` / ``bioasq:retrieved``).
  The sentence-level chooser: which of the sentences about the subject states the answer.
- MedQuAD train pages (``cpqa.sources.patient_pages.read_medquad``): the question against ``medquad:own`` (1), its
  answer section; ``medquad:same-page`` (0), the page's other sections; ``medquad:same-condition`` (0), sections of
  other pages on the same condition that answer another kind of question; ``medquad:same-kind`` (0), the same kind
  of section about another condition. A section is "heading: text", cut near 1,500 characters.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from cpqa.evaluation.data.bioasq_gold import GoldQuestion, bioasq_gold
from cpqa.evaluation.data.shared import SHARED_DATA
from cpqa.evaluation.training.common import (
    Guard,
    TextTable,
    audit,
    build_guard,
    medquad_sections,
    normalised,
    section_text,
    write_dataset,
)
from cpqa.evaluation.training.mining import Miner, interleave
from cpqa.passages.seos import split_sentences
from cpqa.words import content_terms, strip_labels

MATCH = 0.6  # as cpqa.evaluation.evaluations.answers.MATCH
UNSURE = 0.34  # below this share a sentence is no match for certain
Progress = Callable[[str], None]


@dataclass
class ChooserDataOptions:
    record_negatives: int = 8  # other sentences of the gold records, per question
    retrieved_records: int = 5  # E1's and BM25's best non-gold records, interleaved ...
    retrieved_sentences: int = 3  # ... and sentences of each
    chooser_top: int = 20  # the current chooser's best sentences looked at
    chooser: bool = True  # run the pipeline's passage stage for them (the slowest part)
    page_negatives: int = 3
    condition_negatives: int = 2
    kind_negatives: int = 1
    medquad: bool = True
    label: str = "snippet"  # or "exact": by BioASQ's exact answers, factoid and list questions only
    limit: int | None = None  # BioASQ questions (with a snippet) and MedQuAD questions at most
    seed: int = 35


def sentences(text: str) -> list[str]:
    """Sentences of 4+ words, structured-abstract labels removed, as the extractive answerer quotes them."""
    found = (strip_labels(text[s.start : s.end]) for s in split_sentences(text) if s.words >= 4)
    return [s for s in found if len(s.split()) >= 4]


def sentence_id(pmid: str | None, text: str) -> str:
    return f"s:{pmid or '-'}:{hashlib.sha1(normalised(text).encode()).hexdigest()[:12]}"


def best_share(sentence: str, snippets: Sequence[set[str]]) -> float:
    words = set(content_terms(sentence))
    return max((len(words & s) / len(words) for s in snippets), default=0.0) if words else 0.0


class _Pairs:
    """The examples, each (question, candidate) once: the first label given stands (positives are added first)."""

    def __init__(self, table: TextTable):
        self.table = table
        self.rows: list[dict[str, Any]] = []
        self.seen: set[tuple[str, str]] = set()

    def add(self, question: str, candidate: str, label: int, source: str) -> None:
        if (question, candidate) not in self.seen:
            self.seen.add((question, candidate))
            self.rows.append({"q": question, "c": candidate, "y": label, "s": source})

    def sentence(self, question: str, pmid: str | None, text: str, label: int, source: str) -> None:
        self.add(question, self.table.add(sentence_id(pmid, text), text), label, source)


def bioasq_question(
    miner: Miner, guard: Guard, pairs: _Pairs, gold: GoldQuestion, options: ChooserDataOptions, rng: random.Random
) -> bool:
    """One question's pairs; False when none of its snippets may be used."""
    snippets = [s for s in gold.snippets if s.pmid and s.pmid not in guard.forbidden_records]
    if not snippets:
        return False
    guard.check_question(gold.id, gold.question)
    qid = pairs.table.add(f"q:{gold.id}", gold.question)
    if options.label == "exact":
        return _exact_question(miner, guard, pairs, gold, snippets, qid, options, rng)
    words = [set(content_terms(s.text)) for s in snippets]
    for snippet in snippets:
        for sentence in sentences(snippet.text):
            pairs.sentence(qid, snippet.pmid, sentence, 1, "bioasq:snippet")

    def negatives(pmid: str, found: list[str], n: int, source: str) -> None:
        kept = [s for s in found if best_share(s, words) < UNSURE]
        for sentence in rng.sample(kept, min(n, len(kept))):
            pairs.sentence(qid, pmid, sentence, 0, source)

    gold_pmids, pooled = _gold_sentences(miner, guard, gold, snippets)
    kept = [(pmid, s) for pmid, s in pooled if best_share(s, words) < UNSURE]
    for pmid, sentence in rng.sample(kept, min(options.record_negatives, len(kept))):
        pairs.sentence(qid, pmid, sentence, 0, "bioasq:gold-record")
    for pmid, article in _other_records(miner, guard, gold.question, gold_pmids, options).items():
        negatives(pmid, sentences(article.abstract), options.retrieved_sentences, "bioasq:retrieved")
    if options.chooser:
        for pmid, sentence in _ranked(miner, guard, gold.question, options):
            share = best_share(sentence, words)
            if share >= MATCH and pmid in gold_pmids:
                pairs.sentence(qid, pmid, sentence, 1, "bioasq:chooser-gold")
            elif share < UNSURE:
                pairs.sentence(qid, pmid, sentence, 0, "bioasq:chooser-top")
    return True


def _exact_question(
    miner: Miner,
    guard: Guard,
    pairs: _Pairs,
    gold: GoldQuestion,
    snippets: Sequence[Any],
    qid: str,
    options: ChooserDataOptions,
    rng: random.Random,
) -> bool:
    """One factoid or list question's pairs, each labelled by whether it names an exact answer (``label="exact"``)."""
    from cpqa.evaluation.evaluations.answers import names_exact_answer

    def add(pmid: str | None, sentence: str, where: str, negative: str) -> None:
        named = names_exact_answer(sentence, gold.exact, other_forms=False)
        pairs.sentence(qid, pmid, sentence, int(named), f"bioasq:exact-{where}" if named else negative)

    for snippet in snippets:
        for sentence in sentences(snippet.text):
            add(snippet.pmid, sentence, "snippet", "bioasq:topic-snippet")
    gold_pmids, pooled = _gold_sentences(miner, guard, gold, snippets)
    for pmid, sentence in rng.sample(pooled, min(options.record_negatives, len(pooled))):
        add(pmid, sentence, "record", "bioasq:topic-record")
    if options.chooser:
        for pmid, sentence in _ranked(miner, guard, gold.question, options):
            add(pmid, sentence, "ranked", "bioasq:topic-ranked")
    for pmid, article in _other_records(miner, guard, gold.question, gold_pmids, options).items():
        found = sentences(article.abstract)
        for sentence in rng.sample(found, min(options.retrieved_sentences, len(found))):
            add(pmid, sentence, "retrieved", "bioasq:retrieved")
    return True


def _gold_sentences(
    miner: Miner, guard: Guard, gold: GoldQuestion, snippets: Sequence[Any]
) -> tuple[set[str], list[tuple[str, str]]]:
    """The question's gold records (its golden file's and its usable snippets') and their sentences, by PMID."""
    gold_pmids = set(guard.questions[gold.id]["gold_pmids"]) | {s.pmid for s in snippets if s.pmid}
    records = miner.articles(guard.allowed(sorted(gold_pmids)))
    return gold_pmids, [(pmid, s) for pmid, article in records.items() for s in sentences(article.abstract)]


def _other_records(
    miner: Miner, guard: Guard, question: str, gold_pmids: set[str], options: ChooserDataOptions
) -> dict[str, Any]:
    """The best records of E1 and BM25, interleaved, that are not gold (at most ``retrieved_records``)."""
    hits = miner.document_hits(question, 2 * options.retrieved_records + len(gold_pmids))
    others = [p for p in guard.allowed(interleave(hits["E1"], hits["BM25"])) if p not in gold_pmids]
    return miner.articles(others[: options.retrieved_records])


def _ranked(miner: Miner, guard: Guard, question: str, options: ChooserDataOptions) -> list[tuple[str, str]]:
    """The extractive answerer's best ``chooser_top`` sentences over the pipeline's passages (no held-out record)."""
    passages = [p for p in miner.passages(question) if p.pmid not in guard.forbidden_records]
    return miner.chooser_ranking(question, passages)[: options.chooser_top]


def bioasq_source(
    miner: Miner, guard: Guard, pairs: _Pairs, options: ChooserDataOptions, shared: Path, progress: Progress | None
) -> dict[str, int]:
    train = set(guard.train_ids)
    raw = shared / "mirage" / "rawdata" / "bioasq"
    golds = [g for g in bioasq_gold(raw, shared / "bioasq" / "dev_questions.jsonl") if g.id in train]
    if options.label == "exact":
        golds = [g for g in golds if g.exact]
    rng = random.Random(options.seed)
    counts: Counter[str] = Counter(train_questions_with_snippets=len(golds))
    for number, gold in enumerate(golds, 1):
        used = bioasq_question(miner, guard, pairs, gold, options, rng)
        counts["questions" if used else "questions_without_usable_snippet"] += 1
        if options.limit and counts["questions"] >= options.limit:
            break
        if progress and number % 50 == 0:
            progress(f"bioasq: {number}/{len(golds)} questions")
    return dict(counts)


def medquad_source(pairs: _Pairs, options: ChooserDataOptions, shared: Path) -> dict[str, Any]:
    found, why = medquad_sections(shared, "train")
    if found is None:
        return {"skipped": why}
    rng = random.Random(options.seed)
    table = pairs.table
    sections = [s for _, s in found]
    texts = {s.key: table.add(f"mq:s:{s.key}", section_text(s)) for s in sections}
    by_page: dict[str, list[Any]] = {}
    by_condition: dict[str, list[Any]] = {}
    by_kind: dict[str, list[Any]] = {}
    for s in sections:
        by_page.setdefault(s.page, []).append(s)
        by_condition.setdefault(normalised(s.focus), []).append(s)
        by_kind.setdefault(s.kind, []).append(s)

    def differs(own: Any, other: Any) -> bool:
        return table.texts[texts[other.key]] != table.texts[texts[own.key]]

    questions = sections[: options.limit] if options.limit else sections
    for s in questions:
        qid = table.add(f"mq:q:{s.key}", " ".join(s.question.split()))
        pairs.add(qid, texts[s.key], 1, "medquad:own")
        condition = normalised(s.focus)
        same_kind = rng.sample(by_kind[s.kind], min(20, len(by_kind[s.kind])))
        groups = (
            ([o for o in by_page[s.page] if o.key != s.key], options.page_negatives, "medquad:same-page"),
            (
                [o for o in by_condition[condition] if o.page != s.page and o.kind != s.kind],
                options.condition_negatives,
                "medquad:same-condition",
            ),
            ([o for o in same_kind if normalised(o.focus) != condition], options.kind_negatives, "medquad:same-kind"),
        )
        for candidates, n, source in groups:
            candidates = [o for o in candidates if differs(s, o)]
            for other in rng.sample(candidates, min(n, len(candidates))):
                pairs.add(qid, texts[other.key], 0, source)
    return {"read": why, "pages": len(by_page), "questions": len(questions)}


def build_chooser_data(
    home: Path,
    out: Path,
    options: ChooserDataOptions | None = None,
    *,
    shared: Path = SHARED_DATA,
    cmmqa: Path | None = None,
    passages_path: Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build every source over the data home ``home`` and write the dataset to ``out``; the manifest."""
    options = options or ChooserDataOptions()
    guard = build_guard(shared, cmmqa)
    table = TextTable()
    pairs = _Pairs(table)
    sources: dict[str, Any] = {}
    with Miner(home, passages_path) as miner:
        sources["bioasq"] = bioasq_source(miner, guard, pairs, options, shared, progress)
    sources["medquad"] = medquad_source(pairs, options, shared) if options.medquad else {"skipped": "--no-medquad"}
    checks = audit(pairs.rows, guard, table)
    per_source = Counter(row["s"] for row in pairs.rows)
    extra = {
        "home": str(home),
        "options": asdict(options),
        "match_rule": {"match": MATCH, "no_match_below": UNSURE},
        "guard": guard.counts,
        "checks": checks,
        "sources": sources,
        "per_source": dict(sorted(per_source.items())),
        "labels": dict(Counter(str(row["y"]) for row in pairs.rows)),
    }
    return write_dataset(out, "chooser", table, "pairs.jsonl.gz", pairs.rows, extra)
