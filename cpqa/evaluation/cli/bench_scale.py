"""``cpqa bench scale``: records, vectors and Milvus measured at several sizes, with fitted growth and the projection
to PubMed (logic in ``cpqa.evaluation.benchmarks.scalebench``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from cpqa.evaluation.cli.bench_ingest import DEFAULT_SAMPLE
from cpqa.cli.common import fail, print_json
from cpqa.sources.text_index import ENGINES, check_engine

DEFAULT_QUESTIONS = DEFAULT_SAMPLE.parents[1] / "bioasq" / "dev_questions.jsonl"


def scale(
    records: list[int] = typer.Option([100_000, 300_000, 1_000_000], "--records", help="store sizes (records)"),
    vectors: list[int] = typer.Option([1_000_000, 3_000_000], "--vectors", help="vector index sizes"),
    milvus: list[int] = typer.Option([], "--milvus", help="Milvus (milvus-lite) sizes; none by default"),
    engines: list[str] = typer.Option(
        list(ENGINES), "--engine", help="the store's search engines measured (each record size in each)"
    ),
    sample: Path = typer.Option(DEFAULT_SAMPLE, help="PubMed XML sample to replicate"),
    questions: Path = typer.Option(DEFAULT_QUESTIONS, help="JSONL questions whose rule-based ladders are the queries"),
    rounds: int = typer.Option(3, min=1, help="timed passes over the Boolean queries"),
    queries: int = typer.Option(300, min=10, help="vector queries for recall@10"),
    threads: int = typer.Option(2, min=1, help="FAISS threads"),
    workdir: Path = typer.Option(None, help="where the temporary stores and indexes go (default: system temp)"),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="keep the points the saved report already holds (a run cut short goes on where it stopped)",
    ),
    json_out: bool = typer.Option(False, "--json", help="print JSON (always JSON; kept for symmetry)"),
) -> None:
    """Scale benchmark: each measure at each size, its growth exponent and its value projected to 36M. The report is
    also saved, point by point, to $CPQA_HOME/eval/scale.json (the scale notebook plots it)."""
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.scalebench import SAVED, CannotResume, run_scale

    try:
        engines = [check_engine(engine) for engine in dict.fromkeys(engines)]
    except ValueError as exc:
        fail(str(exc))
    if any(0 < n < 1000 or n < 0 for n in [*records, *vectors, *milvus]):
        fail("every size must be at least 1,000 (0 skips that part: --records 0 measures no records)")
    records, vectors, milvus = ([n for n in sizes if n] for sizes in (records, vectors, milvus))
    for path, what in ((sample, "sample"), (questions, "questions")):
        if not path.is_file():
            fail(f"{what} not found: {path} (pass --{what})")
    settings = get_settings()
    saved = settings.eval_dir / SAVED
    previous = None
    if resume and saved.exists():
        try:
            previous = json.loads(saved.read_text(encoding="utf-8"))
        except ValueError as exc:
            fail(f"cannot resume: {saved} is not a saved report ({exc})")
    try:
        report = run_scale(
            settings,
            sample,
            questions,
            sorted(records),
            sorted(vectors),
            sorted(milvus),
            rounds,
            queries,
            threads,
            workdir,
            save=saved,
            engines=engines,
            resume=previous,
            say=lambda message: typer.echo(f"{message} (results so far: {saved})", err=True),
        )
    except CannotResume as exc:
        fail(f"cannot resume from {saved}: {exc}")
    print_json(report, settings)
