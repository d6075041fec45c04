"""Vector index (FAISS flat / IVF-PQ + re-scoring / Milvus), MedCPT chunk ingestion, index build, semantic search,
and the index benchmark at a small size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cpqa.models.encoders import MEDCPT_ARTICLE, TRAINED
from cpqa.evaluation.benchmarks.indexbench import BenchConfig, Generator
from cpqa.types import AbstractSection, Article
from cpqa.documents.vector_index import IndexMeta, IndexMissing
from cpqa.documents.vectorstore import FLAT_FILE, FaissIndex, FlatFile, build_ivfpq, load_flat, open_index, read_ids
from tests.conftest import shared


def _vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32)


@pytest.fixture
def medcpt_dir(tmp_path):
    """NCBI's chunk layout: the shared PMID list and records (linked, not copied) plus our own embeds array."""
    src = shared("corpus", "medcpt_format")
    folder = tmp_path / "medcpt"
    folder.mkdir()
    for name in ("pmids_chunk_0.json", "pubmed_chunk_0.json"):
        (folder / name).symlink_to(src / name)
    pmids = json.loads((src / "pmids_chunk_0.json").read_text())
    # clustered like real embeddings (isotropic noise has no neighbourhoods for IVF to find)
    np.save(folder / "embeds_chunk_0.npy", Generator(BenchConfig(clusters=40)).sample(len(pmids)))
    return folder, pmids


def test_flat_file_streams_appends_and_reloads_mmapped(tmp_path):
    x = _vectors(300, 16)
    writer = FlatFile(tmp_path, 16)
    writer.append(np.arange(100, 250, dtype=np.int64), x[:150])
    writer.close()
    # a crash mid-append leaves a partial row and an id without its vector: reopening trims both
    with open(tmp_path / FLAT_FILE, "ab") as fh:
        fh.write(b"\x00" * 10)
    with open(tmp_path / "ids.i64", "ab") as fh:
        fh.write(np.int64(999).tobytes())
    writer = FlatFile(tmp_path, 16)
    assert writer.count == 150
    writer.append(np.arange(250, 400, dtype=np.int64), x[150:])
    writer.close()
    index = load_flat(tmp_path)
    assert index.ntotal == 300
    assert list(read_ids(tmp_path)) == list(range(100, 400))
    _, rows = index.search(x[[0, 299]], 1)
    assert rows[:, 0].tolist() == [0, 299]


def test_open_index_refuses_other_encoder_and_bad_input(settings):
    with open_index(settings, create=IndexMeta(model="a", dim=8, normalize=True)) as index:
        with pytest.raises(ValueError, match="shape"):
            index.add(["1"], np.zeros((1, 9), dtype=np.float32))
        with pytest.raises(ValueError, match="numeric PMIDs"):
            index.add(["PMC1"], np.zeros((1, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="built by a"):
        open_index(settings, create=IndexMeta(model="b", dim=8, normalize=True))
    with pytest.raises(IndexMissing):
        open_index(settings, directory=settings.home / "nowhere")


def test_ingest_medcpt_chunks_flat_then_resume(settings, medcpt_dir):
    from cpqa.sources.store import Store
    from ingestion.medcpt import ingest_medcpt

    folder, pmids = medcpt_dir
    with Store(settings.store_path) as store:
        summary = ingest_medcpt(settings, folder, store=store, slice_rows=1000)
        assert (summary.chunks, summary.vectors_added, summary.records_added) == (1, len(pmids), len(pmids))
        article = store.get(pmids[0])
        assert article.title.startswith("Glucose 6-phosphate") and article.has_abstract
        again = ingest_medcpt(settings, folder, store=store, slice_rows=1000)
        assert (again.vectors_added, again.vectors_skipped, again.records_kept) == (0, len(pmids), len(pmids))
    index = open_index(settings)
    assert (index.meta.model, index.meta.dim, len(index)) == (MEDCPT_ARTICLE, 768, len(pmids))
    embeds = np.load(folder / "embeds_chunk_0.npy", mmap_mode="r")
    hits = index.search(np.asarray(embeds[[5, 4000]]), 3)
    assert [h[0][0] for h in hits] == [pmids[5], pmids[4000]]


def test_ingest_medcpt_ivfpq_rescoring_recall(settings, medcpt_dir):
    from ingestion.medcpt import ingest_medcpt

    folder, pmids = medcpt_dir
    summary = ingest_medcpt(settings, folder, index_kind="ivfpq", m=32, nprobe=32, k_factor=24)
    assert summary.index_kind == "ivfpq"
    index = open_index(settings)
    assert index.meta.kind == "ivfpq" and index.meta.ivfpq["m"] == 32
    embeds = np.load(folder / "embeds_chunk_0.npy", mmap_mode="r")
    queries = np.asarray(embeds[:50]) + 0.05 * _vectors(50, 768, seed=1)
    exact = load_flat(settings.index_dir).search(queries, 10)[1]
    found = index.search(queries, 10)
    ids = read_ids(settings.index_dir)
    recall = np.mean([len({str(ids[r]) for r in row} & {p for p, _ in hits}) / 10 for row, hits in zip(exact, found)])
    assert recall >= 0.9
    # the re-scored scores are exact inner products
    assert found[0][0][1] == pytest.approx(float(np.asarray(embeds[0]) @ queries[0]), rel=1e-4)


def test_semantic_search_refuses_other_encoder_family(settings, medcpt_dir):
    from cpqa.documents.semantic import EncoderMismatch, SemanticSearch
    from ingestion.medcpt import ingest_medcpt

    ingest_medcpt(settings, medcpt_dir[0])
    with pytest.raises(EncoderMismatch, match="MedCPT-Article-Encoder"):
        SemanticSearch(settings).search("breast cancer screening")


def test_semantic_search_index_missing(settings):
    from cpqa.documents.semantic import SemanticSearch

    with pytest.raises(IndexMissing, match="cpqa index build"):
        SemanticSearch(settings).search("anything")


def _articles() -> list[Article]:
    texts = {
        "101": ("Metformin and survival in breast cancer", "Metformin use was associated with better survival."),
        "102": ("Tomato cultivation in greenhouses", "Irrigation schedules change tomato yield."),
        "103": ("Statins after myocardial infarction", "Statin therapy lowers recurrent cardiac events."),
        "104": ("", ""),
    }
    return [
        Article(pmid=p, title=t, abstract_sections=[AbstractSection(text=a)] if a else [])
        for p, (t, a) in texts.items()
    ]


def test_index_build_reload_and_resume(settings):
    from cpqa.documents.semantic import SemanticSearch
    from cpqa.sources.store import Store
    from ingestion.index_build import build_index

    with Store(settings.store_path) as store:
        store.upsert([(a, None) for a in _articles()])
        summary = build_index(settings, store, flush_every=2)
        assert (summary.model, summary.embedded, summary.skipped_empty) == (TRAINED, 3, 1)  # the offline default
        again = build_index(settings, store)
        assert (again.embedded, again.skipped_present, again.total_in_index) == (0, 3, 3)
    index = open_index(settings)
    assert isinstance(index, FaissIndex) and index.meta.normalize
    hits = SemanticSearch(settings).search("does metformin help women with breast cancer live longer", k=3)
    assert hits[0][0] == "101" and hits[0][1] > hits[1][1]


def test_an_index_an_earlier_trained_encoder_built_is_built_again(settings):
    from cpqa.documents.vector_index import IndexMeta
    from cpqa.sources.store import Store
    from ingestion.index_build import build_index

    earlier = "cpqa-biomed-minilm (an earlier revision)"
    with Store(settings.store_path) as store:
        store.upsert([(a, None) for a in _articles()])
        assert build_index(settings, store).replaced is None
        meta = IndexMeta.load(settings.index_dir)
        meta.model = earlier
        meta.save(settings.index_dir)
        again = build_index(settings, store)
        assert (again.replaced, again.model, again.embedded, again.total_in_index) == (earlier, TRAINED, 3, 3)
        assert open_index(settings).meta.model == TRAINED and len(open_index(settings)) == 3
        minilm = settings.model_copy(update={"cpqa_offline_encoder": "minilm"})
        with pytest.raises(ValueError, match="remove it or use another index folder"):
            build_index(minilm, store)  # not a revision of the trained encoder: refused, nothing emptied
    assert len(open_index(settings)) == 3


def test_faiss_and_milvus_lite_same_top_k(tmp_path, monkeypatch):
    pytest.importorskip("pymilvus")
    from cpqa.config import get_settings

    x = _vectors(2000, 32, seed=3)
    ids = [str(10_000 + i) for i in range(2000)]
    queries = _vectors(20, 32, seed=4)
    results = {}
    for backend in ("faiss", "milvus"):
        s = get_settings(cpqa_home=tmp_path / backend, cpqa_profile="offline", cpqa_vector_store=backend)
        with open_index(s, create=IndexMeta(model="m", dim=32, normalize=False)) as index:
            index.add(ids, x)
        index = open_index(s)
        assert type(index).__name__ == {"faiss": "FaissIndex", "milvus": "MilvusIndex"}[backend]
        assert len(index) == 2000 and len(index.id_set()) == 2000
        results[backend] = index.search(queries, 10)
        index.close()
    for f, m in zip(results["faiss"], results["milvus"]):
        assert [p for p, _ in f] == [p for p, _ in m]
        assert np.allclose([s for _, s in f], [s for _, s in m], rtol=1e-4)


def test_ivfpq_build_needs_vectors_and_valid_m(settings):
    with open_index(settings, create=IndexMeta(model="m", dim=30, normalize=False)) as index:
        pass
    with pytest.raises(ValueError, match="empty"):
        build_ivfpq(settings.index_dir)
    with open_index(settings, create=IndexMeta(model="m", dim=30, normalize=False)) as index:
        index.add([str(i + 1) for i in range(500)], _vectors(500, 30))
    with pytest.raises(ValueError, match="divide"):
        build_ivfpq(settings.index_dir, m=64)


@pytest.mark.slow
def test_index_bench_small(tmp_path):
    from cpqa.evaluation.benchmarks.indexbench import run_bench

    cfg = BenchConfig(
        n=20_000,
        queries=50,
        latency_queries=20,
        flat_latency_queries=5,
        points_per_list=200,
        nprobe=(8, 32),
        k_factor=(8,),
        train_size=20_000,
        pubmed_vectors=2_000_000,
    )
    out = run_bench(cfg, tmp_path)
    assert out["flat"]["bytes_per_vector"] == pytest.approx(768 * 4, rel=0.01)
    assert out["ivfpq"]["resident_bytes_per_vector"] < 200
    recalls = {c["nprobe"]: c["recall@10"] for c in out["ivfpq"]["sweep"]}
    assert recalls[32] >= recalls[8] and recalls[32] >= out["ivfpq"]["pq_only_recall@10"]
    assert out["pubmed_extrapolation"]["vectors"] == 2_000_000


def test_cli_ingest_medcpt_and_index_build_errors(settings, medcpt_dir):
    from typer.testing import CliRunner

    from cpqa.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["ingest", "medcpt", str(medcpt_dir[0]), "--no-store", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["vectors_added"] == len(medcpt_dir[1])
    # a store of MedCPT vectors cannot be extended with MiniLM (offline) vectors
    from cpqa.sources.store import Store

    with Store(settings.store_path) as store:
        store.upsert([(a, None) for a in _articles()])
    result = runner.invoke(app, ["index", "build", "--json"])
    assert result.exit_code == 2 and "MedCPT-Article-Encoder" in result.stderr


def test_rows_appended_survive_a_kill_before_close(tmp_path):
    """A build killed mid-way keeps every row it wrote: the ids reach the file with their vectors."""
    import subprocess
    import sys

    script = (
        "import os, numpy as np\n"
        "from pathlib import Path\n"
        "from cpqa.documents.vectorstore import FlatFile\n"
        f"f = FlatFile(Path({str(tmp_path)!r}), 8)\n"
        "for start in range(0, 300, 100):\n"
        "    f.append(np.arange(start + 1, start + 101), np.ones((100, 8), dtype=np.float32))\n"
        "os._exit(9)  # killed: no close, no interpreter shutdown\n"
    )
    assert subprocess.run([sys.executable, "-c", script], timeout=60).returncode == 9
    from cpqa.documents.vectorstore import FlatFile, read_ids

    assert FlatFile(tmp_path, 8).count == 300 and len(read_ids(tmp_path)) == 300


def test_a_revised_record_is_embedded_again_in_place(settings):
    """A record revised after the index was built (a PubMed update file, a re-read under a new cleaning) gets its
    new vector at the next build, in its old row; the others are skipped, and BM25 reads the new text."""
    from cpqa.documents.bm25 import Bm25Index
    from cpqa.sources.store import Store
    from ingestion.index_build import build_index

    bm25_dir = settings.index_dir / "bm25"
    with Store(settings.store_path) as store:
        store.upsert([(a, None) for a in _articles()])
        build_index(settings, store)
        Bm25Index.open(store, bm25_dir)
        before = _vectors_of(settings.index_dir)
        revised = Article(
            pmid="102",
            title="Olaparib maintenance in ovarian cancer",
            abstract_sections=[AbstractSection(text="Olaparib prolonged progression-free survival.")],
        )
        store.upsert([(revised, None)])
        again = build_index(settings, store)
        assert (again.embedded, again.reembedded, again.skipped_present, again.total_in_index) == (1, 1, 2, 3)
        assert build_index(settings, store).embedded == 0  # covered now
        # an index built before the metadata said what it covers: its metadata's last write says when it last did
        meta = IndexMeta.load(settings.index_dir)
        meta.store_updated = None
        meta.save(settings.index_dir)
        store.upsert([(revised.model_copy(update={"title": "Olaparib maintenance in ovarian carcinoma"}), None)])
        assert build_index(settings, store).reembedded == 1
        assert [r[0] for r in Bm25Index.open(store, bm25_dir).search("olaparib ovarian", 3)] == ["102"]
    after = _vectors_of(settings.index_dir)
    row = list(read_ids(settings.index_dir)).index(102)
    assert after.shape == before.shape
    assert float(after[row] @ before[row]) < 0.9 and np.allclose(np.delete(after, row, 0), np.delete(before, row, 0))


def _vectors_of(directory) -> np.ndarray:
    """A copy of a flat index's vectors (the view ``flat_vectors`` gives lives only as long as its index)."""
    from cpqa.documents.vectorstore import flat_vectors

    index = load_flat(directory, mmap=False)
    return flat_vectors(index).copy()
