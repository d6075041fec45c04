"""Questions in other languages: which language (lingua), and, without a language model, what the asker is told in
it: the refusal, and an urgent or crisis message first when the screen can read an urgent sign in their words
(``data/languages.toml``: 19 languages, among them the 15 most spoken after English). With a language model
configured, the model's triage pass translates the search intent instead (``cpqa.safety.model_triage``) and the
answer is written in the asker's language."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from cpqa.safety.categories import Finding


@dataclass(frozen=True)
class Language:
    name: str  # English name, as the model's triage names it too
    lingua: str
    only_english: str
    urgent: str
    crisis: str
    signs: tuple[tuple[re.Pattern, ...], ...]  # each fires when all its parts occur, and someone is named
    crisis_signs: tuple[re.Pattern, ...]
    someone: tuple[re.Pattern, ...]  # a person or a moment named: I, my, now, today

    def findings(self, text: str) -> list[Finding]:
        """The urgent signs read in ``text``: a crisis, or a red sign (named by the words that matched)."""
        found = [
            Finding(
                category="mood",
                sign="thoughts of suicide or self-harm",
                action="crisis",
                by="rules",
                evidence=m.group(0),
            )
            for m in (p.search(text) for p in self.crisis_signs)
            if m
        ][:1]
        if not any(p.search(text) for p in self.someone):
            return found
        for parts in self.signs:
            matches = [p.search(text) for p in parts]
            if all(matches):
                words = " + ".join(m.group(0) for m in matches if m)
                found.append(
                    Finding(
                        category="other",
                        sign=f"an urgent sign ({words})",
                        action="emergency",
                        by="rules",
                        evidence=words,
                    )
                )
                break
        return found


def _compile(sign: str) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(part.strip(), re.IGNORECASE) for part in sign.split("&&"))


@lru_cache(maxsize=1)
def languages() -> dict[str, Language]:
    data = tomllib.loads(files("cpqa.safety").joinpath("data", "languages.toml").read_text(encoding="utf-8"))
    return {
        name: Language(
            name=name,
            lingua=raw["lingua"],
            only_english=raw["only_english"],
            urgent=raw["urgent"],
            crisis=raw["crisis"],
            signs=tuple(_compile(s) for s in raw["signs"]),
            crisis_signs=tuple(p for s in raw["crisis_signs"] for p in _compile(s)),
            someone=tuple(re.compile(p, re.IGNORECASE) for p in raw["someone"]),
        )
        for name, raw in data["languages"].items()
    }


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


__all__ = ["Language", "detect", "languages", "prepare"]
