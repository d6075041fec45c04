"""``cpqa eval reliability``: faults injected and survived, bad inputs refused, personal details removed and load
held, through the pipeline over local servers (the mirror, the Anthropic stand-in, a misbehaving proxy)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import fail, print_json


def reliability(
    json_out: bool = typer.Option(False, "--json", help="Print the whole report as JSON."),
    store: Optional[Path] = typer.Option(None, "--store", help="Source store (default: the data home's)."),
    load: bool = typer.Option(True, "--load/--no-load", help="Run the 20-question load test."),
    rate: float = typer.Option(10.0, "--rate", min=0.1, help="E-utilities requests/s allowed in the load test."),
) -> None:
    """Reliability: faults survived, bad input refused, patients' details removed, load held"""
    from cpqa.config import get_settings
    from cpqa.evaluation.evaluations.reliability import TopicMissing
    from cpqa.evaluation.evaluations.reliability_report import run_all

    settings = get_settings()
    source = store or settings.store_path
    if not Path(source).exists():
        fail(f"no store at {source}: ingest the sample first (cpqa ingest pubmed FILE) or pass --store")
    with tempfile.TemporaryDirectory(prefix="cpqa-reliability-") as work:
        try:
            report = run_all(Path(source), Path(work), load=load, rate=rate)
        except TopicMissing as exc:
            fail(str(exc))
    if json_out:
        print_json({"summary": report.summary, **report.model_dump(mode="json")}, settings)
    else:
        typer.echo(report.markdown())
