"""The ``cpqa`` command. Command groups live one per module; groups from packages that depend on
``cpqa`` (``ingestion``) arrive through the ``cpqa.commands`` entry point, so ``cpqa`` imports none of them."""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import typer

from cpqa.cli.ask import ask
from cpqa.cli.bench import bench_app
from cpqa.cli.eval import eval_app
from cpqa.cli.mirror import mirror_app

app = typer.Typer(help="CPQA: cancer patient question answering grounded in PubMed and PMC.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)
app.command("ask")(ask)
app.add_typer(mirror_app, name="mirror")
app.add_typer(eval_app, name="eval")
app.add_typer(bench_app, name="bench")

for plugin in entry_points(group="cpqa.commands"):
    app.add_typer(plugin.load(), name=plugin.name)


def main() -> None:
    # Tokenizer worker threads fight typer's progress bars and the two CI cores.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from cpqa.config import get_settings
    from cpqa.safety.screening import install_log_redaction

    install_log_redaction(get_settings())
    app()
