"""``cpqa serve``: the REST API over one loaded pipeline (FastAPI on uvicorn); ``cpqa mcp``: the MCP server."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from cpqa.cli.common import OPTION, OPTIONS_FILE, fail, pipeline_options, quiet_libraries, require_extra


def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (0.0.0.0 for every one: set a token)."),
    port: int = typer.Option(8800, min=0, max=65535, help="Port to listen on."),
    threads: int = typer.Option(8, "--threads", min=1, help="questions answered at once (worker threads)"),
    options_file: Optional[Path] = OPTIONS_FILE,
    option: Optional[list[str]] = OPTION,
) -> None:
    """Serve POST /v1/ask, POST /v1/search, GET /v1/records/{pmid} and GET /health until Ctrl-C."""
    require_extra("serve", "fastapi", "fastapi_offline")
    import uvicorn

    from cpqa.cli.ask import require_records
    from cpqa.config import get_settings
    from cpqa.pipeline import Pipeline
    from cpqa.safety.secrets import install_log_redaction
    from cpqa.serving.api import create_app

    settings = get_settings()
    install_log_redaction(settings)
    options = pipeline_options(settings, options_file, option)
    require_records(settings)
    if host not in ("127.0.0.1", "localhost", "::1") and settings.cpqa_api_token is None:
        typer.echo(f"warning: serving on {host} without CPQA_API_TOKEN: anyone who reaches it can use it", err=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")  # the access log
    quiet_libraries()
    pipeline = Pipeline(settings, options)
    token = settings.cpqa_api_token.get_secret_value() if settings.cpqa_api_token else None
    app = create_app(
        pipeline,
        token=token,
        rate_per_minute=settings.cpqa_api_rate,
        max_body=settings.cpqa_api_max_body,
        threads=threads,
    )
    typer.echo(f"CPQA API ({pipeline.profile} profile) on http://{host}:{port} (docs: /docs); Ctrl-C stops")
    try:
        uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning", timeout_keep_alive=5)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    finally:
        pipeline.close()


def mcp(
    transport: str = typer.Option(
        "stdio",
        "--transport",
        help="stdio (Claude Desktop, local clients) or http (streamable HTTP at http://HOST:PORT/mcp)",
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP transport: interface to listen on."),
    port: int = typer.Option(8900, min=1, max=65535, help="HTTP transport: port to listen on."),
    options_file: Optional[Path] = OPTIONS_FILE,
    option: Optional[list[str]] = OPTION,
) -> None:
    """Serve CPQA's tools (search_pubmed, get_passages, answer_question) over the Model Context Protocol."""
    require_extra("serve", "mcp", "fastapi")
    from cpqa.cli.ask import require_records
    from cpqa.config import get_settings
    from cpqa.serving.mcp_server import build_server

    if transport not in ("stdio", "http"):
        fail("--transport is stdio or http")
    settings = get_settings()
    options = pipeline_options(settings, options_file, option)
    require_records(settings)
    if transport == "http":
        typer.echo(f"CPQA MCP server on http://{host}:{port}/mcp (streamable HTTP); Ctrl-C stops", err=True)
    server = build_server(settings, options)  # the SDK logs at INFO from here on
    quiet_libraries()
    if transport == "stdio":
        server.run(transport="stdio")
        return
    import uvicorn

    try:  # uvicorn as the SDK runs it, without its access log (each client's address; unreadable once redacted)
        app = server.streamable_http_app(host=host)  # host: its DNS-rebinding protection, as the SDK sets it
        uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning")
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
