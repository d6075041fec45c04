"""``cpqa eval fusion``: the HSRDR tuning sweep on a tuning split (``cpqa.evaluation.evaluations.fusion_sweep``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import fail, print_json


def fusion(
    questions: Path = typer.Option(..., "--questions", help="JSONL of {id, question, gold_pmids}"),
    tune: int = typer.Option(400, "--tune", min=1, help="questions drawn (seeded) for tuning"),
    exclude: Optional[Path] = typer.Option(None, "--exclude", help="JSONL of questions never tuned on (their ids)"),
    seed: int = typer.Option(13, "--seed"),
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result to this file"),
) -> None:
    """Sweep E2 rankings and fusion settings on a seeded tuning split; prints JSON (best setting included)."""
    import json

    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.fusion_sweep import split, sweep
    from cpqa.evaluation.evaluations.retrieval import load_questions
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    try:
        items = load_questions(questions)
        never = {q.id for q in load_questions(exclude)} if exclude else set()
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    tuning, held_out = split(items, tune, seed, never)
    with Pipeline(settings) as pipeline:
        if pipeline.store.count() == 0:
            fail(f"the store in {settings.home} is empty: run `cpqa ingest pubmed FILE...` first")
        payload = sweep(tuning, pipeline, progress=lambda message: typer.echo(message, err=True))
    payload["tuning_ids"] = [q.id for q in tuning]
    payload["held_out"] = len(held_out)
    if save:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    print_json(payload, settings)
