"""``cpqa bench latency``: what a user waits for, per stage and end to end, over a question set.

Three passes over the same questions (one or more files, interleaved), each through its own loaded pipeline after
one warm-up question, so no pass reads another's in-memory caches:
1. **first sight** (the headline): an empty passage store, so every record a question reaches is met for the first
   time, as after ``./setup.sh --no-data`` or with records fetched live from NCBI;
2. **stored passages**: the same questions over the passage store the first pass filled (every record they reach is
   stored), as after ``cpqa index build``;
3. **naive**: the naive RAG pipeline on the same questions (top-5 abstracts by BM25 + dense RRF, their top-3
   sentences by embedding similarity; ``cpqa.evaluation.evaluations.answers.naive_answer``), for the ratio.
End to end excludes the language model (stages a language model served are subtracted when one is configured;
offline there is none). Also reported: the time from ``ask`` to the screening result (the urgent-care message),
records segmented and sentences embedded per question, and with ``--one-shot`` the wall time of one ``cpqa ask``
process, model loading included.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import typer

from cpqa.cli.common import OPTION, fail, pipeline_options, print_json

LLM_STAGES = ("rewrite", "answer")
WARM_UP = "What is cancer?"


def percentiles(values: list[float]) -> dict[str, float]:
    import numpy as np

    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0}
    return {"p50_ms": round(float(np.percentile(values, 50)), 1), "p95_ms": round(float(np.percentile(values, 95)), 1)}


def run_pass(pipeline, questions: list[str], exclude: tuple[str, ...]) -> dict:
    """Ask every question once; timings per stage, end to end without ``exclude``, time to the screening result,
    records segmented and sentences embedded per question, NCBI requests."""
    stages: dict[str, list[float]] = {}
    end_to_end: list[float] = []
    screening: list[float] = []
    counts = {"ncbi_requests": 0.0, "segmented": 0.0, "sentences_embedded": 0.0}
    for question in questions:
        started = time.perf_counter()

        def on_progress(event, _started=started) -> None:
            if event.stage == "screened":
                screening.append((time.perf_counter() - _started) * 1000.0)

        trace = pipeline.ask(question, progress=on_progress).trace
        for name, record in trace.stages.items():
            stages.setdefault(name, []).append(record.ms)
        end_to_end.append(trace.stages["total"].ms - sum(trace.stages[s].ms for s in exclude if s in trace.stages))
        counts["ncbi_requests"] += trace.ncbi_requests
        segmentation = trace.stages.get("segmentation")
        for key in ("segmented", "sentences_embedded"):
            counts[key] += segmentation.info.get(key, 0) if segmentation else 0
    n = max(1, len(questions))
    return {
        "end_to_end": percentiles(end_to_end),
        "to_screening": percentiles(screening),
        "stages": {name: percentiles(ms) for name, ms in sorted(stages.items())},
        **{f"{key}_per_question": round(value / n, 2) for key, value in counts.items()},
    }


def naive_pass(pipeline, questions: list[str]) -> dict:
    from cpqa.evaluation.evaluations.answers import naive_answer

    times = []
    for question in questions:
        started = time.perf_counter()
        naive_answer(pipeline, question)
        times.append((time.perf_counter() - started) * 1000.0)
    return {"end_to_end": percentiles(times)}


def interleave(files: list[Path], limit: int | None) -> list[str]:
    """The first ``limit`` questions of each file, alternating between the files."""
    from itertools import chain, zip_longest

    from cpqa.sources.jsonl import read_question_texts

    lists = [read_question_texts(path, limit) for path in files]
    return [q for q in chain.from_iterable(zip_longest(*lists)) if q is not None]


def one_shot_seconds(question: str) -> float:
    """Wall time of one ``cpqa ask`` process (imports, model loading, the question), as a user meets it."""
    import subprocess
    import sys

    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cpqa.cli", "ask", question, "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "CPQA_PROFILE": "offline"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"cpqa ask failed: {done.stderr[-500:]}")
    return round(time.perf_counter() - started, 2)


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def latency(
    questions: List[Path] = typer.Option(
        ...,
        "--questions",
        exists=True,
        dir_okay=False,
        help="JSONL with a 'question' field per line (repeat for several files).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Use the first N questions of each file."),
    one_shot: bool = typer.Option(False, "--one-shot", help="Also time one `cpqa ask` process end to end."),
    eutils_url: Optional[str] = typer.Option(
        None, "--eutils-url", help="E-utilities base URL, e.g. a `cpqa mirror serve` (default: CPQA_EUTILS_URL)."
    ),
    mirror: bool = typer.Option(
        False,
        "--mirror",
        help="Serve the local store through an in-process mirror "
        "(no rate limit unless CPQA_EUTILS_RATE is set) and count the requests.",
    ),
    profile: str = typer.Option("offline", "--profile", help="Model profile: offline (default), auto or paper."),
    device: Optional[str] = typer.Option(
        None, "--device", help="where the encoders run: cpu, cuda, cuda:N, mps or auto (default CPQA_DEVICE, else cpu)"
    ),
    random_paper_models: bool = typer.Option(
        False,
        "--random-paper-models",
        help="the paper profile's cost: "
        "random-weight models of its full architectures over a copy of the "
        "data home (timings only)",
    ),
    models_cache: Optional[Path] = typer.Option(
        None,
        "--models-cache",
        help="with --random-paper-models: keep the built models in this hub cache folder and reuse them",
    ),
    option: Optional[list[str]] = OPTION,
) -> None:
    """Per-stage latency: first sight (empty passage store), stored passages, and the naive pipeline."""
    if eutils_url and mirror:
        fail("give --eutils-url or --mirror, not both")
    try:
        items = interleave(list(questions), limit)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    if not items:
        fail("the question files hold no questions")
    if random_paper_models:
        from cpqa.evaluation.benchmarks.paper_cost import paper_latency

        if mirror or eutils_url:
            fail(
                "--random-paper-models searches the data home's store through an in-process mirror: drop --mirror "
                "and --eutils-url"
            )
        try:
            report(paper_latency(questions, limit, models_cache, device), json_out)
        except RuntimeError as exc:
            fail(str(exc))
        return
    from contextlib import ExitStack

    from cpqa.config import get_settings
    from cpqa.models.encoders import ModelUnavailable
    from cpqa.pipeline import Pipeline
    from cpqa.sources.store import Store

    overrides: dict = {"cpqa_profile": profile, **({"cpqa_device": device} if device else {})}
    if eutils_url:
        overrides["cpqa_eutils_url"] = eutils_url
    settings = get_settings(**overrides)
    options = pipeline_options(settings, None, option)  # a variant of the product (e.g. rerank_records=25)
    with Store(settings.store_path) as store:
        if store.count() == 0:
            fail(f"the local store is empty ({settings.store_path}); ingest records first (cpqa ingest pubmed FILE)")
    with ExitStack() as stack:
        if mirror:
            from cpqa.sources.mirror_server import MirrorServer

            server = stack.enter_context(MirrorServer(settings.store_path))
            overrides["cpqa_eutils_url"] = server.url
            if settings.cpqa_eutils_rate is None:  # NCBI's 3/s limit is NCBI's policy, not a local mirror's
                overrides["cpqa_eutils_rate"] = 0
            settings = get_settings(**overrides)
        passages = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "passages.sqlite"

        def loaded() -> tuple[Pipeline, float]:
            started = time.perf_counter()
            try:
                pipeline = stack.enter_context(Pipeline(settings, options, passages_path=passages))
            except ModelUnavailable as exc:
                fail(str(exc))
            pipeline.ask(WARM_UP)
            return pipeline, (time.perf_counter() - started) * 1000.0

        first, load_ms = loaded()
        exclude = LLM_STAGES if first.llm.available else ()
        first_sight = run_pass(first, items, exclude)
        stored = run_pass(loaded()[0], items, exclude)
        naive = naive_pass(loaded()[0], items)
    payload = {
        "first_sight": first_sight,
        "stored_passages": stored,
        "naive": naive,
        "ratio_to_naive": {
            f"{name}_{p}": ratio(run["end_to_end"][f"{p}_ms"], naive["end_to_end"][f"{p}_ms"])
            for name, run in (("first_sight", first_sight), ("stored_passages", stored))
            for p in ("p50", "p95")
        },
        "n": len(items),
        "options": option or [],
        "load_ms": round(load_ms, 1),
        "excluded_stages": list(exclude),
        "profile": first.profile,
        "models": {name: choice.model for name, choice in first.models.items()},
        "runtime": {name: choice.runtime for name, choice in first.models.items() if choice.runtime},
        "eutils_url": settings.cpqa_eutils_url,
        "eutils_rate_per_s": settings.ncbi_rate_limit or "unlimited",
        "cpu_cores": os.cpu_count(),
    }
    if one_shot:
        payload["one_shot_ask_s"] = one_shot_seconds(items[0])
    report(payload, json_out)


def report(payload: dict, json_out: bool) -> None:
    """The bench's JSON, or its tables."""
    if json_out:
        from cpqa.config import get_settings

        print_json(payload, get_settings())
        return
    first_sight, stored, naive = payload["first_sight"], payload["stored_passages"], payload["naive"]
    typer.echo(f"{payload['n']} questions, profile {payload['profile']}, models loaded in {payload['load_ms']:.0f} ms")
    typer.echo(f"{'end to end':<22}{'p50 ms':>10}{'p95 ms':>10}{'x naive p95':>13}")
    for label, run in (("first sight", first_sight), ("stored passages", stored), ("naive top-5 abstracts", naive)):
        e2e = run["end_to_end"]
        typer.echo(
            f"{label:<22}{e2e['p50_ms']:>10.0f}{e2e['p95_ms']:>10.0f}"
            f"{ratio(e2e['p95_ms'], naive['end_to_end']['p95_ms']) or 0:>13.2f}"
        )
    typer.echo(f"{'stage':<22}{'first p50':>10}{'first p95':>10}{'stored p50':>11}{'stored p95':>11}")
    for name, first_stats in first_sight["stages"].items():
        stored_stats = stored["stages"].get(name, {"p50_ms": 0.0, "p95_ms": 0.0})
        typer.echo(
            f"{name:<22}{first_stats['p50_ms']:>10.0f}{first_stats['p95_ms']:>10.0f}"
            f"{stored_stats['p50_ms']:>11.0f}{stored_stats['p95_ms']:>11.0f}"
        )
    typer.echo(
        f"first sight: {first_sight['segmented_per_question']} records segmented, "
        f"{first_sight['sentences_embedded_per_question']} sentences embedded per question"
    )
