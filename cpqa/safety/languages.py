"""Questions in other languages: which language (lingua), and, without a language model, what the asker is told in
it: the refusal, and an urgent or crisis message first when the screen can read a red sign in their words
(``data/languages.toml``: 19 languages, among them the 15 most spoken after English). With a language model
configured, the model's triage pass translates the search intent instead (``cpqa.safety.model_triage``) and the
answer is written in the asker's language.

The offline screen is a red-sign lexicon per language, keyed by the UKONS criteria of ``data/triage.toml``: a finding
names the criterion's category, its English sign and its action, as the English rules do. A red sign counts when a
person or a moment is named and its clause is not told as long past ("two years ago") or supposed ("if I get a
fever"); a crisis sign counts always."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from cpqa.safety.categories import ACTIONS, Criterion, Finding, TriageBook, most_severe_first

# Where a clause ends, in any script: sentence and clause punctuation (Latin, CJK, Arabic, Devanagari), not a decimal.
_BREAK = re.compile(r"[.,](?!\d)|[;:!?¿¡()\n。，；：！？、،؛؟।]")
# Digits of any script as ASCII; and letters people write without their marks, or in a neighbouring script's form
# (Arabic and Persian yeh and kaf, Urdu heh); both applied to text and lexicon alike.
_DIGITS = str.maketrans({chr(base + i): str(i) for base in (0x660, 0x6F0, 0x966, 0x9E6) for i in range(10)})
_PLAIN = str.maketrans(
    {"ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "ß": "ss", "ي": "ی", "ى": "ی", "ك": "ک", "ہ": "ه", "ھ": "ه"}
)


def fold(text: str, marks: bool = True) -> str:
    """``text`` as the lexicon reads it: whitespace collapsed and, with ``marks``, accents and vowel marks dropped
    ("não" and "nao" alike; Arabic script without its diacritics)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).translate(_DIGITS)
    if not marks:
        return text
    bare = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) not in {"Mn", "Cf"})
    return unicodedata.normalize("NFC", bare).translate(_PLAIN)


@dataclass(frozen=True)
class Sign:
    """One UKONS criterion as a language says it: any of ``patterns`` fires when all its parts occur."""

    criterion: Criterion
    patterns: tuple[tuple[re.Pattern, ...], ...]


@dataclass(frozen=True)
class Language:
    name: str  # English name, as the model's triage names it too
    lingua: str
    only_english: str
    urgent: str
    crisis: str
    signs: tuple[Sign, ...]
    someone: re.Pattern  # a person or a moment named: I, my, now, today, a first-person verb
    clause: re.Pattern  # words that open a new clause: and, but, now, today
    past: re.Pattern  # a sign told as long past: two years ago, last year
    supposed: re.Pattern  # a sign supposed, not happening: if, in case
    marks: bool = True  # read with accents and vowel marks dropped (``fold``)

    def findings(self, text: str) -> list[Finding]:
        """The red signs read in ``text``, as the English rules report them: per category the most severe criterion
        that fires (its category, English sign and action, and the words that matched), most severe first."""
        text = fold(text, self.marks)
        named = self.someone.search(text) is not None
        found: dict[str, Finding] = {}
        for sign in self.signs:  # most severe first
            c = sign.criterion
            if c.category in found or c.personal and not named:
                continue
            words = next(filter(None, (self._fires(parts, text, c.personal) for parts in sign.patterns)), None)
            if words:
                found[c.category] = Finding(
                    category=c.category, sign=c.sign, action=c.action, by="rules", evidence=words
                )
        return most_severe_first(found.values())

    def _fires(self, parts: tuple[re.Pattern, ...], text: str, personal: bool) -> str | None:
        """The words that matched, when every part occurs and the first (the symptom) is said of now somewhere."""
        rest = [m for m in (p.search(text) for p in parts[1:]) if m]
        now = (m for m in parts[0].finditer(text) if not (personal and self.not_now(text, m.start())))
        first = next(now, None) if len(rest) == len(parts) - 1 else None
        return None if first is None else " + ".join(m.group(0) for m in (first, *rest))

    def not_now(self, text: str, at: int) -> bool:
        """Whether the clause of the words at ``at`` tells of them as long past, or supposes them ("if")."""
        left = max((m.end() for m in _BREAK.finditer(text, 0, at)), default=0)
        right = next((m.start() for m in _BREAK.finditer(text, at)), len(text))
        for m in self.clause.finditer(text, left, right):
            if m.start() < at:
                left = m.start()
            elif m.start() > at:
                right = m.start()
                break
        return self.past.search(text, left, right) is not None or self.supposed.search(text, left, right) is not None


def _regex(patterns: list[str], marks: bool) -> re.Pattern:
    """One pattern for a list of alternatives (a list that is empty never matches)."""
    return re.compile("|".join(f"(?:{fold(p, marks)})" for p in patterns) or r"(?!)", re.IGNORECASE)


def _criteria(data: dict) -> dict[str, Criterion]:
    """The lexicon's keys, each the triage.toml criterion it stands for (its category id and exact sign)."""
    book = TriageBook.load().criteria
    keyed = {}
    for key, (category, sign) in data["criteria"].items():
        match = [c for c in book if c.category == category and c.sign == sign]
        if not match:
            raise ValueError(f"languages.toml: {key!r} names no triage.toml criterion ({category}: {sign!r})")
        keyed[key] = match[0]
    return keyed


def _language(name: str, raw: dict, criteria: dict[str, Criterion]) -> Language:
    marks = raw.get("marks", True)
    unknown = set(raw["signs"]) - set(criteria)
    if unknown:
        raise ValueError(f"languages.toml: {name} has signs for unknown criteria {sorted(unknown)}")
    signs = tuple(
        Sign(
            criterion=criteria[key],
            patterns=tuple(
                tuple(re.compile(fold(part.strip(), marks), re.IGNORECASE) for part in sign.split("&&"))
                for sign in raw["signs"][key]
            ),
        )
        for key in sorted(criteria, key=lambda k: ACTIONS.index(criteria[k].action))
        if raw["signs"].get(key)
    )
    return Language(
        name=name,
        lingua=raw["lingua"],
        only_english=raw["only_english"],
        urgent=raw["urgent"],
        crisis=raw["crisis"],
        signs=signs,
        someone=_regex(raw["someone"], marks),
        clause=_regex(raw.get("clause", []), marks),
        past=_regex(raw.get("past", []), marks),
        supposed=_regex(raw.get("supposed", []), marks),
        marks=marks,
    )


@lru_cache(maxsize=1)
def languages() -> dict[str, Language]:
    data = tomllib.loads(files("cpqa.safety").joinpath("data", "languages.toml").read_text(encoding="utf-8"))
    criteria = _criteria(data)
    return {name: _language(name, raw, criteria) for name, raw in data["languages"].items()}


@lru_cache(maxsize=1)
def _detector():
    """lingua's detector over English and the table's languages (n-gram models, loaded once)."""
    from lingua import Language as Lingua, LanguageDetectorBuilder

    names = {"ENGLISH", *(language.lingua for language in languages().values())}
    return LanguageDetectorBuilder.from_languages(*(getattr(Lingua, n) for n in sorted(names))).build()


def detect(text: str) -> Language | None:
    """The table's language ``text`` is written in, or None (English, or one the table lacks)."""
    best = _detector().detect_language_of(text)
    if best is None:
        return None
    return next((language for language in languages().values() if language.lingua == best.name), None)


def prepare() -> None:
    _detector()


__all__ = ["Language", "Sign", "detect", "fold", "languages", "prepare"]
