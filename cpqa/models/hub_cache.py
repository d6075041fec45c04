"""The paper's models for an air-gapped site: which are in the local Hugging Face cache (``cpqa models status``),
a folder of them made on a connected machine (``cpqa models download DIR``), and that folder put into the hub
cache of the offline machine (``cpqa models import DIR``), where ``transformers`` and ``sentence-transformers`` find
them as if downloaded there.

The folder holds one sub-folder per model (its files as published) and ``MANIFEST.json`` with each model's id,
folder and commit; the hub cache stores content-addressed blobs, a snapshot per commit linking to them, and
``refs/main`` naming the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from cpqa.models.encoders import PAPER_MODELS, ModelUnavailable

MANIFEST = "MANIFEST.json"


def paper_models() -> dict[str, list[str]]:
    """Each paper model id with the components it serves."""
    models: dict[str, list[str]] = {}
    for component, model_id in PAPER_MODELS.items():
        models.setdefault(model_id, []).append(component)
    return models


def hub_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def repo_dir(cache: Path, model_id: str) -> Path:
    return cache / ("models--" + model_id.replace("/", "--"))


def status(cache: Path | None = None) -> list[dict]:
    """Per paper model: the components it serves, whether it is cached, and its snapshot folder."""
    from huggingface_hub import try_to_load_from_cache

    cache = cache or hub_cache_dir()
    rows = []
    for model_id, components in paper_models().items():
        found = [try_to_load_from_cache(model_id, name, cache_dir=cache) for name in ("config.json", "modules.json")]
        path = next((p for p in found if isinstance(p, str)), None)
        rows.append(
            {
                "model": model_id,
                "components": components,
                "cached": path is not None,
                "snapshot": str(Path(path).parent) if path else None,
            }
        )
    return rows


def to_hub_layout(source: Path, repo: Path, commit: str, move: bool = False) -> Path:
    """Put ``source``'s files into the hub cache folder ``repo`` under ``commit`` (blobs, snapshot links,
    ``refs/main``); copies unless ``move``. Returns the snapshot folder."""
    snapshot = repo / "snapshots" / commit
    blobs = repo / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    for file in sorted(p for p in source.rglob("*") if p.is_file() and ".cache" not in p.relative_to(source).parts):
        blob = blobs / hashlib.sha256(file.read_bytes()).hexdigest()
        if not blob.exists():
            (shutil.move if move else shutil.copyfile)(str(file), blob)
        target = snapshot / file.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            target.unlink()
        try:
            target.symlink_to(os.path.relpath(blob, target.parent))
        except OSError:  # no symlinks (some Windows setups): the cache then holds copies
            shutil.copyfile(blob, target)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def download(dest: Path) -> list[dict]:
    """On a connected machine: every paper model into ``dest`` with its manifest."""
    from huggingface_hub import HfApi, snapshot_download

    dest.mkdir(parents=True, exist_ok=True)
    manifest = []
    for model_id in paper_models():
        folder = model_id.replace("/", "--")
        try:
            commit = HfApi().model_info(model_id).sha
            snapshot_download(model_id, revision=commit, local_dir=dest / folder)
        except Exception as exc:  # noqa: BLE001 - network, auth, offline mode: one clear error
            raise ModelUnavailable(
                f"cannot download {model_id} ({type(exc).__name__}: {exc}); run this on a "
                "machine that reaches huggingface.co, without HF_HUB_OFFLINE"
            ) from None
        manifest.append({"model": model_id, "folder": folder, "commit": commit})
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def import_models(source: Path, cache: Path | None = None) -> list[dict]:
    """On the offline machine: the models of a ``download`` folder into the hub cache."""
    path = source / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"no {MANIFEST} in {source}: make the folder with `cpqa models download DIR`")
    try:
        manifest = json.loads(path.read_text())
        entries = [(e["model"], source / e["folder"], e["commit"]) for e in manifest]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a model manifest ({type(exc).__name__})") from None
    cache = cache or hub_cache_dir()
    done = []
    for model_id, folder, commit in entries:
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} (model {model_id}) is missing from {source}")
        snapshot = to_hub_layout(folder, repo_dir(cache, model_id), commit)
        done.append({"model": model_id, "snapshot": str(snapshot)})
    return done
