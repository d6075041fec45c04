"""``cpqa bench latency``: per-stage and end-to-end latency of the pipeline over a question set.

The questions (one or more files, interleaved) are split in two halves asked of one loaded pipeline: cold, the
first half, with empty in-process caches (the persistent passage store is what it is on disk), then warm, the other
half, after the cold questions were answered: warm means other questions answered before, never the same question
repeated. End to end excludes the language model: stages a language model served (rewrite, answer) are subtracted
from the total when an Anthropic key is configured; offline there is none to subtract. Also reported: the time from
``ask`` to the screening result (the urgent-care message), and with ``--one-shot`` the wall time of one
``cpqa ask`` process, model loading included.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from cpqa.cli.common import fail, print_json

LLM_STAGES = ("rewrite", "answer")


def percentiles(values: list[float]) -> dict[str, float]:
    import numpy as np

    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0}
    return {"p50_ms": round(float(np.percentile(values, 50)), 1), "p95_ms": round(float(np.percentile(values, 95)), 1)}


def run_pass(pipeline, questions: list[str], exclude: tuple[str, ...]) -> dict:
    """Ask every question once; timings per stage, end to end without ``exclude``, time to the screening result,
    NCBI requests."""
    import time

    stages: dict[str, list[float]] = {}
    end_to_end: list[float] = []
    screening: list[float] = []
    requests: list[int] = []
    for question in questions:
        started = time.perf_counter()

        def on_progress(event, _started=started) -> None:
            if event.stage == "screened":
                screening.append((time.perf_counter() - _started) * 1000.0)

        trace = pipeline.ask(question, progress=on_progress).trace
        for name, record in trace.stages.items():
            stages.setdefault(name, []).append(record.ms)
        total = trace.stages["total"].ms - sum(trace.stages[s].ms for s in exclude if s in trace.stages)
        end_to_end.append(total)
        requests.append(trace.ncbi_requests)
    return {"stages": {name: percentiles(ms) for name, ms in sorted(stages.items())},
            "end_to_end": percentiles(end_to_end), "to_screening": percentiles(screening),
            "ncbi_requests": sum(requests) / max(1, len(requests))}


def interleave(files: list[Path], limit: int | None) -> list[str]:
    """The first ``limit`` questions of each file, alternating between the files."""
    from itertools import chain, zip_longest

    from cpqa.evaluation.jsonl import read_question_texts

    lists = [read_question_texts(path, limit) for path in files]
    return [q for q in chain.from_iterable(zip_longest(*lists)) if q is not None]


def one_shot_seconds(question: str) -> float:
    """Wall time of one ``cpqa ask`` process (imports, model loading, the question), as a user meets it."""
    import subprocess
    import sys
    import time

    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "cpqa.cli", "ask", question, "--json"], capture_output=True,
                          text=True, env={**os.environ, "CPQA_PROFILE": "offline"})
    if done.returncode != 0:
        raise RuntimeError(f"cpqa ask failed: {done.stderr[-500:]}")
    return round(time.perf_counter() - started, 2)


def latency(
    questions: List[Path] = typer.Option(..., "--questions", exists=True, dir_okay=False,
                                         help="JSONL with a 'question' field per line (repeat for several files)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Use the first N questions of each file."),
    one_shot: bool = typer.Option(False, "--one-shot", help="Also time one `cpqa ask` process end to end."),
    eutils_url: Optional[str] = typer.Option(None, "--eutils-url", help="E-utilities base URL, e.g. a "
                                             "`cpqa mirror serve` (default: CPQA_EUTILS_URL)."),
    mirror: bool = typer.Option(False, "--mirror", help="Serve the local store through an in-process mirror "
                                "(no rate limit unless CPQA_EUTILS_RATE is set) and count the requests."),
    profile: str = typer.Option("offline", "--profile", help="Model profile: offline (default), auto or paper."),
) -> None:
    """Per-stage latency benchmark"""
    if eutils_url and mirror:
        fail("give --eutils-url or --mirror, not both")
    try:
        items = interleave(list(questions), limit)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    if len(items) < 2:
        fail("give at least two questions: half are asked cold, the other half warm")
    import time
    from contextlib import ExitStack

    from cpqa.config import get_settings
    from cpqa.pipeline import Pipeline
    from cpqa.sources.store import Store

    overrides: dict = {"cpqa_profile": profile}
    if eutils_url:
        overrides["cpqa_eutils_url"] = eutils_url
    settings = get_settings(**overrides)
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
        started = time.perf_counter()
        pipeline = stack.enter_context(Pipeline(settings))
        load_ms = (time.perf_counter() - started) * 1000.0
        exclude = LLM_STAGES if pipeline.llm.available else ()
        cold = run_pass(pipeline, items[0::2], exclude)
        warm = run_pass(pipeline, items[1::2], exclude)
    payload = {
        "stages": warm["stages"],
        "stages_cold": cold["stages"],
        "end_to_end": {"warm": warm["end_to_end"], "cold": cold["end_to_end"]},
        "ncbi_requests_per_question": cold["ncbi_requests"],
        "ncbi_requests_per_question_warm": warm["ncbi_requests"],
        "to_screening": {"warm": warm["to_screening"], "cold": cold["to_screening"]},
        "n": len(items),
        "load_ms": round(load_ms, 1),
        "excluded_stages": list(exclude),
        "profile": pipeline.profile,
        "models": {name: choice.model for name, choice in pipeline.models.items()},
        "eutils_url": settings.cpqa_eutils_url,
        "eutils_rate_per_s": settings.ncbi_rate_limit or "unlimited",
        "cpu_cores": os.cpu_count(),
    }
    if one_shot:
        payload["one_shot_ask_s"] = one_shot_seconds(items[0])
    if json_out:
        print_json(payload, settings)
        return
    typer.echo(f"{len(items)} questions, profile {payload['profile']}, models loaded in {load_ms:.0f} ms")
    typer.echo(f"{'stage':<20}{'cold p50':>10}{'cold p95':>10}{'warm p50':>10}{'warm p95':>10}")
    for name, warm_stats in warm["stages"].items():
        cold_stats = cold["stages"].get(name, {"p50_ms": 0.0, "p95_ms": 0.0})
        typer.echo(f"{name:<20}{cold_stats['p50_ms']:>10.0f}{cold_stats['p95_ms']:>10.0f}"
                   f"{warm_stats['p50_ms']:>10.0f}{warm_stats['p95_ms']:>10.0f}")
    typer.echo(f"NCBI requests per question: {payload['ncbi_requests_per_question']:.1f}")
