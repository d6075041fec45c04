"""The persistent passage layer: SEOS nodes and passage vectors stored once, read back by later questions and
processes; the eager build (``cpqa index build --passages``) resumes where it stopped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cpqa.config import get_settings
from cpqa.passages.passage_store import PASSAGES_FILE, PassageStore

QUESTION = "Does tamoxifen reduce the risk of breast cancer recurrence?"
_ASK = """
import json, sys
from cpqa.config import get_settings
from cpqa.pipeline import Pipeline
with Pipeline(get_settings()) as pipeline:
    counts = []
    for question in sys.argv[1:]:
        pipeline.ask(question)
        counts.append(pipeline.segments.segmented)
    print(json.dumps({"segmented": counts, "stored": pipeline.passage_store.stats()}))
"""


@pytest.fixture
def home(indexed_home, tmp_path) -> Path:
    """A writable copy of the indexed sample home (store, vector and BM25 indexes)."""
    target = tmp_path / "home"
    shutil.copytree(indexed_home, target, ignore=shutil.ignore_patterns(PASSAGES_FILE + "*"))
    return target


def _ask(home: Path, *questions: str) -> dict:
    env = {**os.environ, "CPQA_HOME": str(home), "CPQA_PROFILE": "offline", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _ASK, *questions], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two cold processes loading the models
def test_a_record_is_segmented_once_across_questions_and_processes(home):
    first = _ask(home, QUESTION, QUESTION.replace("Does", "Can"))
    segmented_first, segmented_both = first["segmented"]
    assert segmented_first > 0 and first["stored"]["records"] == segmented_both
    assert segmented_both - segmented_first < segmented_first  # the second question reused most records
    again = _ask(home, QUESTION)  # a new process: everything comes from the store
    assert again["segmented"] == [0] and again["stored"]["records"] == first["stored"]["records"]
    assert again["stored"]["vectors"] == first["stored"]["vectors"]  # no passage embedded twice


@pytest.mark.slow  # loads the models twice
def test_an_interrupted_passage_build_resumes(home):
    from cpqa.pipeline import Pipeline
    from ingestion.passage_build import build_passages

    settings = get_settings(cpqa_home=home, cpqa_profile="offline")
    calls = []

    def stop_on_second_batch(n: int) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with Pipeline(settings) as pipeline:
        with pytest.raises(KeyboardInterrupt):
            build_passages(pipeline, limit=40, batch_records=16, progress=stop_on_second_batch)
    with PassageStore(settings.index_dir / PASSAGES_FILE) as store:
        assert store.stats()["records"] == 32  # two batches were written before the stop
    with Pipeline(settings) as pipeline:  # a fresh process's memory: only the store remembers
        resumed = build_passages(pipeline, limit=40, batch_records=16)
        assert resumed.records == 40 and resumed.segmented == 8
        assert 0 < resumed.embedded < resumed.passages  # only the new records' passages were embedded
        again = build_passages(pipeline, limit=40, batch_records=16)
        assert again.segmented == 0 and again.embedded == 0


def test_stored_nodes_and_vectors_round_trip(tmp_path):
    import numpy as np
    from llama_index.core.schema import TextNode

    with PassageStore(tmp_path / "p.sqlite") as store:
        node = TextNode(id_="n1", text="Tamoxifen lowers recurrence.", metadata={"pmid": "1", "start": 0, "end": 28})
        store.put_nodes("k", "1", [node])
        back = store.nodes("k")
        assert back is not None and back[0].text == node.text and back[0].metadata == node.metadata
        assert store.nodes("missing") is None and store.has_segments(["k", "x"]) == {"k"}
        store.put_vectors({"v": np.arange(4, dtype=np.float32)})
        assert store.vectors(["v", "w"])["v"].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert store.stats()["records"] == 1 and store.stats()["vectors"] == 1


def test_passage_bench_builds_replicates_and_times_retrieval(sample_home, monkeypatch, tmp_path):
    """`cpqa bench passages` on a tiny build: rates are positive, the grown store holds the asked records."""
    import json

    from typer.testing import CliRunner

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    monkeypatch.setenv("CPQA_PROFILE", "offline")
    result = CliRunner().invoke(app, ["bench", "passages", "--size", "30", "--size", "60", "--build-records", "6",
                                      "--queries", "2", "--candidates", "5", "--workdir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    build = report["build"]
    assert build["records"] == 6 and build["passages"] >= 6 and build["sentences"] >= build["passages"]
    assert build["records_per_s"] > 0 and build["bytes_per_passage"] > 0
    assert [p["records"] for p in report["scale"]] == [30, 60]
    small, large = report["scale"]
    assert large["store_bytes"] > small["store_bytes"]  # replicas and their vectors really are stored
    assert all(p["retrieval_p95_ms"] >= p["retrieval_p50_ms"] > 0 for p in report["scale"])
    assert list(tmp_path.iterdir()) == []  # temporary stores removed


def test_passage_bench_refuses_bad_sizes(sample_home, monkeypatch):
    from typer.testing import CliRunner

    from cpqa.cli import app

    monkeypatch.setenv("CPQA_HOME", str(sample_home))
    result = CliRunner().invoke(app, ["bench", "passages", "--size", "0"])
    assert result.exit_code != 0 and "--size must be positive" in result.output
