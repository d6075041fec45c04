"""Checks of a model on the held-out slice of its training data (``fit_data.split_check``), and of its int8 graph
against the float model on the same slice. numpy only."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np

Vectors = Callable[[Sequence[str]], np.ndarray]  # texts -> unit rows
Scores = Callable[[Sequence[tuple[str, str]]], np.ndarray]  # (question, candidate) -> scores


def encoder_texts(check: list[dict[str, Any]], texts: dict[str, str]) -> tuple[list[str], list[str]]:
    """(anchor ids, document ids: positives and first hard negatives) of the check examples, each once."""
    anchors = sorted({e["a"] for e in check})
    docs = sorted({e["p"] for e in check} | {e["n"][0] for e in check if e.get("n")})
    return anchors, docs


def encoder_metrics(check: list[dict[str, Any]], texts: dict[str, str], vectors: Vectors) -> dict[str, Any]:
    """``pair_accuracy``: the positive nearer the anchor than its first hard negative; ``mrr@10``: the positive's
    rank among every check document (the anchor's other positives left out)."""
    if not check:
        return {}
    anchors, docs = encoder_texts(check, texts)
    a = vectors([texts[i] for i in anchors])
    d = vectors([texts[i] for i in docs])
    arow = {k: i for i, k in enumerate(anchors)}
    drow = {k: i for i, k in enumerate(docs)}
    similarity = a @ d.T
    positives: dict[str, set[str]] = defaultdict(set)
    for e in check:
        positives[e["a"]].add(e["p"])
    wins, pairs, reciprocal = 0, 0, []
    for e in check:
        row = similarity[arow[e["a"]]]
        own = row[drow[e["p"]]]
        if e.get("n"):
            pairs += 1
            wins += int(own > row[drow[e["n"][0]]])
        others = [row[drow[k]] for k in docs if k not in positives[e["a"]]]
        rank = 1 + sum(1 for s in others if s >= own)
        reciprocal.append(1.0 / rank if rank <= 10 else 0.0)
    return {
        "examples": len(check),
        "documents": len(docs),
        "pair_accuracy": round(wins / pairs, 4) if pairs else None,
        "mrr@10": round(float(np.mean(reciprocal)), 4),
    }


def _auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return None
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return round(float(greater / (len(pos) * len(neg))), 4)


def chooser_pairs(check: list[dict[str, Any]], texts: dict[str, str]) -> list[tuple[str, str]]:
    return [(texts[e["q"]], texts[e["c"]]) for e in check]


def chooser_metrics(check: list[dict[str, Any]], scores: np.ndarray) -> dict[str, Any]:
    """``auc`` over every check pair; ``top1``: the best-scored candidate of a question is a positive (questions
    with a positive and a negative)."""
    if not check:
        return {}
    labels = np.array([int(e["y"]) for e in check])
    by_question: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(check):
        by_question[e["q"]].append(i)
    mixed = [rows for rows in by_question.values() if len({labels[r] for r in rows}) == 2]
    top1 = [labels[max(rows, key=lambda r: scores[r])] for rows in mixed]
    return {
        "pairs": len(check),
        "questions": len(by_question),
        "auc": _auc(np.asarray(scores), labels),
        "top1": round(float(np.mean(top1)), 4) if top1 else None,
    }


def _ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(len(values))
    return ranks


def vector_agreement(reference: np.ndarray, candidate: np.ndarray) -> dict[str, float]:
    """Cosine of each int8 vector to the float one (rows are unit length)."""
    cosine = (reference * candidate).sum(1)
    return {"cosine_mean": round(float(cosine.mean()), 5), "cosine_min": round(float(cosine.min()), 5)}


def score_agreement(check: list[dict[str, Any]], reference: np.ndarray, candidate: np.ndarray) -> dict[str, Any]:
    """Pearson and Spearman correlation of the scores, and the share of questions whose best candidate is the
    same under both."""
    if len(reference) < 2:
        return {}
    by_question: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(check):
        by_question[e["q"]].append(i)
    same = [
        max(rows, key=lambda r: reference[r]) == max(rows, key=lambda r: candidate[r]) for rows in by_question.values()
    ]
    return {
        "pearson": round(float(np.corrcoef(reference, candidate)[0, 1]), 5),
        "spearman": round(float(np.corrcoef(_ranks(reference), _ranks(candidate))[0, 1]), 5),
        "same_top1": round(float(np.mean(same)), 4),
        "max_abs_diff": round(float(np.abs(reference - candidate).max()), 4),
    }
