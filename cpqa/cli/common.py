"""Helpers shared by the command modules: JSON output and clear errors without tracebacks."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from cpqa.config import Settings


def print_json(payload: Any, settings: Settings | None = None) -> None:
    """Print ``payload`` as JSON on stdout, with every configured secret redacted."""
    text = json.dumps(payload, indent=2, default=str, ensure_ascii=False)
    if settings is not None:
        text = settings.redact(text)
    sys.stdout.write(text + "\n")


def fail(message: str, code: int = 2) -> None:
    """Stop the command with a one-line error on stderr."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
