"""Triage by meaning: the red criterion of ``cpqa.safety.categories`` a question describes in words no rule lists.

People describe the same emergency in many ways ("someone is sitting on my chest", "I won't be a burden much
longer"). Each red criterion of the triage tool comes with lay phrasings and its clinical words; ordinary questions
(many about the same symptoms asked in general), the amber criteria's phrasings and the referral phrasings are the
other side. Two ways to decide, both over the pipeline's sentence encoder (``SafetyOptions.triage_method``):
- ``prototypes``: the question is urgent when it is near enough to a red phrasing and nearer to it than to any
  ordinary one, by a margin;
- ``classifier``: a logistic regression trained on the same phrasings (urgent against everything else) gives the
  probability that the question is urgent; the criterion whose phrasings are nearest (best and mean cosine) names it.
``either`` fires when one of them does; which generalises better was measured by cross-validation over the
phrasings (``cpqa eval safety --cross-validate``; docs/results.md, "Triage that generalises (issue 30)"). Like the
rules, it needs a person or a moment named, except for the crisis criterion. Referrals by meaning too: a second
classifier over the referral phrasings (personal dosing, interactions with one's own medicines, personal decisions)
against everything else, so "two tablets instead of one" or "a glass of wine with my letrozole" is referred however
it is put.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from cpqa.models.encoders import Encoder, unit_rows
from cpqa.options import SafetyOptions
from cpqa.safety.classifiers import LinearModel, trained
from cpqa.safety.categories import Criterion, Finding, TriageBook, names_someone, told_as_history

_ORDINARY = -1  # the class of everything that is not urgent


class MeaningTriage:
    """``find(text)``: the red criterion a question describes by meaning, as a ``Finding``, or None."""

    def __init__(
        self,
        encoder: Encoder,
        book: TriageBook | None = None,
        exclude: Sequence[str] = (),
        cache_dir: Path | str | None = None,
        options: SafetyOptions | None = None,
    ):
        """``exclude``: phrasings left out of training (cross-validation holds out a fold this way); ``cache_dir``:
        where the trained classifiers are kept for the next process (``cpqa.safety.classifiers``); ``options``: the
        classifiers' regularisation (``SafetyOptions.classifier_c``)."""
        self.encoder = encoder
        self.c = (options or SafetyOptions()).classifier_c
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.book = book or TriageBook.load()
        self._last: tuple[str, np.ndarray] | None = None
        left_out = set(exclude)
        self.red: list[Criterion] = [c for c in self.book.criteria if c.red]
        self._texts: list[str] = []
        self._labels: list[int] = []
        for index, criterion in enumerate(self.red):
            for text in (*criterion.lay, criterion.clinical):
                if text and text not in left_out:
                    self._texts.append(text)
                    self._labels.append(index)
        not_urgent = [
            *self.book.ordinary,
            *(text for c in self.book.criteria if not c.red for text in c.lay),
            *(text for texts in self.book.referrals.values() for text in texts),
        ]
        for text in not_urgent:
            if text not in left_out:
                self._texts.append(text)
                self._labels.append(_ORDINARY)
        referral = {text: kind for kind, texts in self.book.referrals.items() for text in texts}
        self._referral_labels = [referral.get(text, "none") for text in self._texts]

    def _unit(self, texts: list[str]) -> np.ndarray:
        return unit_rows(self.encoder.encode(texts))

    def _question(self, text: str) -> np.ndarray:
        """The question's unit vector, embedded once for both screens (the referral and the urgent one)."""
        last = self._last
        if last is not None and last[0] == text:
            return last[1]
        vector = self._unit([text])[0]
        self._last = (text, vector)  # one assignment: safe to share between threads
        return vector

    @cached_property
    def _trained(self) -> tuple[np.ndarray, dict[str, LinearModel]]:
        """The phrasings' vectors; the urgent classifier (urgent against not), the crisis classifier (thoughts of
        suicide or self-harm against everything else, urgent signs included: the most dangerous miss gets a model of
        its own, so a crisis is never named as another sign) and the referral classifier."""
        crisis = {i for i, c in enumerate(self.red) if c.action == "crisis"}
        targets: dict[str, Sequence] = {
            "urgent": [label != _ORDINARY for label in self._labels],
            "crisis": [label in crisis for label in self._labels],
            "referral": self._referral_labels,
        }
        return trained(self.cache_dir, self._texts, targets, self._unit, self.c)

    @property
    def _vectors(self) -> np.ndarray:
        return self._trained[0]

    def _probability(self, model: str, question: np.ndarray, positive=True) -> float:
        fitted = self._trained[1][model]
        return float(fitted.predict_proba(question)[fitted.classes.index(positive)])

    def prepare(self) -> None:
        """Embed the phrasings and train the classifiers now (the pipeline does this while it loads)."""
        _ = self._trained

    def referral(self, text: str, options: SafetyOptions | None = None) -> str | None:
        """The referral ``text`` asks for by meaning ("dosing", "interaction" or "decision"), or None; only for a
        question about someone's own care (a person or a moment named)."""
        options = options or SafetyOptions()
        if not names_someone(text):
            return None
        model = self._trained[1]["referral"]
        probabilities = model.predict_proba(self._question(text))
        classes = list(model.classes)
        best = max((c for c in classes if c != "none"), key=lambda c: probabilities[classes.index(c)])
        return str(best) if probabilities[classes.index(best)] >= options.referral_probability else None

    def find(self, text: str, options: SafetyOptions | None = None) -> Finding | None:
        """The red criterion ``text`` describes, by ``options.triage_method``, or None."""
        options = options or SafetyOptions()
        question = self._question(text)
        found = None
        if options.triage_method in ("classifier", "either"):
            found = self._crisis(question, options)
        if found is None and options.triage_method in ("prototypes", "either"):
            found = self._nearest(question, options)
        if found is None and options.triage_method in ("classifier", "either"):
            found = self._classified(question, options)
        if found is None:
            return None
        criterion, evidence = found
        if criterion.personal and (not names_someone(text) or told_as_history(text)):
            return None
        return Finding(
            category=criterion.category, sign=criterion.sign, action=criterion.action, by="meaning", evidence=evidence
        )

    def sign(self, text: str, options: SafetyOptions | None = None) -> str | None:
        """The sign of the criterion ``find`` returns, or None."""
        found = self.find(text, options)
        return found.sign if found else None

    def _nearest(self, question: np.ndarray, options: SafetyOptions) -> tuple[Criterion, str] | None:
        labels = np.array(self._labels)
        near = self._vectors @ question
        urgent = np.where(labels != _ORDINARY)[0]
        best = int(urgent[np.argmax(near[urgent])])
        ahead = float(near[best] - np.max(near[labels == _ORDINARY]))
        if near[best] >= options.triage_threshold and ahead >= options.triage_margin:
            return self.red[labels[best]], f'near "{self._texts[best]}" ({near[best]:.2f}, {ahead:+.2f} ahead)'
        return None

    def _classified(self, question: np.ndarray, options: SafetyOptions) -> tuple[Criterion, str] | None:
        urgent = self._probability("urgent", question)
        if urgent < options.triage_probability:
            return None
        return self._nearest_criterion(question), f"classifier: urgent with probability {urgent:.2f}"

    def _crisis(self, question: np.ndarray, options: SafetyOptions) -> tuple[Criterion, str] | None:
        probability = self._probability("crisis", question)
        if probability < options.triage_probability:
            return None
        criterion = next(c for c in self.red if c.action == "crisis")
        return criterion, f"crisis classifier: probability {probability:.2f}"

    def _nearest_criterion(self, question: np.ndarray) -> Criterion:
        """The red criterion whose phrasings are nearest: half the best cosine, half the mean."""
        labels = np.array(self._labels)
        near = self._vectors @ question
        closeness = {
            index: 0.5 * float(near[labels == index].max()) + 0.5 * float(near[labels == index].mean())
            for index in set(self._labels) - {_ORDINARY}
        }
        return self.red[max(closeness, key=closeness.__getitem__)]


__all__ = ["MeaningTriage"]
