"""``cpqa ingest ...`` and ``cpqa index ...``, registered through the ``cpqa.commands`` entry point.

Each subcommand lives in the module of what it ingests; this file only wires them up."""

import typer

ingest_app = typer.Typer(help="Load PubMed XML, PMC JATS, MedCPT embedding chunks, MeSH term tables and CMMQA.", no_args_is_help=True)
index_app = typer.Typer(help="Build the semantic-search vector index from the store.", no_args_is_help=True)

# Owners register here with one line each, e.g.:
#   from ingestion.pubmed import ingest_pubmed_command; ingest_app.command("pubmed")(ingest_pubmed_command)
