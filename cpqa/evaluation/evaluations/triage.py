"""Triage by category, measured (``cpqa eval safety``; docs/results.md, "Triage that generalises (issue 30)").

A phrasing set is JSON with ``urgent`` (a list, or phrasings per category id of the triage tool), ``dosing``,
``decision`` and ``ordinary``, and optionally ``interaction`` and ``languages`` (``{language, text, urgent}`` items).
The product's own screen runs on every phrasing (``check_question``, with the meaning screen and a language model's
pass when given). Reported, per category and overall:
- recall: the category's urgent phrasings that get an urgent message, and those whose message names that category;
- precision: of the phrasings given an urgent message (naming the category), the share that are urgent (of it);
- crisis: the mood category's phrasings that get the crisis message first;
- referrals: dosing, interaction and decision recall, and precision over every phrasing referred;
- false alarms on ordinary questions, near misses included.
``cross_validate`` measures the meaning screen's methods on the triage tool's own phrasings, a fold held out at a time.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

from cpqa.options import SafetyOptions
from cpqa.safety.categories import RED, TriageBook
from cpqa.safety.screen import Screen as ProductScreen
from cpqa.safety.screening import Screened

Screen = Callable[[str], Screened]


def _ratio(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def screen_with(meaning=None, options: SafetyOptions | None = None, model=None) -> Screen:
    """The product's screen: the rules, then by meaning (``MeaningTriage``), then a language model's pass
    (``ModelTriage``) when given."""

    product = ProductScreen(meaning=meaning)
    safety = options or SafetyOptions()

    def screen(text: str) -> Screened:
        screened = product.check(text, safety)
        if model is not None:
            screened = model.raised(screened)
        return screened

    return screen


def _red_categories(screened: Screened) -> set[str]:
    return {f.category for f in screened.triage if f.action in RED}


def _referred(screened: Screened) -> set[str]:
    """The referrals shown (``first_messages``: the decision referral gives way to the dosing one)."""
    kinds = {"dosing": screened.personal_dosing, "interaction": screened.personal_interaction}
    kinds["decision"] = screened.personal_decision and not screened.personal_dosing
    return {kind for kind, raised in kinds.items() if raised}


def triage_scores(path: Path, screen: Screen) -> dict:
    """The set at ``path`` through ``screen``: per category and overall (see the module docstring)."""
    sets = json.loads(Path(path).read_text(encoding="utf-8"))
    urgent = sets.get("urgent")
    by_category = urgent if isinstance(urgent, dict) else {"any": urgent or []}
    labelled: list[tuple[str, str]] = [(f"urgent:{c}", t) for c, texts in by_category.items() for t in texts]
    for part in ("dosing", "interaction", "decision", "ordinary"):
        labelled += [(part, t) for t in sets.get(part) or []]
    if not labelled:
        raise ValueError(f"{path}: no phrasings")
    rows = [(label, text, screen(text)) for label, text in labelled]
    categories: dict[str, dict] = {}
    for category, texts in by_category.items():
        mine = [s for label, _, s in rows if label == f"urgent:{category}"]
        raised = [(label, s) for label, _, s in rows if category in _red_categories(s)]
        categories[category] = {
            "phrasings": len(texts),
            "recall": _ratio(sum(s.urgent is not None for s in mine), len(mine)),
            "recall_category": _ratio(sum(category in _red_categories(s) for s in mine), len(mine)),
            "precision_category": _ratio(sum(label == f"urgent:{category}" for label, _ in raised), len(raised)),
        }
    is_urgent = [label.startswith("urgent:") for label, _, _ in rows]
    flagged = [s.urgent is not None for _, _, s in rows]
    ordinary = [s for label, _, s in rows if label == "ordinary"]
    result = {
        "urgent": {
            "recall": _ratio(sum(f for f, u in zip(flagged, is_urgent) if u), sum(is_urgent)),
            "precision": _ratio(sum(f and u for f, u in zip(flagged, is_urgent)), sum(flagged)),
            "false_alarms_on_ordinary": _ratio(sum(s.urgent is not None for s in ordinary), len(ordinary)),
            "misses": [t for (label, t, s) in rows if label.startswith("urgent:") and s.urgent is None],
            "false_alarms": [t for (label, t, s) in rows if not label.startswith("urgent:") and s.urgent is not None],
        },
        "categories": categories,
        "by_screen": dict(Counter(f.by for _, _, s in rows for f in s.triage if f.action in RED)),
    }
    if "mood" in by_category:
        mood = [s for label, _, s in rows if label == "urgent:mood"]
        result["crisis_recall"] = _ratio(sum(s.crisis for s in mood), len(mood))
    referrals: dict[str, dict] = {}
    for kind in ("dosing", "interaction", "decision"):
        mine = [s for label, _, s in rows if label == kind]
        referred = [label for label, _, s in rows if kind in _referred(s)]
        referrals[kind] = {
            "phrasings": len(mine),
            "recall": _ratio(sum(kind in _referred(s) for s in mine), len(mine)),
            "precision": _ratio(sum(label == kind for label in referred), len(referred)),
            "misses": [t for label, t, s in rows if label == kind and kind not in _referred(s)],
        }
    asked = [s for label, _, s in rows if label in ("dosing", "interaction", "decision")]
    any_referral = [label for label, _, s in rows if _referred(s)]
    referrals["any"] = {
        "recall": _ratio(sum(bool(_referred(s)) for s in asked), len(asked)),
        "precision": _ratio(
            sum(label in ("dosing", "interaction", "decision") for label in any_referral), len(any_referral)
        ),
    }
    result["referrals"] = referrals
    return result


def cross_validate(encoder, folds: int = 5, seed: int = 13, options: SafetyOptions | None = None) -> dict:
    """The meaning screen's methods on the triage tool's own phrasings, ``folds`` folds, each held out in turn: the
    red criteria's phrasings (urgent, with their category) against the ordinary, amber and referral ones."""
    from cpqa.safety.meaning import MeaningTriage

    book = TriageBook.load()
    items: list[tuple[str, str | None]] = [(t, c.category) for c in book.criteria if c.red for t in c.lay]
    items += [(t, None) for t in book.ordinary]
    items += [(t, None) for c in book.criteria if not c.red for t in c.lay]
    items += [(t, None) for texts in book.referrals.values() for t in texts]
    random.Random(seed).shuffle(items)
    options = options or SafetyOptions()
    methods = ("prototypes", "classifier", "either")
    found: dict[str, list[tuple[str | None, str | None]]] = {m: [] for m in methods}
    kinds = {text: kind for kind, texts in book.referrals.items() for text in texts}
    referred: list[tuple[str | None, str | None]] = []
    for fold in range(folds):
        held = items[fold::folds]
        meaning = MeaningTriage(encoder, book, exclude=[t for t, _ in held])
        for method in methods:
            chosen = options.model_copy(update={"triage_method": method})
            for text, category in held:
                finding = meaning.find(text, chosen)
                found[method].append((category, finding.category if finding else None))
        referred += [(kinds.get(text), meaning.referral(text, options)) for text, _ in held]
    out: dict = {"folds": folds, "phrasings": len(items), "urgent_phrasings": sum(c is not None for _, c in items)}
    for method, pairs in found.items():
        urgent = [(truth, guess) for truth, guess in pairs if truth is not None]
        raised = [(truth, guess) for truth, guess in pairs if guess is not None]
        out[method] = {
            "recall": _ratio(sum(g is not None for _, g in urgent), len(urgent)),
            "precision": _ratio(sum(t is not None for t, _ in raised), len(raised)),
            "category_accuracy": _ratio(sum(t == g for t, g in urgent), len(urgent)),
            "crisis_recall": _ratio(
                sum(g == "mood" for t, g in urgent if t == "mood"), sum(t == "mood" for t, _ in urgent)
            ),
            "crisis_precision": _ratio(
                sum(t == "mood" for t, g in raised if g == "mood"), sum(g == "mood" for _, g in raised)
            ),
        }
    asked = [(t, g) for t, g in referred if t is not None]
    raised = [(t, g) for t, g in referred if g is not None]
    out["referrals_by_meaning"] = {
        "phrasings": len(asked),
        "recall": _ratio(sum(g is not None for _, g in asked), len(asked)),
        "precision": _ratio(sum(t is not None for t, _ in raised), len(raised)),
        "kind_accuracy": _ratio(sum(t == g for t, g in asked), len(asked)),
    }
    return out


def has_english_phrasings(path: Path) -> bool:
    """Whether the set holds English phrasings (``urgent``, the referrals, ``ordinary``), not only ``languages``."""
    sets = json.loads(Path(path).read_text(encoding="utf-8"))
    return any(sets.get(part) for part in ("urgent", "dosing", "interaction", "decision", "ordinary"))


def _language_rows(rows: Sequence[tuple[dict, Screened]]) -> dict:
    urgent = [s for item, s in rows if item["urgent"]]
    ordinary = [s for item, s in rows if not item["urgent"]]
    return {
        "items": len(rows),
        "urgent_recall": _ratio(sum(s.urgent is not None for s in urgent), len(urgent)),
        "ordinary_false_alarms": _ratio(sum(s.urgent is not None for s in ordinary), len(ordinary)),
        "language_named": _ratio(sum(s.language == item["language"] for item, s in rows), len(rows)),
    }


def language_scores(path: Path, screen: Screen) -> dict | None:
    """The set's ``languages`` items: urgent ones that get an urgent message, ordinary ones that do not, and each
    answered in its own language when refused (``Screened.language``); overall, per language and per sign (an
    item's optional ``sign``)."""
    items: Sequence[dict] = json.loads(Path(path).read_text(encoding="utf-8")).get("languages") or []
    if not items:
        return None
    rows = [(item, screen(item["text"])) for item in items]
    languages = sorted({item["language"] for item in items})
    signs = sorted({item["sign"] for item in items if item.get("sign")})
    return {
        **_language_rows(rows),
        "by_language": {name: _language_rows([r for r in rows if r[0]["language"] == name]) for name in languages},
        "urgent_recall_by_sign": {
            sign: _ratio(
                sum(s.urgent is not None for item, s in rows if item.get("sign") == sign),
                sum(item.get("sign") == sign for item, _ in rows),
            )
            for sign in signs
        },
        "urgent_misses": [item["text"] for item, s in rows if item["urgent"] and s.urgent is None],
        "false_alarms": [item["text"] for item, s in rows if not item["urgent"] and s.urgent is not None],
    }


__all__ = ["cross_validate", "has_english_phrasings", "language_scores", "screen_with", "triage_scores"]
