"""BioASQ golden questions with what annotators marked: gold snippets (quoted from PubMed records), the ideal
answer (a short summary they wrote) and, for factoid and list questions, the exact answers (each with its
synonyms), restricted to the dev question ids (``data/bioasq/dev_questions.jsonl``, the
7B-11B questions whose gold documents are in the corpus)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from cpqa.sources.jsonl import read_records


class Snippet(BaseModel):
    pmid: str | None = None
    text: str


class GoldQuestion(BaseModel):
    id: str
    question: str
    type: str = ""
    snippets: list[Snippet] = Field(default_factory=list)
    ideal: list[str] = Field(default_factory=list)
    exact: list[list[str]] = Field(default_factory=list)  # factoid / list: each answer by its names


def exact_answers(question: dict) -> list[list[str]]:
    """A factoid or list question's exact answers, each as its names (BioASQ writes an answer as a name or a list of
    synonyms); none for yes/no and summary questions."""
    if question.get("type") not in ("factoid", "list"):
        return []
    found = []
    for answer in question.get("exact_answer") or []:
        names = [" ".join(str(n).split()) for n in ([answer] if isinstance(answer, str) else answer)]
        if names := [n for n in names if n]:
            found.append(names)
    return found


class _QuestionId(BaseModel):
    id: str


def bioasq_gold(raw_dir: Path, dev_questions: Path) -> list[GoldQuestion]:
    """The dev questions found in BioASQ golden files under ``raw_dir`` (``*/*_golden.json``), each once, with their
    distinct non-empty snippets, in file order."""
    wanted = {q.id for q in read_records(dev_questions, _QuestionId, "question with an id")}
    files = sorted(raw_dir.glob("*/*golden*.json")) or sorted(raw_dir.glob("*golden*.json"))
    if not files:
        raise FileNotFoundError(f"no BioASQ golden JSON files under {raw_dir}")
    found: dict[str, GoldQuestion] = {}
    for path in files:
        for q in json.loads(path.read_text(encoding="utf-8")).get("questions", []):
            qid = q.get("id")
            if qid not in wanted or qid in found or not q.get("snippets"):
                continue
            seen: set[str] = set()
            snippets = []
            for snippet in q["snippets"]:
                text = " ".join(str(snippet.get("text", "")).split())
                if text and text not in seen:
                    seen.add(text)
                    pmid = str(snippet.get("document", "")).rstrip("/").rsplit("/", 1)[-1] or None
                    snippets.append(Snippet(pmid=pmid, text=text))
            ideal = q.get("ideal_answer") or []
            found[qid] = GoldQuestion(
                id=qid,
                question=q["body"].strip(),
                type=q.get("type", ""),
                snippets=snippets,
                ideal=[ideal] if isinstance(ideal, str) else [str(a) for a in ideal],
                exact=exact_answers(q),
            )
    return list(found.values())
