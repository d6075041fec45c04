"""The meaning screen's classifiers, trained once per machine.

scikit-learn's logistic regression trains them; what they learned (coefficients, intercepts, classes) and the
phrasings' vectors are kept in the machine-wide cache (``CPQA_CACHE``) under a key of the phrasings, their labels and
the encoder's own vector for a probe sentence, so a later process (a one-shot ``cpqa ask``) neither embeds the
phrasings again nor imports scikit-learn. Predictions are numpy: the sigmoid of a binary model, the softmax of a
multinomial one, as scikit-learn computes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cpqa.options import SafetyOptions

PROBE = "I have had a high temperature since my chemotherapy yesterday."
_C = SafetyOptions().classifier_c  # the regularisation (an option, with how it was chosen)


@dataclass(frozen=True)
class LinearModel:
    """A fitted logistic regression: ``predict_proba`` of one row, classes in ``classes`` order."""

    classes: tuple
    coef: np.ndarray  # (1, d) binary, (k, d) multinomial
    intercept: np.ndarray

    def predict_proba(self, row: np.ndarray) -> np.ndarray:
        scores = self.coef @ row + self.intercept
        if len(self.classes) == 2:
            positive = 1.0 / (1.0 + np.exp(-scores[0]))
            return np.array([1.0 - positive, positive])
        exp = np.exp(scores - scores.max())
        return exp / exp.sum()

    @classmethod
    def fit(cls, vectors: np.ndarray, labels: Sequence, c: float = _C) -> "LinearModel":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(vectors, np.asarray(labels))
        classes = tuple(model.classes_.tolist())  # plain str / bool / int, as JSON keeps them
        return cls(classes, model.coef_.astype(np.float64), model.intercept_.astype(np.float64))


def trained(
    cache_dir: Path | None,
    texts: Sequence[str],
    targets: dict[str, Sequence],
    embed: Callable[[list[str]], np.ndarray],
    c: float = _C,
) -> tuple[np.ndarray, dict[str, LinearModel]]:
    """The phrasings' vectors and one model per ``targets`` entry (its labels, one per text): from the cache when it
    holds this key, else computed and kept there (written atomically; an unwritable cache is skipped)."""
    probe = embed([PROBE])[0]
    key = hashlib.sha256(
        json.dumps([list(texts), {k: [str(v) for v in vs] for k, vs in targets.items()}, c]).encode()
        + np.round(probe.astype(np.float64), 4).tobytes()
    ).hexdigest()[:24]
    path = cache_dir / f"triage-{key}.npz" if cache_dir is not None else None
    if path is not None and path.exists():
        try:
            with np.load(path, allow_pickle=False) as data:
                models = {
                    name: LinearModel(
                        tuple(json.loads(str(data[f"{name}_classes"]))), data[f"{name}_coef"], data[f"{name}_intercept"]
                    )
                    for name in targets
                }
                return data["vectors"], models
        except (OSError, KeyError, ValueError):
            pass  # a damaged cache entry is rebuilt below
    vectors = embed(list(texts))
    models = {name: LinearModel.fit(vectors, labels, c) for name, labels in targets.items()}
    if path is not None:
        _save(path, vectors, models)
    return vectors, models


def _save(path: Path, vectors: np.ndarray, models: dict[str, LinearModel]) -> None:
    arrays: dict[str, np.ndarray] = {"vectors": vectors}
    for name, model in models.items():
        arrays[f"{name}_classes"] = np.array(
            json.dumps(
                [
                    c if isinstance(c, str) else bool(c) if isinstance(c, (bool, np.bool_)) else int(c)
                    for c in model.classes
                ]
            )
        )
        arrays[f"{name}_coef"], arrays[f"{name}_intercept"] = model.coef, model.intercept
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".npz")
        with os.fdopen(handle, "wb") as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]
        os.replace(temporary, path)
    except OSError:
        pass  # the screen works without the cache; the next process trains again


__all__ = ["LinearModel", "trained"]
