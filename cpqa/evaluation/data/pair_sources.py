"""Where query-passage pairs come from: BioASQ gold snippets (real, no language model) and synthetic
questions that Claude writes for SEOS passages of the local store."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from cpqa.config import Settings
from cpqa.evaluation.data.bioasq_gold import bioasq_gold
from cpqa.evaluation.evaluations.pairs import Pair, passage_id

GENERATION_TOOL_NAME = "write_question"


# ---------------------------------------------------------------- BioASQ snippets
def bioasq_pairs(raw_dir: Path, dev_questions: Path) -> list[Pair]:
    """(question, gold snippet) pairs from BioASQ golden files under ``raw_dir`` (``*/*_golden.json``),
    restricted to the question ids in ``dev_questions`` (JSONL with ``id``); a question is taken once."""
    return [
        Pair(
            query_id=q.id,
            query=q.question,
            passage_id=passage_id(s.text, "bioasq"),
            passage=s.text,
            pmid=s.pmid,
            source="bioasq",
        )
        for q in bioasq_gold(raw_dir, dev_questions)
        for s in q.snippets
    ]


# ---------------------------------------------------------------- synthetic questions with Claude
class GenerationReport(BaseModel):
    requested: int
    written: int
    duplicates: int = 0
    rejected: int = 0  # malformed or unusable answers from Claude
    reasons: list[str] = Field(default_factory=list)
    path: str | None = None


GENERATION_SYSTEM = (
    "You write realistic search questions for a cancer question-answering evaluation. Given one passage from "
    "a biomedical article, write ONE question that this passage answers, phrased the way a patient, a family "
    "member or a clinician would ask it: plain words for patients, precise terms for clinicians. Do not copy "
    "sentences from the passage, do not mention 'the passage' or 'the study', and do not include the answer."
)


class GeneratedQuestion(BaseModel):
    question: str = Field(description="one question ending with a question mark")
    asker: Literal["patient", "clinician"]


def generation_tool():
    from cpqa.models.llm import ToolSpec

    return ToolSpec.of(
        GENERATION_TOOL_NAME, "Record the question the passage answers and who would ask it.", GeneratedQuestion
    )


def question_problem(question: str, passage: str) -> str | None:
    """Why a generated question is unusable, or None."""
    q = " ".join(question.split())
    if len(q.split()) < 4 or not q.endswith("?"):
        return "not a question of at least four words ending with '?'"
    if re.search(r"\b(the|this) (passage|study|text|article)\b", q, re.I):
        return "refers to the passage instead of asking about the topic"
    if q.rstrip("?").lower() in passage.lower():
        return "copies the passage"
    return None


def normalized_question(question: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))


def sample_passages(settings: Settings, n: int, seed: int = 13) -> list[tuple[str, str, str]]:
    """``n`` (passage id, pmid, text) SEOS passages from distinct store articles with abstracts, seeded."""
    from cpqa.passages.records import segment_article
    from cpqa.sources.store import Store

    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    with Store(settings.store_path) as store:
        pmids = store.pmids()
        if not pmids:
            raise ValueError(f"the store at {settings.store_path} is empty: ingest PubMed records first")
        rng.shuffle(pmids)
        for start in range(0, len(pmids), 50):
            articles = store.get_many(pmids[start : start + 50])
            for pmid in pmids[start : start + 50]:
                article = articles.get(pmid)
                if article is None or not article.has_abstract:
                    continue
                nodes = [node for node in segment_article(article) if len(node.text.split()) >= 25]
                if nodes:
                    node = rng.choice(nodes)
                    out.append((passage_id(node.text, "store"), pmid, node.text))
                if len(out) >= n:
                    return out
    return out


def generate_pairs(
    settings: Settings,
    n: int,
    llm,
    passages: list[tuple[str, str, str]] | None = None,
    existing: list[Pair] | None = None,
) -> tuple[list[Pair], GenerationReport]:
    """One Claude-written question per passage; malformed answers are rejected and counted, duplicates
    (by normalised wording, also against ``existing``) dropped."""
    from cpqa.models.llm import LLMError

    if not llm.available:
        raise ValueError(f"generating pairs needs a language model: {llm.unconfigured}")
    passages = passages if passages is not None else sample_passages(settings, n)
    report = GenerationReport(requested=n, written=0)
    seen = {normalized_question(p.query) for p in existing or []}
    done_passages = {p.passage_id for p in existing or []}
    pairs: list[Pair] = []
    tool = generation_tool()
    for pid, pmid, text in passages:
        if len(pairs) >= n:
            break
        if pid in done_passages:
            continue
        try:
            data = llm.call_tool(
                GENERATION_SYSTEM,
                [{"role": "user", "content": f"Passage (PMID {pmid}):\n{text}"}],
                tool,
                max_tokens=300,
            )
        except LLMError as exc:
            report.rejected += 1
            report.reasons.append(str(exc)[:200])
            continue
        question = " ".join(str(data.get("question", "")).split())
        problem = question_problem(question, text)
        if problem:
            report.rejected += 1
            report.reasons.append(problem)
            continue
        key = normalized_question(question)
        if key in seen:
            report.duplicates += 1
            continue
        seen.add(key)
        pairs.append(
            Pair(
                query_id=f"syn:{pid.split(':', 1)[1]}",
                query=question,
                passage_id=pid,
                passage=text,
                pmid=pmid,
                source=f"synthetic:{data.get('asker', 'patient')}",
            )
        )
    report.written = len(pairs)
    report.reasons = sorted(set(report.reasons))[:10]
    return pairs, report
