"""Encoders loaded once and only when asked: a component whose model another component already serves gets none, and
one an option leaves unused costs nothing when the pipeline loads (``distinct_encoder``: the evidence scorer)."""

from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np

from cpqa.config import Settings
from cpqa.models.encoders import Encoder, EmbeddingCache, component_runtime, load_encoder, resolve
from cpqa.types import ComponentChoice


def distinct_encoder(
    component: str, settings: Settings, serving: ComponentChoice
) -> tuple[Encoder | None, ComponentChoice]:
    """The encoder serving ``component`` (cached, loaded on first use), or None where the model of ``serving`` (another
    component's choice) serves it too, so nothing is loaded twice; and the choice (for the trace)."""
    choice = resolve(component, settings)
    if choice.model == serving.model:
        return None, choice.model_copy(update={"runtime": serving.runtime})
    runtime = component_runtime(component, settings)
    lazy = LazyEncoder(lambda: EmbeddingCache(load_encoder(component, settings)[0]))
    return lazy, choice.model_copy(update={"runtime": runtime})


class LazyEncoder:
    """An ``Encoder`` loaded on first use: a component an option leaves unused costs nothing when the pipeline loads."""

    def __init__(self, load: Callable[[], Encoder]):
        self._load: Callable[[], Encoder] = load
        self._encoder: Encoder | None = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        with self._lock:
            if self._encoder is None:
                self._encoder = self._load()
        return self._encoder.encode(texts, batch_size=batch_size)
