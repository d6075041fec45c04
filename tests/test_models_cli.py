"""``cpqa models``: carrying the paper's models to an offline machine. The models are the tiny random-weight ones
under the real ids (``cpqa.testing.tiny_models``); the hub itself cannot be reached here, so ``download`` is
exercised for its clear failure, and its folder layout is made from a built cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds the tiny models and runs the CLI in subprocesses


def _cpqa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cpqa.cli", "models", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def carried(tmp_path_factory) -> Path:
    """A folder as `cpqa models download` writes it: each model's files and MANIFEST.json."""
    from cpqa.models.hub_cache import MANIFEST
    from cpqa.testing.tiny_models import build_tiny_paper_models

    root = tmp_path_factory.mktemp("carry")
    snapshots = build_tiny_paper_models(root / "connected-cache")
    out = root / "models"
    manifest = []
    for model_id, snapshot in snapshots.items():
        folder = model_id.replace("/", "--")
        shutil.copytree(snapshot, out / folder)  # resolves the cache's links into plain files, as a download does
        manifest.append({"model": model_id, "folder": folder, "commit": snapshot.name})
    (out / MANIFEST).write_text(json.dumps(manifest))
    return out


def test_import_puts_the_carried_models_where_the_product_loads_them(carried, tmp_path):
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    before = json.loads(_cpqa(env, "status", "--json").stdout)
    assert not any(row["cached"] for row in before["models"])
    imported = _cpqa(env, "import", str(carried))
    assert imported.returncode == 0, imported.stderr
    after = json.loads(_cpqa(env, "status", "--json").stdout)
    assert all(row["cached"] for row in after["models"]) and len(after["models"]) == 4
    # The product's own loader finds the paper's passage embedder in the fresh cache, offline.
    probe = (
        "from cpqa.config import get_settings\nfrom cpqa.models.encoders import load_encoder\n"
        "encoder, choice = load_encoder('passage_retriever', get_settings(cpqa_profile='paper'))\n"
        "print(choice.model, encoder.encode(['tamoxifen']).shape)"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "pubmedbert-base-embeddings-matryoshka" in done.stdout, done.stderr


def test_bad_folders_and_an_unreachable_hub_are_clear_errors(tmp_path):
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    missing = _cpqa(env, "import", str(tmp_path))
    assert missing.returncode == 1 and "MANIFEST.json" in missing.stderr and "Traceback" not in missing.stderr
    offline = _cpqa(env, "download", str(tmp_path / "out"))
    assert offline.returncode == 1 and "cannot download" in offline.stderr and "Traceback" not in offline.stderr
