"""``cpqa mirror serve``: the E-utilities-compatible server over the local store."""

import typer

from cpqa.cli.common import fail

mirror_app = typer.Typer(help="An E-utilities-compatible mirror over the local store.", no_args_is_help=True)


@mirror_app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on."),
    port: int = typer.Option(8700, help="Port to listen on (0 picks a free one)."),
    workers: int = typer.Option(8, min=1, max=64, help="Threads answering requests (one SQLite connection each)."),
    deadline: float = typer.Option(30.0, min=0.1, help="Seconds from a request's first byte to its answer."),
) -> None:
    """Serve esearch.fcgi and efetch.fcgi over the store in CPQA_HOME (uvicorn) until Ctrl-C."""
    from cpqa.config import get_settings
    from cpqa.sources.mirror_server import MirrorServer

    settings = get_settings()
    if not settings.store_path.exists():
        fail(f"no local store at {settings.store_path}; run `cpqa ingest pubmed FILE...` first")
    try:
        server = MirrorServer(settings.store_path, host=host, port=port, workers=workers, deadline=deadline)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    typer.echo(
        f"E-utilities mirror of {settings.store_path} on {server.url} (set CPQA_EUTILS_URL={server.url}); Ctrl-C stops"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
