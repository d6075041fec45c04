"""A trained model as CPQA ships one: an ONNX graph (opset 17) quantised to int8, embedding table included, with its
tokenizer and a ``cpqa_model.json`` naming the head, in ``OUT/onnx``; and that folder as a split archive for a
machine whose results come back in files of at most 16 MiB.

The graph is what ``cpqa.models.onnx_runtime`` runs: inputs ``input_ids``, ``attention_mask``, ``token_type_ids``
(int64, dynamic batch and sequence), output ``last_hidden_state`` (head ``hidden``: mean-pool over the mask and
normalise) or ``logits`` (head ``logits``: one per pair). Only the standard library, numpy, torch, transformers,
onnx and onnxruntime are imported.
"""

from __future__ import annotations

import copy
import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from cpqa.models.onnx_runtime import OPSET, export_model
from cpqa.models.onnx_runtime import quantize as quantize_graph

INT8 = "model-int8.onnx"
MANIFEST = "cpqa_model.json"
NAMES = ("input_ids", "attention_mask", "token_type_ids")


def export_onnx(model: Any, tokenizer: Any, head: str, path: Path) -> None:
    """``model`` (a transformers model on the CPU, float32) as ONNX: the product's own exporter, on a copy."""
    export_model(copy.deepcopy(model), tokenizer, "hidden" if head == "hidden" else "logits", path, head == "logits")


QUANTIZATION: dict[str, Any] = {"weight_type": "QInt8", "per_channel": True, "op_types": ["MatMul", "Gather"]}


def quantize(source: Path, target: Path) -> None:
    """Dynamic int8: matrix products per output channel (activations quantised at run time) and the embedding
    tables (``Gather``), so the file is about a quarter of the float one (the product's own quantiser)."""
    quantize_graph(source, target, tuple(QUANTIZATION["op_types"]))


class OnnxModel:
    """An exported graph on onnxruntime (CPU) with the tokenizer: ``vectors`` (head hidden) or ``scores`` (logits)."""

    def __init__(self, path: Path, tokenizer: Any, max_length: int):
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.wanted = [i.name for i in self.session.get_inputs()]
        self.tokenizer = tokenizer
        self.max_length = max_length

    def _run(self, first: Sequence[str], second: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
        enc = self.tokenizer(
            list(first), list(second) if second is not None else None,
            padding=True, truncation=True, max_length=self.max_length, return_tensors="np",
        )  # fmt: skip
        feed = {name: np.asarray(enc[name], dtype=np.int64) for name in self.wanted}
        return self.session.run(None, feed)[0], feed["attention_mask"]

    def vectors(self, texts: Sequence[str], batch: int = 64) -> np.ndarray:
        rows = []
        for i in range(0, len(texts), batch):
            hidden, mask = self._run(texts[i : i + batch], None)
            weights = mask[..., None].astype(np.float32)
            mean = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
            rows.append(mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12))
        return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def scores(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> np.ndarray:
        out = [
            self._run([a for a, _ in pairs[i : i + batch]], [b for _, b in pairs[i : i + batch]])[0].reshape(-1)
            for i in range(0, len(pairs), batch)
        ]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def sentence_transformers_files(folder: Path, max_length: int) -> None:
    """What makes a folder a sentence-transformers model with mean pooling and normalisation (and tells
    ``cpqa.models.encoders`` how to pool): ``modules.json``, ``1_Pooling/config.json``,
    ``sentence_bert_config.json``."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2))
    (folder / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (folder / "2_Normalize").mkdir(parents=True, exist_ok=True)
    pooling = {"word_embedding_dimension": None, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}
    config = json.loads((folder / "config.json").read_text())
    pooling["word_embedding_dimension"] = config["hidden_size"]
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2))
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_length, "do_lower_case": False})
    )


def save_float(model: Any, tokenizer: Any, folder: Path, head: str, max_length: int) -> None:
    """The trained float32 model as transformers (and, for the encoder, sentence-transformers) load it."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    if head == "hidden":
        sentence_transformers_files(folder, max_length)


def ship(
    model: Any, tokenizer: Any, head: str, folder: Path, max_length: int, about: dict[str, Any]
) -> tuple[Path, Path]:
    """Export and quantise into ``folder`` (the float graph in a temporary folder): (int8 graph, float graph)."""
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="cpqa-fit-"))
    plain = scratch / "model.onnx"
    export_onnx(model, tokenizer, head, plain)
    quantize(plain, folder / INT8)
    model.config.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    if head == "hidden":
        sentence_transformers_files(folder, max_length)
    manifest = {
        "head": head,
        "onnx": INT8,
        "opset": OPSET,
        "max_tokens": max_length,
        "quantization": QUANTIZATION,
        **({"pooling": "mean", "normalize": True} if head == "hidden" else {"output": "one logit per pair"}),
        **about,
        "bytes": (folder / INT8).stat().st_size,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return folder / INT8, plain


def bundle(out: Path, target: Path, name: str, part_mib: int = 15) -> list[Path]:
    """``out``'s shipped folder, manifest and log as ``name.tgz.00``, ``.01``, ... of at most ``part_mib`` MiB in
    ``target`` (put back together with ``cat name.tgz.* | tar xzf -``)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for item in ("onnx", "manifest.json", "training_log.json"):
            if (out / item).exists():
                tar.add(out / item, arcname=f"{name}/{item}")
    data = buffer.getvalue()
    target.mkdir(parents=True, exist_ok=True)
    size = part_mib * 1024 * 1024
    parts = []
    for number, start in enumerate(range(0, len(data), size)):
        part = target / f"{name}.tgz.{number:02d}"
        part.write_bytes(data[start : start + size])
        parts.append(part)
    return parts
