"""``cpqa bench ingest`` on a small replication of the sample (the real run uses 100,000 records)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cpqa.sources.boolean import parse
from cpqa.evaluation.benchmarks.ingestbench import benchmark_queries, write_replicated
from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from tests.conftest import shared


def test_replication_rewrites_pmids(tmp_path):
    out = tmp_path / "rep.xml.gz"
    written, copies = write_replicated(shared("corpus", "pubmed_sample.xml.gz"), 4200, out)
    assert (written, copies) == (4200, 2)
    records = list(iter_pubmed_records(out))
    pmids = [a.pmid for a, _ in records]
    assert len(pmids) == 4200 and len(set(pmids)) == 4200
    assert "23402" in pmids and "1000023402" in pmids
    copy = next(raw for a, raw in records if a.pmid == "1000023402")
    assert b'<ArticleId IdType="pubmed">1000023402</ArticleId>' in copy


def test_benchmark_queries_parse():
    queries = benchmark_queries()
    assert len(queries) >= 50
    for q in queries:
        parse(q)


@pytest.mark.slow
def test_bench_ingest_cli_prints_json(tmp_path):
    from cpqa.evaluation.cli.bench import bench_app

    sample = shared("corpus", "pubmed_sample.xml.gz")
    result = CliRunner().invoke(
        bench_app,
        ["ingest", "--records", "5000", "--rounds", "1", "--sample", str(sample), "--workdir", str(tmp_path), "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["records"] == 5000 and payload["copies"] == 2
    assert payload["records_per_s"] > 0 and 1000 < payload["bytes_per_record"] < 20000
    assert 0 < payload["esearch_p50_ms"] <= payload["esearch_p95_ms"] and payload["median_hits"] > 0
    assert list(tmp_path.iterdir()) == []  # the temporary input and store are gone
