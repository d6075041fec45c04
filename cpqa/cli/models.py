"""``cpqa models status|download|import``: the paper's models for an air-gapped site."""

from __future__ import annotations

from pathlib import Path

import typer

from cpqa.cli.common import fail, print_json

models_app = typer.Typer(
    help="The paper's models: what is cached, and moving them to an offline machine.", no_args_is_help=True
)


@models_app.command("status")
def status(json_out: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Which of the paper's models are in the local Hugging Face cache."""
    from cpqa.models.hub_cache import hub_cache_dir, status as cached

    rows = cached()
    if json_out:
        print_json({"cache": str(hub_cache_dir()), "models": rows})
        return
    for row in rows:
        mark = "cached" if row["cached"] else "missing"
        typer.echo(f"{mark:8} {row['model']}  ({', '.join(row['components'])})")
    missing = sum(not row["cached"] for row in rows)
    if missing:
        typer.echo(
            f"{missing} missing: on a connected machine run `cpqa models download DIR`, then "
            "`cpqa models import DIR` here (the offline profile runs meanwhile)"
        )


@models_app.command("download")
def download(dest: Path = typer.Argument(..., help="folder to write the models and their manifest into")) -> None:
    """On a connected machine: the paper's models into DEST, to carry to an offline one."""
    from cpqa.models.encoders import ModelUnavailable
    from cpqa.models.hub_cache import download as fetch

    try:
        for entry in fetch(dest):
            typer.echo(f"{entry['model']} @ {entry['commit'][:12]} -> {dest / entry['folder']}")
    except ModelUnavailable as exc:
        fail(str(exc), code=1)


@models_app.command("import")
def import_(source: Path = typer.Argument(..., help="a folder `cpqa models download` wrote")) -> None:
    """On the offline machine: the models of SOURCE into the local Hugging Face cache."""
    from cpqa.models.hub_cache import import_models

    try:
        for entry in import_models(source):
            typer.echo(f"{entry['model']} -> {entry['snapshot']}")
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc), code=1)
