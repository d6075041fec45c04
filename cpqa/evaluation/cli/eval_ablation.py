"""``cpqa eval ablation``: the answer-quality strategies (issue 10), each measured against the pipeline without it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import fail, print_json


def ablation(
    questions: Optional[Path] = typer.Option(
        None,
        "--questions",
        help="JSONL of {id, question, gold_pmids} (default ../shared/data/pubmedqa/dev_cancer_questions.jsonl)",
    ),
    bench: Optional[Path] = typer.Option(
        None, "--bench", help="chunking benchmark JSONL (default ../shared/data/bench/chunking_dev.jsonl)"
    ),
    consumer_dir: Optional[Path] = typer.Option(
        None,
        "--consumer-dir",
        help="consumer question sets for the adaptive skip rate (default ../shared/data/consumer_questions)",
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N questions of each set"),
    bench_limit: Optional[int] = typer.Option(
        None, "--bench-limit", min=0, help="only the first N benchmark documents (0 skips the context block)"
    ),
    quick: bool = typer.Option(
        False, "--quick", help="a small subset: 20 questions, 3 documents, 3 LLM questions, 5 CMMQA questions"
    ),
    llm: str = typer.Option(
        "standin",
        "--llm",
        help="who plays the language model for HyDE, Claude's adaptive "
        "retrieval and the CMMQA columns: standin (local stand-in), claude (needs "
        "ANTHROPIC_API_KEY) or none",
    ),
    llm_questions: int = typer.Option(20, "--llm-questions", min=1, help="questions per set for the LLM blocks"),
    cmmqa_limit: Optional[int] = typer.Option(
        None,
        "--cmmqa-limit",
        min=0,
        help="CMMQA questions per variant, "
        "round-robin over datasets (0 skips; default: 5 with the stand-in, "
        "all with Claude)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    save: Optional[Path] = typer.Option(
        None,
        "--save",
        help="also write the JSON result here (default for a full "
        "run: $CPQA_HOME/eval/ablation.json, which notebook 06 reads)",
    ),
) -> None:
    """Ablation of the strategy options: retrieval metrics, context coverage, skip rates, CMMQA columns."""
    import json

    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.ablation import CONSUMER_SETS, markdown_tables, run_ablation, shared_data
    from cpqa.sources.jsonl import read_question_texts
    from cpqa.evaluation.evaluations.chunking import load_bench
    from cpqa.evaluation.evaluations.retrieval import load_questions
    from cpqa.sources.store import Store

    settings = get_settings()
    if quick:
        limit, bench_limit, llm_questions = limit or 20, 3 if bench_limit is None else bench_limit, 3
        cmmqa_limit = 5 if cmmqa_limit is None else cmmqa_limit
    if cmmqa_limit is None and llm == "standin":
        cmmqa_limit = 5
    data = shared_data()
    try:
        items = load_questions(questions or data / "pubmedqa" / "dev_cancer_questions.jsonl", limit)
        bench_path = bench or data / "bench" / "chunking_dev.jsonl"
        docs = load_bench(bench_path, bench_limit) if bench_limit != 0 else []
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    folder = consumer_dir or data / "consumer_questions"
    consumer = {
        name: read_question_texts(folder / file, limit)
        for name, file in CONSUMER_SETS.items()
        if (folder / file).is_file()
    }
    if not settings.store_path.exists():
        fail(f"no store in {settings.home}: build it with `cpqa ingest pubmed FILE...` (the corpus of the questions)")
    with Store(settings.store_path) as store:
        if store.count() == 0:
            fail(f"the store in {settings.home} is empty: run `cpqa ingest pubmed FILE...` first")
    try:
        payload = run_ablation(
            settings,
            questions=items,
            bench_docs=docs,
            bench=str(bench_path),
            consumer_sets=consumer,
            llm=llm,
            llm_questions=llm_questions,
            cmmqa_limit=cmmqa_limit,
            progress=None if as_json else lambda m: typer.echo(m, err=True),
        )
    except ValueError as exc:
        fail(str(exc))
    payload["table"] = markdown_tables(payload)
    full = not quick and limit is None and bench_limit is None
    save = save or (settings.eval_dir / "ablation.json" if full else None)
    if save:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    if as_json:
        print_json(payload, settings)
        return
    typer.echo(payload["table"])
    typer.echo("\nWith Claude: " + payload["commands"]["with_claude"])
