"""Classification metrics for multiple-choice answers: accuracy and macro precision, recall and F1.

Macro averages run over the labels that occur in the gold answers or in the predictions (scikit-learn's
default); a class never predicted has precision 0, a class never in the gold has recall 0. A missing
prediction (``None``: the answer could not be parsed, or the answerer abstained) counts as wrong and belongs
to no class, so it lowers recall without adding to any class's precision.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel
from sklearn.metrics import accuracy_score, precision_recall_fscore_support


class ClassificationScores(BaseModel):
    n: int
    accuracy: float
    precision: float
    recall: float
    f1: float


_NONE = "\x00no answer"  # a missing prediction: wrong, and no class's prediction


def _labels(predicted: Sequence[str | None]) -> list[str]:
    return [_NONE if p is None else p for p in predicted]


def accuracy(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    _check(gold, predicted)
    return float(accuracy_score(list(gold), _labels(predicted))) if gold else 0.0


def macro_prf(gold: Sequence[str], predicted: Sequence[str | None]) -> tuple[float, float, float]:
    """Macro-averaged (precision, recall, F1) by scikit-learn over the labels in the gold or the predictions; a
    class's F1 is 0 when its precision + recall is 0."""
    _check(gold, predicted)
    labels = sorted(set(gold) | {p for p in predicted if p is not None})
    if not labels:
        return 0.0, 0.0, 0.0
    precision, recall, f1, _ = precision_recall_fscore_support(
        list(gold), _labels(predicted), labels=labels, average="macro", zero_division=0
    )
    return float(precision), float(recall), float(f1)


def score(gold: Sequence[str], predicted: Sequence[str | None]) -> ClassificationScores:
    precision, recall, f1 = macro_prf(gold, predicted)
    return ClassificationScores(
        n=len(gold), accuracy=accuracy(gold, predicted), precision=precision, recall=recall, f1=f1
    )


def average(scores: Sequence[ClassificationScores]) -> ClassificationScores:
    """Unweighted mean over datasets (the paper's "Average" column); n is the total. Empty datasets are left out."""
    present = [s for s in scores if s.n]
    if not present:
        return ClassificationScores(n=0, accuracy=0.0, precision=0.0, recall=0.0, f1=0.0)
    k = len(present)
    return ClassificationScores(
        n=sum(s.n for s in present),
        accuracy=sum(s.accuracy for s in present) / k,
        precision=sum(s.precision for s in present) / k,
        recall=sum(s.recall for s in present) / k,
        f1=sum(s.f1 for s in present) / k,
    )


def _check(gold: Sequence[str], predicted: Sequence[str | None]) -> None:
    if len(gold) != len(predicted):
        raise ValueError(f"gold and predicted differ in length ({len(gold)} vs {len(predicted)})")
