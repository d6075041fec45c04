"""``cpqa options``: every pipeline option with its section, value and meaning, as a deployment would set it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import OPTION, OPTIONS_FILE, pipeline_options, print_json


def options(
    options_file: Optional[Path] = OPTIONS_FILE,
    option: Optional[list[str]] = OPTION,
    json_out: bool = typer.Option(False, "--json", help="The whole options tree as JSON (a trace records the same)."),
) -> None:
    """List the pipeline options: the tuned defaults, with an options file and --option assignments applied."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from cpqa.config import get_settings
    from cpqa.options import PipelineOptions

    settings = get_settings()
    chosen = pipeline_options(settings, options_file, option)
    if json_out:
        print_json(chosen.model_dump(mode="json"))
        return
    defaults = PipelineOptions().flat()
    fixed = set(chosen.load_time())
    table = Table(title="Pipeline options (set: --option name=value, or a TOML file with one table per section)")
    for column in ("section", "option", "value", "meaning"):
        table.add_column(column, overflow="fold")
    for section, field in PipelineOptions.model_fields.items():
        values = getattr(chosen, section)
        for name, knob in type(values).model_fields.items():
            value = getattr(values, name)
            shown = escape(repr(value)) + ("" if value == defaults[name] else " [bold](set)[/]")
            note = " (fixed when the pipeline loads)" if name in fixed else ""
            table.add_row(section, name, shown, escape((knob.description or "") + note))
    Console().print(table)
