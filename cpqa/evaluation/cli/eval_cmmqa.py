"""``cpqa eval cmmqa``: accuracy and macro P/R/F1 on CMMQA per source dataset (the paper's Tables III and V)."""

from __future__ import annotations

from typing import List, Optional

import typer

from cpqa.cli.common import fail, print_json


def cmmqa(
    method: str = typer.Option(
        "full",
        "--method",
        help="baseline1 (LLM + chain of thought, no retrieval), "
        "baseline2 (top-5 documents from semantic search) or full (the pipeline)",
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="evaluate N questions, round-robin over datasets"),
    shuffle: int = typer.Option(
        1, "--shuffle", min=1, help="choice-shuffling self-consistency: K option orders, majority vote"
    ),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, help="concurrent questions (default 4 with Claude, 1 offline)"
    ),
    negatives_from: Optional[List[str]] = typer.Option(
        None,
        "--negatives-from",
        help="saved run (file or method name), repeatable: evaluate only questions all of them got wrong",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Evaluate baseline 1, baseline 2 or the full pipeline on CMMQA (cached per question; resumes)."""
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.cmmqa import (
        METHODS,
        evaluate,
        hard_negatives,
        load_predictions,
        resolve_run,
        save_run,
        select,
    )
    from cpqa.evaluation.data.cmmqa_data import CMMQAMissing, load_cmmqa

    if method not in METHODS:
        fail(f"--method must be one of {', '.join(METHODS)} (got {method!r})")
    settings = get_settings()
    try:
        questions = load_cmmqa(settings)
    except CMMQAMissing as exc:
        fail(str(exc))
    subset = "all"
    if negatives_from:
        try:
            runs = [load_predictions(resolve_run(settings, ref)) for ref in negatives_from]
        except (OSError, ValueError) as exc:
            fail(str(exc))
        keep = hard_negatives(runs)
        questions = [q for q in questions if q.key in keep]
        subset = "negatives"
        if not questions:
            fail("the saved runs share no question that all of them got wrong")
    questions = select(questions, limit)

    def progress(done: int, total: int) -> None:
        if not as_json and (done % 10 == 0 or done == total):
            typer.echo(f"  {done}/{total} answered", err=True)

    try:
        report, results = evaluate(
            settings, method, questions, shuffle=shuffle, workers=workers, subset=subset, progress=progress
        )
    except Exception as exc:  # noqa: BLE001 - setup failures (missing index, store) as one clear line
        fail(settings.redact(f"{type(exc).__name__}: {exc}"))
    save_run(settings, report, results)
    if as_json:
        print_json(report.model_dump(mode="json"), settings)
        return
    _print_table(report)


def _print_table(report) -> None:
    from cpqa.evaluation.data.cmmqa_data import DATASETS

    typer.echo(f"CMMQA {report.method} ({report.subset}) - answerer: {report.answerer}")
    typer.echo(f"{'dataset':<11} {'n':>5} {'acc':>6} {'P':>6} {'R':>6} {'F1':>6}")
    rows = [(DATASETS[d], s) for d, s in report.datasets.items()] + [("average", report.average)]
    for name, s in rows:
        typer.echo(f"{name:<11} {s.n:>5} {s.accuracy:>6.3f} {s.precision:>6.3f} {s.recall:>6.3f} {s.f1:>6.3f}")
    typer.echo(
        f"cached {report.from_cache}, unparsed {report.unparsed}, errors {report.errors}; "
        f"run saved to {report.run_file}"
    )
    if report.cost:
        typer.echo(
            f"tokens in/out {report.cost.input_tokens}/{report.cost.output_tokens}, "
            f"estimated ${report.cost.usd if report.cost.usd is not None else '?'}"
        )
