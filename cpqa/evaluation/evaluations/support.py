"""Setting the answer's support threshold on BioASQ dev data (``cpqa eval support``).

A supported pair is an ideal-answer sentence (written by BioASQ's annotators from the gold snippets) with the gold
snippets of one of its question's documents; an unsupported pair is the same sentence with the gold snippets of
the documents of the most similar other question (a hard negative: same field, different facts). Each pair is
scored by the product's own ``SupportChecker``; the threshold with the best balanced accuracy on a seeded tuning
half is reported with its accuracy on the held-out half."""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from cpqa.answer.citations import sentences_of
from cpqa.answer.verify import SupportChecker
from cpqa.evaluation.data.bioasq_gold import GoldQuestion
from cpqa.models.encoders import unit_rows
from cpqa.types import Passage

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.2, 0.86, 0.025))


def _documents(question: GoldQuestion) -> list[Passage]:
    """One passage per gold document: its snippets, in order."""
    by_pmid: dict[str, list[str]] = {}
    for snippet in question.snippets:
        by_pmid.setdefault(snippet.pmid or "", []).append(snippet.text)
    return [
        Passage(node_id=f"{question.id}:{pmid}", pmid=pmid, text=" ".join(texts)) for pmid, texts in by_pmid.items()
    ]


def _claims(question: GoldQuestion) -> list[str]:
    """The ideal answer's sentences that make a claim (four words or more; "Yes." is none)."""
    return [s for answer in question.ideal[:1] for s in sentences_of(" ".join(answer.split())) if len(s.split()) >= 4]


def support_pairs(questions: Sequence[GoldQuestion], checker: SupportChecker) -> list[dict]:
    """Scored pairs: {question, claim, supported (gold), score}."""
    usable = [q for q in questions if _claims(q) and q.snippets]
    if len(usable) < 2:
        raise ValueError("support calibration needs at least two questions with ideal answers and snippets")
    if checker.encoder is not None:
        vectors = unit_rows(checker.encoder.encode([q.question for q in usable]))
        similar = vectors @ vectors.T
        np.fill_diagonal(similar, -np.inf)
        nearest = similar.argmax(axis=1)
    else:
        nearest = np.roll(np.arange(len(usable)), 1)
    pairs = []
    for i, question in enumerate(usable):
        own, other = _documents(question), _documents(usable[int(nearest[i])])
        for claim in _claims(question):
            for supported, documents in ((True, own), (False, other)):
                score = max(checker.score(claim, [d]) for d in documents)
                pairs.append({"question": question.id, "claim": claim, "supported": supported, "score": score})
    return pairs


def _rates(pairs: Sequence[dict], threshold: float) -> dict[str, float]:
    positives = [p for p in pairs if p["supported"]]
    negatives = [p for p in pairs if not p["supported"]]
    kept = sum(p["score"] >= threshold for p in positives) / max(len(positives), 1)
    removed = sum(p["score"] < threshold for p in negatives) / max(len(negatives), 1)
    return {
        "threshold": threshold,
        "supported_kept": round(kept, 4),
        "unsupported_removed": round(removed, 4),
        "balanced_accuracy": round((kept + removed) / 2, 4),
    }


def calibrate(pairs: Sequence[dict], seed: int = 13) -> dict:
    """The best threshold on a seeded half of the questions, and how it does on the other half."""
    ids = sorted({p["question"] for p in pairs})
    random.Random(seed).shuffle(ids)
    tuning_ids = set(ids[: len(ids) // 2])
    tuning = [p for p in pairs if p["question"] in tuning_ids]
    held_out = [p for p in pairs if p["question"] not in tuning_ids]
    sweep = [_rates(tuning, t) for t in THRESHOLDS]
    best = max(sweep, key=lambda r: (r["balanced_accuracy"], -abs(r["threshold"] - 0.5)))
    return {
        "questions": len(ids),
        "pairs": len(pairs),
        "seed": seed,
        "tuning_questions": len(tuning_ids),
        "chosen": best,
        "held_out": _rates(held_out, best["threshold"]),
        "sweep": sweep,
    }
