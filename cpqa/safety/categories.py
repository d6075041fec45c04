"""Triage by symptom category, on the backbone of the UKONS 24-hour triage tool (UK Oncology Nursing Society).

``data/triage.toml`` holds the tool as data: about twenty symptom categories (fever and suspected neutropenic sepsis,
breathlessness, chest pain, bleeding, diarrhoea, constipation, nausea and vomiting, a sore mouth, eating and drinking,
urinary problems, neurological change with spinal cord compression, confusion, pain, skin and drip sites, fatigue,
mood and distress, collapse, allergic reactions, clots), each with its criteria: the sign a message names, the action
(a crisis line, the emergency number, the 24-hour oncology line now, or the care team today), the rules, the lay
phrasings and the clinical words. Everything that screens a question reads this one model: the instant rules
(``TriageBook.rules``), triage by meaning (``cpqa.safety.meaning``, whose prototypes are the criteria's phrasings) and
the language model's pass (``cpqa.safety.model_triage``, whose prompt lists the criteria). What fired is a
``Finding``, kept in the screened question and the trace.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Literal

from pydantic import BaseModel

Action = Literal["crisis", "emergency", "call_now", "soon"]
ACTIONS: tuple[str, ...] = ("crisis", "emergency", "call_now", "soon")  # most severe first
RED: frozenset[str] = frozenset({"crisis", "emergency", "call_now"})  # UKONS red: act now
Screen = Literal["rules", "meaning", "model"]

# Someone's own situation (a person or a moment is named), not a general question: "my chest hurts", "coughing up blood
# right now", but not "Does lung cancer cause chest pain?".
_SOMEONE = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|our|us|he|she|his|her|him|they|their|husband|wife|son|daughter|"
    r"mother|father|mom|mum|dad|partner|friend|baby|child|grandma|grandad|grandpa)\b|\bright\s+now\b|\bnow\b|"
    r"\btoday\b|\btonight\b|\byesterday\b|\blast\s+night\b|\bthis\s+(?:morning|evening|afternoon|week)\b|\bsince\b|"
    r"\bago\b|\bcurrently\b|\bfor\s+the\s+(?:last|past)\b",
    re.IGNORECASE,
)


# A red sign told as history ("I had a seizure last year; can I drive?") is not happening now, unless the message says
# something is happening now too.
_LONG_AGO = re.compile(
    r"\b(?:(?:a|one|two|three|four|five|six|several|many|a few|few|\d+)\s+(?:years?|months?)\s+ago|"
    r"last\s+(?:year|month|spring|summer|autumn|fall|winter)|in\s+(?:19|20)\d\d|used\s+to|history\s+of|"
    r"when\s+i\s+was|years?\s+ago)\b",
    re.IGNORECASE,
)
_NOW = re.compile(
    r"\b(?:now|today|tonight|this\s+(?:morning|evening|afternoon|week)|currently|still|keeps?|right\s+now|at\s+the\s+"
    r"moment|since|started|starting|yesterday|last\s+night|hours?)\b",
    re.IGNORECASE,
)


def told_as_history(text: str) -> bool:
    """Whether the text tells of a sign long past ("last year", "years ago") and of nothing happening now."""
    return _LONG_AGO.search(text) is not None and _NOW.search(text) is None


def names_someone(text: str) -> bool:
    """Whether the text is about someone's own situation (a person or a moment is named), not a general question."""
    return _SOMEONE.search(text) is not None


class Finding(BaseModel):
    """What one screen found: the category and sign of a criterion, its action, and the evidence of what fired."""

    category: str
    sign: str
    action: Action
    by: Screen
    evidence: str = ""  # the words that matched, the nearest prototype and its score, or the model's reason


@dataclass(frozen=True)
class Criterion:
    category: str
    sign: str
    action: Action
    when: tuple[tuple[str, ...], ...]  # any of these lists fires when every group in it occurs
    personal: bool  # fires only when a person or a moment is named
    lay: tuple[str, ...]
    clinical: str

    @property
    def red(self) -> bool:
        return self.action in RED


@dataclass(frozen=True)
class Category:
    id: str
    name: str
    ukons: str
    criteria: tuple[Criterion, ...]


def _pattern(terms: list[str]) -> re.Pattern:
    return re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{t})" for t in terms) + ")", re.IGNORECASE)


class TriageBook:
    """The triage tool as data: categories and their criteria, the term groups the rules combine, the ordinary
    questions and the referral phrasings the meaning screen weighs them against."""

    def __init__(self, data: dict):
        groups: dict[str, list[str]] = dict(data["terms"])
        categories = []
        for raw in data["category"]:
            for name, terms in raw.get("terms", {}).items():
                if name in groups:
                    raise ValueError(f"triage term group {name!r} is defined twice")
                groups[name] = terms
            criteria = tuple(
                Criterion(
                    category=raw["id"],
                    sign=c["sign"],
                    action=c["action"],
                    when=tuple(tuple(group) for group in c["when"]),
                    personal=c.get("personal", True),
                    lay=tuple(c.get("lay", ())),
                    clinical=c.get("clinical", ""),
                )
                for c in raw["criteria"]
            )
            categories.append(Category(id=raw["id"], name=raw["name"], ukons=raw["ukons"], criteria=criteria))
        self.groups = {name: _pattern(terms) for name, terms in groups.items()}
        self.categories: tuple[Category, ...] = tuple(categories)
        self.criteria: tuple[Criterion, ...] = tuple(c for cat in categories for c in cat.criteria)
        self.ordinary: tuple[str, ...] = tuple(data["ordinary"]["texts"])
        self.referrals: dict[str, tuple[str, ...]] = {k: tuple(v["lay"]) for k, v in data["referrals"].items()}
        unknown = {g for c in self.criteria for conj in c.when for g in conj} - set(self.groups)
        if unknown:
            raise ValueError(f"triage criteria name unknown term groups: {sorted(unknown)}")
        bad = {c.action for c in self.criteria} - set(ACTIONS)
        if bad:
            raise ValueError(f"triage criteria have unknown actions: {sorted(bad)}")

    @classmethod
    @lru_cache(maxsize=1)
    def load(cls) -> "TriageBook":
        text = files("cpqa.safety").joinpath("data", "triage.toml").read_text(encoding="utf-8")
        return cls(tomllib.loads(text))

    def category(self, category_id: str) -> Category:
        return next(c for c in self.categories if c.id == category_id)

    def rules(self, text: str) -> list[Finding]:
        """The criteria the instant rules find in ``text``: per category its most severe, most severe first."""
        someone = names_someone(text) and not told_as_history(text)
        best: dict[str, Finding] = {}
        for criterion in self.criteria:
            if criterion.personal and not someone:
                continue
            evidence = self._fires(criterion, text)
            if evidence is None:
                continue
            found = Finding(
                category=criterion.category, sign=criterion.sign, action=criterion.action, by="rules", evidence=evidence
            )
            held = best.get(criterion.category)
            if held is None or ACTIONS.index(found.action) < ACTIONS.index(held.action):
                best[criterion.category] = found
        return most_severe_first(best.values())

    def _fires(self, criterion: Criterion, text: str) -> str | None:
        """The matched words of the first of ``criterion``'s rules that fires, or None."""
        for conjunction in criterion.when:
            matches = [self.groups[group].search(text) for group in conjunction]
            if all(matches):
                return " + ".join(m.group(0) for m in matches if m)
        return None


def most_severe_first(findings) -> list[Finding]:
    return sorted(findings, key=lambda f: ACTIONS.index(f.action))


__all__ = [
    "ACTIONS",
    "RED",
    "Action",
    "Category",
    "Criterion",
    "Finding",
    "TriageBook",
    "most_severe_first",
    "names_someone",
    "told_as_history",
]
