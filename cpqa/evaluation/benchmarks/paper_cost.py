"""What the paper profile costs on this machine, measured without its weights (``cpqa bench latency
--random-paper-models``).

Compute does not depend on the weights, so random-weight models with the paper's full architectures stand in for
them (``cpqa.testing.tiny_models.build_paper_models(..., "base")``: MedCPT query, article and cross-encoders and
PubMedBERT-Matryoshka, BERT-base each). A copy of the data home gets a MedCPT-shaped vector index (768-d random
vectors, one per stored record, standing where NCBI's precomputed MedCPT embeddings would: the product downloads
those, it never computes them), and the latency bench runs in a child process with the paper profile over it.
The numbers are timings only: the answers are noise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.config import Settings, get_settings
from cpqa.documents.vector_index import IndexMeta
from cpqa.documents.vectorstore import open_index
from cpqa.models.encoders import MEDCPT_ARTICLE
from cpqa.sources.store import Store

_COPIED = ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.tantivy", "terms", "index/bm25")


def prepare_paper_home(source: Settings, target: Path, dim: int, seed: int = 0) -> Settings:
    """``target``: the records, term tables and BM25 index of ``source``'s data home, with a random MedCPT-shaped
    article index of ``dim`` (no passages: the bench's first pass meets every record for the first time)."""
    for name in _COPIED:
        path = source.home / name
        if path.is_dir():
            shutil.copytree(path, target / name, dirs_exist_ok=True)
        elif path.exists():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / name)
    settings = get_settings(cpqa_home=target, cpqa_vector_store="faiss")
    with Store(settings.store_path) as store:
        pmids = store.pmids()
    rng = np.random.default_rng(seed)
    meta = IndexMeta(model=MEDCPT_ARTICLE, dim=dim, normalize=False)
    with open_index(settings, create=meta) as index:
        for i in range(0, len(pmids), 10_000):
            batch = pmids[i : i + 10_000]
            index.add(batch, rng.standard_normal((len(batch), dim)).astype(np.float32))
    return settings


def paper_latency(
    questions: Sequence[Path],
    limit: int | None,
    models_cache: Path | None,
    device: str | None,
    settings: Settings | None = None,
    size: str = "base",
) -> dict:
    """Build (or reuse, in ``models_cache``) the random models of ``size`` (base: the paper's; tiny: a plumbing
    check), a paper copy of the data home, and run ``cpqa bench latency --profile paper --json`` over it; returns
    its JSON with the setup named."""
    from cpqa.testing.tiny_models import SIZES, build_paper_models

    settings = settings or get_settings()
    with tempfile.TemporaryDirectory() as tmp:
        cache = models_cache or Path(tmp) / "hub"
        build_paper_models(cache, size)
        home = Path(tmp) / "home"
        prepare_paper_home(settings, home, SIZES[size]["hidden_size"])
        # The paper profile asks E-utilities: here an in-process mirror over the copied store.
        command = [sys.executable, "-m", "cpqa.cli", "bench", "latency", "--profile", "paper", "--mirror", "--json"]
        for path in questions:
            command += ["--questions", str(path)]
        if limit:
            command += ["--limit", str(limit)]
        if device:
            command += ["--device", device]
        env = {
            **os.environ,
            "HF_HUB_CACHE": str(cache),
            "HF_HUB_OFFLINE": "1",
            "CPQA_HOME": str(home),
            "CPQA_PROFILE": "paper",
        }
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the paper-profile bench failed: {done.stderr[-1500:]}")
        payload = json.loads(done.stdout[done.stdout.index("{") :])
    payload["weights"] = f"random, {size}-size BERT architectures (timings only; cpqa.evaluation.benchmarks.paper_cost)"
    return payload


__all__ = ["paper_latency", "prepare_paper_home"]
