"""Helpers shared by the command modules: JSON output and clear errors without tracebacks."""

from __future__ import annotations

import logging

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from cpqa.config import Settings
from cpqa.options import PipelineOptions


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


def fail(message: str, code: int = 2) -> NoReturn:
    """Stop the command with a one-line error on stderr."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


OPTIONS_FILE = typer.Option(
    None, "--options-file", help="A TOML file of pipeline options, one table per section (default: CPQA_OPTIONS_FILE)."
)
OPTION = typer.Option(
    None,
    "--option",
    "-o",
    help="Set one pipeline option by its bare name, e.g. --option years=5 --option top_n=3 (repeat; `cpqa options` "
    "lists them). Applied over the options file.",
)


def pipeline_options(settings: Settings, options_file: Path | None, assignments: list[str] | None) -> PipelineOptions:
    """The command's ``PipelineOptions``: the tuned defaults, the options file, then ``--option`` assignments."""
    from cpqa.options_file import OptionsError, load_options

    try:
        return load_options(options_file or settings.cpqa_options_file, assignments or ())
    except OptionsError as exc:
        fail(str(exc))


def require_extra(extra: str, *modules: str) -> None:
    """Stop with the install command when a command's optional dependencies (``cpqa[extra]``) are missing."""
    from importlib.util import find_spec

    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        fail(f"this command needs the {extra} extra: pip install 'cpqa[{extra}]' (missing: {', '.join(missing)})")


# Libraries that log what they do at INFO: faiss's loader reports each CPU build it does not find ("Could not load
# library with AVX512 support due to: ModuleNotFoundError"), which a person reads as a failure; the others name
# every model load and HTTP request. Their warnings and errors still show.
CHATTY_LIBRARIES = (
    "faiss",
    "sentence_transformers",
    "transformers",
    "huggingface_hub",
    "httpx",
    "httpcore",
    "urllib3",
    "filelock",
    "numexpr",
    "llama_index",
    "anthropic",
    "openai",
    "bm25s",
)


def _warnings_and_up(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


def quiet_libraries() -> None:
    """Keep third-party chatter out of what a person sees (every command; ``cpqa serve`` and ``cpqa mcp`` log their
    own lines at INFO): their loggers at WARNING, and a filter that holds when a library sets its own level again on
    import (bm25s sets DEBUG)."""
    for name in CHATTY_LIBRARIES:
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        if _warnings_and_up not in logger.filters:
            logger.addFilter(_warnings_and_up)
