"""``cpqa eval retrieval``: document retrieval by the pipeline's own E1, E2, BM25 and HSRDR on a question set, with
the naive hybrid as a reference row and a paired bootstrap of HSRDR against it."""

from __future__ import annotations

from pathlib import Path
import json
from typing import List, Optional

import typer

from cpqa.cli.common import emit, fail
from cpqa.evaluation.data.shared import SHARED_DATA

# The consumer health questions beside the checkout (../shared/data), used for Table II when present.
CONSUMER_QUESTIONS = SHARED_DATA / "consumer_questions"


def retrieval(
    questions: Path = typer.Option(..., "--questions", help="JSONL of {id, question, gold_pmids}"),
    paths: List[str] = typer.Option(
        ["E1", "E2", "BM25", "HSRDR", "naive-hybrid"],
        "--paths",
        help="retrieval paths (E1, E2, BM25, HSRDR, naive-hybrid), repeated or comma-separated",
    ),
    option: List[str] = typer.Option(
        [],
        "--option",
        help="a pipeline option for every path, as name=value "
        "(repeated), e.g. --option ladder_ranking=weighted --option rrf_k=60",
    ),
    compare: List[str] = typer.Option(
        ["HSRDR:naive-hybrid"], "--compare", help="paired bootstrap of A against B (A:B, repeated) when both ran"
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N questions"),
    keep_scores: Optional[Path] = typer.Option(
        None, "--keep-scores", help="write each path's per-question scores here (a later run's --against)"
    ),
    against: Optional[Path] = typer.Option(
        None,
        "--against",
        help="per-question scores an earlier run kept (--keep-scores), on the same questions: a paired bootstrap of "
        "each path against itself there (before / after a change)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result to this file"),
    table2_questions: List[Path] = typer.Option(
        [CONSUMER_QUESTIONS] if CONSUMER_QUESTIONS.exists() else [],
        "--table2-questions",
        help="more question sets (JSONL or folder, no gold needed) for the HSRDR Table II block",
    ),
    table2_limit: int = typer.Option(100, "--table2-limit", min=1, help="questions per Table II file"),
) -> None:
    """Document retrieval: recall@5/10/20, hits, MRR@10 and nDCG@10 per path, over the store in CPQA_HOME."""
    from cpqa.config import get_settings
    from cpqa.sources.jsonl import read_question_texts
    from cpqa.evaluation.evaluations.retrieval import compare as compare_runs
    from cpqa.evaluation.evaluations.retrieval import evaluate, load_questions, missing_gold, table2_for
    from cpqa.options import PipelineOptions
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    names = [n.strip() for item in paths for n in item.split(",") if n.strip()]
    try:
        knobs = dict(_knob(item) for item in option)
        items = load_questions(questions, limit)
        extra_sets = {extra.stem: read_question_texts(extra, table2_limit) for extra in table2_questions}
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    if not settings.store_path.exists():
        fail(
            f"no store in {settings.home}: build it with `cpqa ingest pubmed FILE...` (the corpus of the question set)"
        )
    try:
        options = PipelineOptions.of(**knobs)
    except ValueError as exc:
        fail(str(exc))
    with Pipeline(settings, options) as pipeline:
        if pipeline.store.count() == 0:
            fail(f"the store in {settings.home} is empty: run `cpqa ingest pubmed FILE...` first")
        scores: dict = {}
        try:
            payload = evaluate(items, names, pipeline, progress=None if as_json else typer.echo, per_question=scores)
        except ValueError as exc:
            fail(str(exc))
        pairs = [tuple(c.split(":", 1)) for c in compare if ":" in c]
        payload["significance"] = {
            f"{a} vs {b}": compare_runs(scores, a, b) for a, b in pairs if a in scores and b in scores
        }
        if keep_scores is not None:
            keep_scores.write_text(json.dumps(scores), encoding="utf-8")
        if against is not None:
            payload["against"] = _against(scores, against)
        if "naive-hybrid" in payload:
            payload["naive-hybrid"].pop("table2", None)  # Table II describes HSRDR
        if "HSRDR" in payload:  # Table II per question set
            payload["table2"] = {questions.stem: payload["HSRDR"].pop("table2")}
            for name, texts in extra_sets.items():
                payload["table2"][name] = table2_for(pipeline, texts)
        payload["options"] = pipeline.options.documents.model_dump(mode="json")
        payload["term_backend"] = type(pipeline.boolean.backend).__name__
        payload["vocabulary"] = pipeline.rewriter.vocabulary.source
        payload["questions"] = {"file": str(questions), "n": len(items), "gold_missing": missing_gold(items, pipeline)}
    emit(payload, save, as_json, settings)
    if as_json:
        return
    for name in names:
        row = payload[name]
        typer.echo(f"{name}: " + "  ".join(f"{k}={v}" for k, v in row.items()))
    for key, value in payload.items():
        if key not in names:
            typer.echo(f"{key}: {value}")


def _against(scores: dict, path: Path) -> dict:
    """Each path of this run against the same path in an earlier run's kept scores (paired bootstrap)."""
    from cpqa.evaluation.evaluations.retrieval import compare as compare_runs

    try:
        before = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"{path}: {exc}")
    merged = {**{f"{name} before": runs for name, runs in before.items()}, **scores}
    shared = [name for name in scores if f"{name} before" in merged]
    if any(len(scores[name]) != len(merged[f"{name} before"]) for name in shared):
        fail(f"{path} holds another question set's scores")
    return {f"{name} vs before": compare_runs(merged, name, f"{name} before") for name in shared}


def _knob(item: str) -> tuple[str, object]:
    """``name=value`` with the value read as JSON when it parses (numbers, booleans), else as text."""
    name, sep, value = item.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--option takes name=value, not {item!r}")
    try:
        return name.strip(), json.loads(value)
    except json.JSONDecodeError:
        return name.strip(), value
