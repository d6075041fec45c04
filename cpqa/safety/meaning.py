"""Triage by meaning: a question is urgent when a sentence encoder puts it nearer a lay description of a red flag
than any ordinary cancer question, by a margin.

The rules in :mod:`cpqa.safety.triage` answer instantly and before any model loads, but people describe the same
emergency in words no pattern lists ("someone is sitting on my chest"). The prototypes
(``data/urgent_meaning.json``) name each red flag's sign in a few lay phrasings, beside ordinary questions about
the same symptoms asked in general, so closeness to a symptom alone is not enough. Like the rules, it needs a
person or a moment named. The threshold and margin were set on the dev phrasing set (``tests/data``); the
results on held-out phrasings are in docs/results.md ("Safety coverage and personal details (issue 17)").
"""

from __future__ import annotations

import json
from functools import cached_property
from importlib.resources import files

import numpy as np

from cpqa.models.encoders import Encoder, unit_rows
from cpqa.options import SafetyOptions
from cpqa.safety.triage import names_someone


class MeaningTriage:
    """``sign(text)``: the red flag a question describes by meaning, or None."""

    def __init__(self, encoder: Encoder):
        self.encoder = encoder
        data = json.loads(files("cpqa.safety").joinpath("data", "urgent_meaning.json").read_text(encoding="utf-8"))
        self._signs = [sign for sign, texts in data["urgent"].items() for _ in texts]
        self._urgent_texts = [text for texts in data["urgent"].values() for text in texts]
        self._ordinary_texts = list(data["ordinary"])

    def _unit(self, texts: list[str]) -> np.ndarray:
        return unit_rows(self.encoder.encode(texts))

    @cached_property
    def _prototypes(self) -> tuple[np.ndarray, np.ndarray]:
        return self._unit(self._urgent_texts), self._unit(self._ordinary_texts)

    def prepare(self) -> None:
        """Embed the prototypes now (the pipeline does this while it loads)."""
        _ = self._prototypes

    def sign(self, text: str, options: SafetyOptions | None = None) -> str | None:
        """The urgent sign whose prototype ``text`` is nearest, when near enough and nearer than any ordinary question
        (``SafetyOptions.triage_threshold`` and ``triage_margin``)."""
        options = options or SafetyOptions()
        if not names_someone(text):
            return None
        urgent, ordinary = self._prototypes
        question = self._unit([text])[0]
        near_urgent, near_ordinary = urgent @ question, ordinary @ question
        best = int(np.argmax(near_urgent))
        ahead = near_urgent[best] - float(np.max(near_ordinary))
        if near_urgent[best] >= options.triage_threshold and ahead >= options.triage_margin:
            return self._signs[best]
        return None
