"""``cpqa bench scale``'s machinery at small sizes: the growth fit, the Boolean queries from real ladders, the
perturbed replication, and the record and Milvus points (the real run uses 100k-1M records, 1M-3M vectors)."""

from __future__ import annotations

import json
import math

import pytest

from cpqa.evaluation.benchmarks.ingestbench import PERTURBED_WORDS, write_replicated
from cpqa.evaluation.benchmarks.scalebench import CannotResume, growth, ladder_queries, run_scale
from cpqa.sources.boolean import parse
from cpqa.sources.ncbi.pubmed_xml import iter_pubmed_records
from conftest import shared


def test_growth_recovers_a_power_law_and_projects_it():
    sizes = [100_000, 300_000, 1_000_000]
    fit = growth(sizes, [2.0 * n**0.5 for n in sizes], target=36_000_000)
    assert fit["exponent"] == 0.5 and fit["per_doubling"] == round(math.sqrt(2), 3) and fit["sizes"] == 3
    assert fit["at_target"] == pytest.approx(2.0 * 6000, rel=1e-3)
    assert growth([1000], [5.0])["exponent"] is None  # one size is no curve
    assert growth([1000, 2000], [None, 3.0])["exponent"] is None  # nor is a missing value


def test_the_boolean_queries_are_the_ladders_of_dev_questions(settings):
    queries = ladder_queries(settings, shared("bioasq", "dev_questions.jsonl"), count=5)
    assert len(queries) >= 5 and len(set(queries)) == len(queries)
    for query in queries:
        parse(query)


def test_copies_are_perturbed_so_postings_differ(tmp_path):
    out = tmp_path / "rep.xml.gz"
    write_replicated(shared("corpus", "pubmed_sample.xml.gz"), 4200, out, perturb=True)
    records = {a.pmid: a for a, _ in iter_pubmed_records(out)}
    original, copy = records["23402"], records["1000023402"]
    assert original.title == copy.title and original.abstract != copy.abstract
    changed = sum(a != b for a, b in zip(original.abstract.split(), copy.abstract.split()))
    assert 0 < changed <= PERTURBED_WORDS


@pytest.mark.slow
def test_a_small_run_measures_each_point_and_saves_as_it_goes(tmp_path, settings):
    saved = tmp_path / "eval" / "scale.json"
    report = run_scale(
        settings,
        shared("corpus", "pubmed_sample.xml.gz"),
        shared("bioasq", "dev_questions.jsonl"),
        record_sizes=[2000, 4000],
        vector_sizes=[],
        milvus_sizes=[2000, 3000],
        rounds=1,
        queries=20,
        workdir=tmp_path,
        save=saved,
    )
    assert json.loads(saved.read_text()) == json.loads(json.dumps(report))
    assert [(p["engine"], p["records"]) for p in report["records"]] == [
        ("fts5", 2000),
        ("fts5", 4000),
        ("tantivy", 2000),
        ("tantivy", 4000),
    ]
    for point in report["records"]:
        assert point["bytes_per_record"] > 1000 and point["records_per_cpu_s"] > 0
        assert 0 < point["esearch_p50_ms"] <= point["esearch_p95_ms"]
        assert point["queries"] == report["boolean_queries"]["ladder_levels"]
    fts5, tantivy = (report["records"][i]["median_hits"] for i in (1, 3))
    assert abs(fts5 - tantivy) <= 0.05 * fts5  # the engines stem differently, and count alike otherwise
    for engine in ("fts5", "tantivy"):
        assert report["records_growth"][engine]["bytes_per_record"]["sizes"] == 2
    for point in report["milvus"]:
        assert point["recall@10"] == 1.0  # milvus-lite searches exactly (FLAT)
        assert point["insert_vectors_per_s"] > 0 and 0 < point["p50_ms"] <= point["p95_ms"]
    assert report["vectors"] == [] and report["vectors_growth"] == {}


def test_the_cli_refuses_tiny_sizes_and_zero_skips_a_part(tmp_path):
    from typer.testing import CliRunner

    from cpqa.evaluation.cli.bench import bench_app

    refused = CliRunner().invoke(bench_app, ["scale", "--records", "500"], env={"CPQA_HOME": str(tmp_path)})
    assert refused.exit_code == 2 and "at least 1,000" in refused.output  # checked before any data is read
    shared("corpus", "pubmed_sample.xml.gz")  # the rest reads the sample and the questions
    skipped = CliRunner().invoke(
        bench_app, ["scale", "--records", "0", "--vectors", "0", "--json"], env={"CPQA_HOME": str(tmp_path)}
    )
    assert skipped.exit_code == 0, skipped.output
    report = json.loads(skipped.stdout[skipped.stdout.index("{") :])
    assert report["records"] == report["vectors"] == report["milvus"] == []


@pytest.mark.slow
def test_a_run_resumes_from_the_points_it_saved(tmp_path, settings):
    sample, questions = shared("corpus", "pubmed_sample.xml.gz"), shared("bioasq", "dev_questions.jsonl")
    first = run_scale(
        settings,
        sample,
        questions,
        record_sizes=[2000],
        vector_sizes=[],
        rounds=1,
        queries=20,
        workdir=tmp_path,
        engines=("tantivy",),
    )
    said: list[str] = []
    saved = tmp_path / "scale.json"
    second = run_scale(
        settings,
        sample,
        questions,
        record_sizes=[2000, 3000],
        vector_sizes=[],
        rounds=1,
        queries=20,
        workdir=tmp_path,
        engines=("tantivy",),
        resume=first,
        say=said.append,
        save=saved,
    )
    assert second["records"][0] == first["records"][0] and second["resumed_points"] == 1
    assert json.loads(saved.read_text()) == json.loads(json.dumps(second))
    third = run_scale(
        settings,
        sample,
        questions,
        record_sizes=[2000, 3000],
        vector_sizes=[],
        rounds=1,
        queries=20,
        workdir=tmp_path,
        engines=("tantivy",),
        resume=second,
        say=said.append,
        save=saved,
    )
    assert third["resumed_points"] == 2 and json.loads(saved.read_text())["records"] == second["records"]
    assert said == ["records: 3,000 (tantivy)"] and second["records"][1]["records"] == 3000
    assert second["records_growth"]["tantivy"]["bytes_per_record"]["sizes"] == 2
    other = {**first, "boolean_queries": {**first["boolean_queries"], "ladder_levels": 1}}
    with pytest.raises(CannotResume, match="other Boolean queries"):
        run_scale(settings, sample, questions, record_sizes=[2000], vector_sizes=[], resume=other)
