"""Encoders on onnxruntime: a model's forward pass exported once from its Hugging Face weights into the data home,
optionally with dynamic int8 quantisation of its matrix products, then run without torch.

Runtimes (``CPQA_RUNTIME``):
- ``torch``: the model through ``transformers`` (any device);
- ``onnx``: the same graph on onnxruntime, float32: vectors equal torch's to within 1e-5 (cosine);
- ``onnx-int8``: matrix products quantised to int8 per output channel (weights; activations dynamically), the
  fastest on a CPU with VNNI; vectors within the tolerance ``cpqa bench encoders`` measures (cosine about 0.99 to
  torch's), and retrieval measured unchanged (docs/results.md, "The passage stage earns its place (issue 27)").

The export is keyed by the model's name and its weights files' sizes and modification times, written beside a
``meta.json`` under ``$CPQA_CACHE/onnx/`` (``~/.cache/cpqa``), atomically (a half-written file is never loaded), so
it runs once per machine; ``./setup.sh`` triggers it with the first ``cpqa index build``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Literal, Mapping

import numpy as np

Runtime = Literal["torch", "onnx", "onnx-int8"]
RUNTIMES: tuple[str, ...] = ("torch", "onnx", "onnx-int8")
Head = Literal["hidden", "logits"]  # last hidden state (bi-encoders) or classification logits (cross-encoders)
Forward = Callable[[Mapping[str, np.ndarray]], np.ndarray]
OPSET = 17


def check_runtime(name: str) -> Runtime:
    if name not in RUNTIMES:
        raise ValueError(f"unknown runtime {name!r}: use {', '.join(RUNTIMES)}")
    return name  # type: ignore[return-value]


def _weights_stamp(model_id: str) -> str:
    """What identifies the weights: the local folder's weight files (size, mtime), or the hub cache's snapshot."""
    folder = Path(model_id)
    if not folder.is_dir():
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json")
        folder = Path(found).parent if isinstance(found, str) else folder
    files = sorted(p for p in folder.glob("*") if p.suffix in {".safetensors", ".bin"}) if folder.is_dir() else []
    return ";".join(f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}" for p in files) or str(folder)


def model_dir(cache: Path, model_id: str, head: Head) -> Path:
    stamp = hashlib.sha1(f"{model_id}\x00{head}\x00{_weights_stamp(model_id)}".encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model_id).name if Path(model_id).is_dir() else model_id)
    return cache / f"{name}-{head}-{stamp}"


def _atomic(target: Path, write: Callable[[Path], None]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


@contextmanager
def _quiet() -> Iterator[None]:
    """The exporter's and quantiser's advice to developers (warnings, root-logger lines) kept from users."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


def export_model(model, tokenizer, head: Head, path: Path, pairs: bool = False) -> None:
    """A loaded transformers ``model`` (float32, on the CPU) as an ONNX graph at ``path``, with dynamic batch and
    sequence axes (torch's TorchScript exporter: it needs no extra packages and handles BERT-style encoders). Tracing
    can leave a model changed: give a copy of one still in use. ``pairs``: trace with (text, text) inputs."""
    import torch

    second = ["a second text", "more"] if pairs else None
    sample = tokenizer(["an example sentence", "another"], second, padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Forward(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            out = self.inner(**dict(zip(names, inputs)))
            return out.last_hidden_state if head == "hidden" else out.logits

    output = "last_hidden_state" if head == "hidden" else "logits"
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes[output] = {0: "batch", 1: "sequence"} if head == "hidden" else {0: "batch"}
    with torch.inference_mode(), _quiet():
        torch.onnx.export(
            Forward(model.eval()),
            tuple(sample[n] for n in names),
            str(path),
            input_names=names,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def export(model_id: str, target: Path, head: Head) -> None:
    """The model's forward pass, loaded by name or folder, exported to ``target`` (``export_model``)."""
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # "Loading weights" bars are not for users
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    loader = AutoModel if head == "hidden" else AutoModelForSequenceClassification
    model = loader.from_pretrained(model_id).eval()
    _atomic(target, lambda path: export_model(model, tokenizer, head, path))


def quantize(source: Path, target: Path, op_types: tuple[str, ...] = ("MatMul",)) -> None:
    """Dynamic int8 quantisation of the matrix products, per output channel (per-tensor scales lose too much on
    MiniLM: cosine 0.95 to the float vectors against 0.99); with ``Gather`` the embedding tables too (a shipped
    model: a quarter of the float file)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    def write(path: Path) -> None:
        with _quiet():
            quantize_dynamic(
                str(source),
                str(path),
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=list(op_types),
            )

    _atomic(target, write)


def onnx_file(cache: Path, model_id: str, head: Head, runtime: Runtime) -> Path:
    """The ONNX graph for ``runtime``, exported (and quantised) on first use."""
    folder = model_dir(cache, model_id, head)
    plain = folder / "model.onnx"
    if not plain.exists():
        export(model_id, plain, head)
        (folder / "meta.json").write_text(json.dumps({"model": model_id, "head": head, "opset": OPSET}))
    if runtime == "onnx":
        return plain
    quantized = folder / "model-int8.onnx"
    if not quantized.exists():
        quantize(plain, quantized)
    return quantized


def onnx_forward(path: Path) -> Forward:
    """``forward(inputs) -> output``: one onnxruntime session (thread-safe; all cores inside one call)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle worker threads sleep instead of spinning: a question runs E1 beside E2 and BM25 in other threads, and
    # spinning threads took the cores from them (E2 35 -> 72 ms at p50 on 2 cores).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    wanted = [i.name for i in session.get_inputs()]

    def forward(inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        feed = {name: np.asarray(inputs[name], dtype=np.int64) for name in wanted}
        return session.run(None, feed)[0]

    return forward


def torch_forward(model_id: str, head: Head, device: str) -> Forward:
    """The same forward pass through ``transformers`` on ``device``."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification

    loader = AutoModel if head == "hidden" else AutoModelForSequenceClassification
    model = loader.from_pretrained(model_id).eval().to(device)

    def forward(inputs: Mapping[str, np.ndarray]) -> np.ndarray:
        with torch.inference_mode():
            feed = {k: torch.as_tensor(np.asarray(v)).to(device) for k, v in inputs.items()}
            out = model(**feed)
            result = out.last_hidden_state if head == "hidden" else out.logits
            return result.float().cpu().numpy()

    return forward


SHIPPED = "model-int8.onnx"  # a model trained here ships as its int8 graph alone (cpqa/models/trained/)


def shipped_graph(model_id: str) -> Path | None:
    """The int8 ONNX graph a model folder ships instead of weights, if it is one."""
    path = Path(model_id) / SHIPPED
    return path if path.is_file() else None


def load_forward(model_id: str, head: Head, runtime: Runtime, device: str, cache: Path) -> Forward:
    """The model's forward pass on ``runtime``; the ONNX runtimes run on the CPU only (a GPU runs torch). A model
    that ships only its int8 graph runs it on any runtime (it has no weights for another)."""
    shipped = shipped_graph(model_id)
    if shipped is not None:
        return onnx_forward(shipped)
    if runtime == "torch" or device != "cpu":
        return torch_forward(model_id, head, device)
    return onnx_forward(onnx_file(cache, model_id, head, runtime))


__all__ = ["RUNTIMES", "SHIPPED", "Runtime", "check_runtime", "load_forward", "onnx_file", "shipped_graph"]
