"""Helpers shared by the command modules: JSON output and clear errors without tracebacks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from cpqa.config import Settings


def print_json(payload: Any, settings: Settings | None = None) -> None:
    """Print ``payload`` as JSON on stdout, with every configured secret redacted."""
    text = json.dumps(payload, indent=2, default=str, ensure_ascii=False)
    if settings is not None:
        text = settings.redact(text)
    sys.stdout.write(text + "\n")


def emit(payload: Any, save: Path | None, as_json: bool, settings: Settings) -> None:
    """An evaluation's result: written to ``save`` (when given) and printed as JSON (with ``as_json``)."""
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    if as_json:
        print_json(payload, settings)


def fail(message: str, code: int = 2) -> None:
    """Stop the command with a one-line error on stderr."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
