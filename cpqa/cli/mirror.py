"""``cpqa mirror serve``: the E-utilities-compatible server over the local store (owner: NCBI helper; being built)."""

import typer

from cpqa.cli.common import fail

mirror_app = typer.Typer(help="An E-utilities-compatible mirror over the local store.", no_args_is_help=True)


@mirror_app.command("serve")
def serve() -> None:
    """Serve esearch.fcgi and efetch.fcgi over the local store."""
    fail("not built yet")
