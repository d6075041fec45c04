"""The ``cpqa`` command. Command groups live one per module; groups that depend on the product (``ingestion``; the
evaluation's ``eval`` and ``bench``) arrive through the ``cpqa.commands`` entry point, so ``cpqa`` imports none of
them."""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points

import typer

from cpqa.cli.ask import ask
from cpqa.cli.mirror import mirror_app
from cpqa.cli.models import models_app
from cpqa.cli.options import options
from cpqa.cli.serve import mcp, serve

app = typer.Typer(
    help="CPQA: cancer patient question answering grounded in PubMed and PMC.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.command("ask")(ask)
app.command("serve")(serve)
app.command("mcp")(mcp)
app.command("options")(options)
app.add_typer(mirror_app, name="mirror")
app.add_typer(models_app, name="models")

for plugin in entry_points(group="cpqa.commands"):
    app.add_typer(plugin.load(), name=plugin.name)


def main() -> None:
    # Tokenizer worker threads fight typer's progress bars and the two CI cores.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from cpqa.config import get_settings
    from cpqa.cli.common import quiet_libraries
    from cpqa.safety.secrets import install_log_redaction

    install_log_redaction(get_settings())
    quiet_libraries()
    from cpqa.sources.store import StoreDamaged

    try:
        app()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except StoreDamaged as exc:  # any command: one line naming the file and the fix, not a traceback
        typer.echo(f"error: {exc}", err=True)
        code = 1
    _exit_now(code)


def _exit_now(code: int) -> None:
    """Exit as a normal exit does (atexit handlers run: log handlers flush, worker threads join), but skip tearing
    down the interpreter's modules one by one: with torch and transformers loaded that alone takes over a second of
    a one-shot ``cpqa ask``. Every command has closed its stores and files by now; SQLite is crash-safe anyway."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
