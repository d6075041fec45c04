"""``cpqa bench structure``: the product's rooms, import arrows and one question's path through them (logic in
``cpqa.evaluation.benchmarks.structure``)."""

from __future__ import annotations

import typer

from cpqa.cli.common import print_json

QUESTION = "What are the side effects of tamoxifen?"


def structure(
    question: str = typer.Option(QUESTION, "--question", help="the question whose path is followed"),
    json_out: bool = typer.Option(False, "--json", help="print JSON only"),
) -> None:
    """Rooms (modules), import arrows between packages (upward ones named), and one question's path through the
    product: rooms entered, climbs back up to an earlier stage, returns to a room already left, entries per room."""
    from cpqa.config import get_settings
    from cpqa.evaluation.benchmarks.structure import arrows, question_path
    from cpqa.pipeline import Pipeline

    settings = get_settings()
    with Pipeline(settings) as pipeline:
        path = question_path(pipeline, question)
    print_json({"question": question, "imports": arrows(), "path": path}, settings)
