"""Precision and recall of the safety screens on phrasing sets (``cpqa eval safety``): JSON files with the lists
``urgent``, ``dosing``, ``decision`` and ``ordinary`` (``tests/data/safety_phrasings*.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from cpqa.safety.screening import check_question

CATEGORIES = ("urgent", "dosing", "decision", "ordinary")


def phrasing_scores(path: Path, meaning=None) -> dict[str, dict[str, float]]:
    """Per screen (urgent, dosing, decision): precision over every question it flags and recall over its own set; a
    dosing question flagged as a personal decision counts as a correct referral (the dosing referral is shown).
    ``meaning``: a ``MeaningTriage`` beside the rules."""
    sets = json.loads(Path(path).read_text(encoding="utf-8"))
    missing = [c for c in CATEGORIES if not isinstance(sets.get(c), list)]
    if missing:
        raise ValueError(f"{path}: no list of {', '.join(missing)} phrasings")
    screened = {cat: [check_question(q, meaning) for q in sets[cat]] for cat in CATEGORIES}
    screens = {
        "urgent": lambda s: s.urgent is not None,
        "dosing": lambda s: s.personal_dosing,
        "decision": lambda s: s.personal_decision and not s.personal_dosing,
    }
    out = {}
    for screen, flagged in screens.items():
        hits = sum(flagged(s) for s in screened[screen])
        raised = sum(flagged(s) for cat in screened for s in screened[cat])
        out[screen] = {
            "precision": round(hits / raised, 4) if raised else 1.0,
            "recall": round(hits / len(screened[screen]), 4) if screened[screen] else 1.0,
        }
    return out
