"""``cpqa ingest ...`` and ``cpqa index ...``, registered through the ``cpqa.commands`` entry point.

Each command lives in the module of what it ingests; this file only wires them up."""

import typer

from ingestion.cmmqa import ingest_cmmqa_command
from ingestion.index_build import index_build_command, index_passages_command
from ingestion.medcpt import ingest_medcpt_command
from ingestion.medquad import ingest_medquad_command
from ingestion.mesh import ingest_mesh_command
from ingestion.pmc import ingest_pmc_command
from ingestion.pubmed import ingest_pubmed_command

ingest_app = typer.Typer(
    help="Load PubMed XML, PMC JATS, MedCPT embedding chunks, MeSH term tables, CMMQA and MedQuAD patient pages.",
    no_args_is_help=True,
)
index_app = typer.Typer(
    help="Build the semantic-search vector index and the passage layer from the store.", no_args_is_help=True
)

ingest_app.command("pubmed")(ingest_pubmed_command)
ingest_app.command("pmc")(ingest_pmc_command)
ingest_app.command("medcpt")(ingest_medcpt_command)
ingest_app.command("mesh")(ingest_mesh_command)
ingest_app.command("cmmqa")(ingest_cmmqa_command)
ingest_app.command("medquad")(ingest_medquad_command)
index_app.command("build")(index_build_command)
index_app.command("passages")(index_passages_command)
