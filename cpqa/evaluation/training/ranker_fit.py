"""Train the answer ranker (``cpqa.answer.ranker``): ``cpqa train ranker --out FILE``.

For every BioASQ factoid and list question of the split (``train``; held-out questions and their gold records are
kept out by ``common.Guard``), the product's own passages (``Miner.passages``) and sentence ranking
(``rank_sentences``), the question's rule (``Addressing`` with the rewrite's concepts, as the answerer binds it) and
the ranker's features of the best ``top`` sentences; a sentence is positive when it names one of the question's exact
answers (as ``cpqa eval answers`` counts it). A logistic regression (scikit-learn, standardised features) is fitted
and written with its provenance: the split, counts, the regularisation, and the share of questions whose first
candidate names an exact answer by similarity and by the ranker, on the split it learned from and (``--check``) on
another split it never saw.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cpqa.evaluation.data.shared import SHARED_DATA

Progress = Callable[[str], None]


def candidates(miner, forbidden: frozenset[str], golds: Sequence, top: int, progress: Progress | None = None) -> list:
    """Per question with an exact answer: (features, labels) of its best ``top`` research sentences, none from a
    ``forbidden`` record."""
    from cpqa.answer.extractive import rank_sentences
    from cpqa.answer.intent import Addressing
    from cpqa.answer.ranker import candidate_features
    from cpqa.evaluation.evaluations.answers import names_exact_answer

    found = []
    options = miner.options.answer
    encoder = miner.pipeline.answerer.encoder
    for number, gold in enumerate(golds, 1):
        passages = [p for p in miner.passages(gold.question) if p.pmid not in forbidden]
        ranked, _ = rank_sentences(gold.question, passages, encoder, options, patient=True)
        if ranked:
            concepts = miner.pipeline.rewriter.rewrite(gold.question).concepts
            addressing = Addressing.of(gold.question, concepts)
            rows = candidate_features(gold.question, ranked, passages, addressing, top)
            labels = np.array(
                [names_exact_answer(s.text, gold.exact, other_forms=False) for s in ranked[:top]], dtype=bool
            )
            found.append((rows, labels))
        if progress and number % 100 == 0:
            progress(f"ranker: {number}/{len(golds)} questions")
    return found


def first_names_answer(groups: Sequence[tuple], score: Callable[[np.ndarray], np.ndarray] | None) -> float:
    """The share of questions whose best candidate (by ``score``; by similarity, the given order, when None) names
    an exact answer."""
    hits = [labels[int(np.argmax(score(rows))) if score else 0] for rows, labels in groups if len(labels)]
    return round(float(np.mean(hits)), 4) if hits else 0.0


def train_ranker(
    home: Path,
    out: Path,
    *,
    split: str = "train",
    check: str | None = "tuning",
    top: int = 16,
    c: float = 0.01,
    shared: Path = SHARED_DATA,
    passages_path: Path | None = None,
    progress: Progress | None = None,
) -> dict:
    """Fit on ``split``'s questions, check on ``check``'s, write the weights and their provenance to ``out``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from cpqa.answer.ranker import FEATURES, AnswerRanker
    from cpqa.evaluation.data.bioasq_gold import bioasq_gold
    from cpqa.evaluation.data.splits import BIOASQ_SPLITS, load_splits
    from cpqa.evaluation.training.common import build_guard
    from cpqa.evaluation.training.mining import Miner

    if split != "train":
        raise ValueError("the ranker learns from the train split only")
    started = time.perf_counter()
    splits = load_splits(BIOASQ_SPLITS)
    guard = build_guard(shared)
    golds = bioasq_gold(shared / "mirage" / "rawdata" / "bioasq", shared / "bioasq" / "dev_questions.jsonl")
    train = [g for g in golds if g.id in guard.train_ids and g.exact]
    held = [g for g in golds if check and g.id in splits[check] and g.exact]
    with Miner(home, passages_path) as miner:
        learned = candidates(miner, guard.forbidden_records, train, top, progress)
        checked = candidates(miner, frozenset(), held, top, progress) if held else []  # as the product meets them
    if not learned:
        raise ValueError(f"no {split}-split question with an exact answer found sentences in {home}")
    rows = np.vstack([r for r, _ in learned])
    labels = np.concatenate([y for _, y in learned])
    scaler = StandardScaler().fit(rows)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=c, max_iter=5000).fit((rows - scaler.mean_) / scale, labels)
    ranker = AnswerRanker(scaler.mean_, scale, model.coef_[0], model.intercept_[0])
    manifest = {
        "features": list(FEATURES),
        "mean": [round(float(x), 6) for x in scaler.mean_],
        "scale": [round(float(x), 6) for x in scale],
        "weights": [round(float(x), 6) for x in model.coef_[0]],
        "bias": round(float(model.intercept_[0]), 6),
        "provenance": {
            "command": f"cpqa train ranker --out {out.name} --top {top} --c {c}",
            "home": str(home),
            "learned_from": f"BioASQ {split} split, factoid and list questions with retrieved sentences",
            "questions": len(learned),
            "candidates": int(len(labels)),
            "positives": int(labels.sum()),
            "top": top,
            "regularisation_c": c,
            "first_candidate_names_an_exact_answer": {
                name: {
                    "questions": len(groups),
                    "similarity": first_names_answer(groups, None),
                    "ranker": first_names_answer(groups, ranker.predict),
                }
                for name, groups in ((split, learned), (check, checked))
                if name and groups
            },
            "seconds": round(time.perf_counter() - started, 1),
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
