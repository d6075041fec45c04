"""A cross-encoder (a BERT sequence classifier with one logit, as MedCPT-Cross-Encoder) scoring (query, passage)
pairs on the configured runtime (``cpqa.models.onnx_runtime``), with sentence-transformers' ``CrossEncoder.predict``
interface. Scores are the raw logits: the order is what reranking uses, and a sigmoid would not change it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.models.batching import padded, token_batches
from cpqa.models.onnx_runtime import Runtime, load_forward
from cpqa.models.tokenization import WordPieces


class PairScorer:
    def __init__(
        self, model_id: str, onnx_cache: Path, *, max_tokens: int = 512, runtime: Runtime = "torch", device: str = "cpu"
    ):
        self.name = model_id
        self.runtime = runtime if device == "cpu" else "torch"
        self._tokenizer = WordPieces(model_id, max_tokens)
        self._forward = load_forward(model_id, "logits", runtime, device, onnx_cache)

    def predict(
        self, pairs: Sequence[Sequence[str]], batch_size: int = 16, show_progress_bar: bool = False, **_: object
    ) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        columns = self._tokenizer.encode([p[0] for p in pairs], [p[1] for p in pairs])
        scores = np.zeros(len(pairs), dtype=np.float32)
        for rows in token_batches([len(ids) for ids in columns["input_ids"]], batch_size):
            batch = padded({name: [columns[name][i] for i in rows] for name in columns}, self._tokenizer.pad_id)
            scores[rows] = np.asarray(self._forward(batch), dtype=np.float32).reshape(len(rows), -1)[:, 0]
        return scores


def probability(logits: np.ndarray) -> np.ndarray:
    """A one-logit head's scores as probabilities (the sigmoid the binary cross-entropy trained them for)."""
    return 1.0 / (1.0 + np.exp(-logits))


class TrainedPairScorer:
    """A cross-encoder trained here (a folder shipping its int8 graph: ``cpqa train chooser`` / ``reranker``), loaded
    on first use, so a pipeline that never asks it never loads it; ``logits(first, seconds)`` scores ``first``
    beside each of ``seconds``."""

    def __init__(self, model: Path | str, max_tokens: int):
        self.model, self.max_tokens = str(model), max_tokens
        self._scorer: PairScorer | None = None
        self._lock = threading.Lock()

    def _loaded(self) -> PairScorer:
        with self._lock:
            if self._scorer is None:  # a shipped int8 graph: nothing is exported, so no cache folder is written
                self._scorer = PairScorer(self.model, Path(self.model), max_tokens=self.max_tokens, runtime="onnx-int8")
            return self._scorer

    def logits(self, first: str, seconds: Sequence[str]) -> np.ndarray:
        if not seconds:
            return np.zeros(0, dtype=np.float32)
        return self._loaded().predict([(first, second) for second in seconds], batch_size=16)


__all__ = ["PairScorer", "TrainedPairScorer", "probability"]
