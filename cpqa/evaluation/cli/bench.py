"""``cpqa bench``: speed and memory benchmarks that print JSON. One module per benchmark."""

import typer

from cpqa.evaluation.cli.bench_index import index
from cpqa.evaluation.cli.bench_ingest import ingest
from cpqa.evaluation.cli.bench_latency import latency
from cpqa.evaluation.cli.bench_mirror import mirror
from cpqa.evaluation.cli.bench_passages import passages
from cpqa.evaluation.cli.bench_scale import scale
from cpqa.evaluation.cli.bench_structure import structure

bench_app = typer.Typer(
    help="Benchmarks: ingestion, vector index scale, passage layer, pipeline latency, mirror load, scale, structure.",
    no_args_is_help=True,
)
bench_app.command("ingest")(ingest)
bench_app.command("index")(index)
bench_app.command("latency")(latency)
bench_app.command("passages")(passages)
bench_app.command("mirror")(mirror)
bench_app.command("scale")(scale)
bench_app.command("structure")(structure)
